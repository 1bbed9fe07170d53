use accesskit::Role;
use reprise_models::{ActionEvent, ElementIdentity, EventName, Rect, WindowIdentity};

use super::*;

fn field(role: Role, label: &str) -> ElementIdentity {
    let window = WindowIdentity {
        role: Role::Dialog,
        name: Some("Log in".into()),
    };
    let rect = Rect::new(10, 10, 100, 20);
    ElementIdentity {
        band: vec![label.into()],
        ..ElementIdentity::new("zenity", window, role, None, rect)
    }
}

fn key(name: EventName, t: f64, key: &str) -> ActionEvent {
    let mut event = ActionEvent::key(name, t, key);
    event.key_vk = Some(match key.chars().count() {
        1 => key.chars().next().unwrap() as u32,
        _ => 1000 + key.len() as u32,
    });
    event
}

fn press_on(t: f64, element: Option<ElementIdentity>) -> ActionEvent {
    let mut event = ActionEvent::new(EventName::Click, t);
    event.mouse_pressed = Some(true);
    event.mouse_x = Some(20.0);
    event.mouse_y = Some(20.0);
    event.element = element.map(Box::new);
    event
}

/// Types `keys` (a press and a release each) from `t`.
fn typed(scrubber: &mut Scrubber, t: f64, keys: &[&str]) -> Vec<ActionEvent> {
    let mut out = Vec::new();
    for (idx, k) in keys.iter().enumerate() {
        let at = t + idx as f64 * 0.1;
        out.extend(scrubber.scrub(key(EventName::Press, at, k), None));
        out.extend(scrubber.scrub(key(EventName::Release, at + 0.05, k), None));
    }
    out
}

fn texts(events: &[ActionEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|event| event.name == EventName::Press)
        .map(|event| event.derived_text().unwrap_or_default())
        .collect()
}

fn nothing_of_the_key_is_left(events: &[ActionEvent], secret: &str) {
    let json = serde_json::to_string(events).unwrap();
    assert!(!json.contains(secret), "{secret:?} is in {json}");
}

#[test]
fn keys_typed_into_a_password_field_keep_only_their_placeholder() {
    let mut scrubber = Scrubber::new(SecretRules::default());
    let press = scrubber.scrub(
        press_on(0.0, Some(field(Role::PasswordInput, "Password:"))),
        None,
    );
    assert_eq!(press.len(), 1);
    let out = typed(&mut scrubber, 1.0, &["h", "u", "n", "t", "enter"]);
    assert_eq!(
        texts(&out),
        [
            "{password}",
            "{password}",
            "{password}",
            "{password}",
            "<enter>"
        ]
    );
    let secret: Vec<&ActionEvent> = out.iter().filter(|event| event.secret.is_some()).collect();
    assert_eq!(secret.len(), 8, "presses and releases alike");
    assert!(secret.iter().all(|event| event.key_vk.is_none()
        && event.key_char.is_none()
        && event.key_name.is_none()));
    nothing_of_the_key_is_left(&out[..8], "\"h\"");
    assert_eq!(scrubber.scrubbed, 8);
    // Timing stays.
    assert_eq!(out[2].timestamp, 1.1);
}

#[test]
fn a_text_field_keeps_its_keys_and_shift_tab_out_of_a_password_keeps_its_shift() {
    let mut scrubber = Scrubber::new(SecretRules::default());
    scrubber.scrub(
        press_on(0.0, Some(field(Role::TextInput, "User name:"))),
        None,
    );
    assert_eq!(texts(&typed(&mut scrubber, 1.0, &["a", "l"])), ["a", "l"]);
    scrubber.scrub(
        press_on(2.0, Some(field(Role::PasswordInput, "Password:"))),
        None,
    );
    let mut out = scrubber.scrub(key(EventName::Press, 3.0, "shift"), None);
    out.extend(scrubber.scrub(key(EventName::Press, 3.1, "X"), None));
    out.extend(scrubber.scrub(key(EventName::Release, 3.15, "X"), None));
    out.extend(scrubber.scrub(key(EventName::Press, 3.2, "tab"), None));
    out.extend(scrubber.scrub(key(EventName::Release, 3.25, "tab"), None));
    out.extend(scrubber.scrub(key(EventName::Release, 3.3, "shift"), None));
    assert_eq!(
        texts(&out),
        ["{password}", "{password}", "<shift>", "<tab>"],
        "the shift is put back, at the tab's own time"
    );
    assert_eq!(out[3].timestamp, 3.2);
    assert_eq!(out.last().unwrap().key_name.as_deref(), Some("shift"));
}

#[test]
fn after_a_tab_out_of_a_password_field_to_an_unnamed_place_keys_stay_secret_apart() {
    let mut scrubber = Scrubber::new(SecretRules::default());
    scrubber.scrub(press_on(0.0, Some(field(Role::PasswordInput, "PIN"))), None);
    let out = typed(&mut scrubber, 1.0, &["1", "tab", "x", "y"]);
    assert_eq!(texts(&out), ["{pin}", "<tab>", "{secret}", "{secret}"]);
    // A field the tree names again ends it.
    let mut named = key(EventName::Press, 5.0, "tab");
    named.element = Some(Box::new(field(Role::TextInput, "Note")));
    let mut out = scrubber.scrub(named, None);
    out.extend(typed(&mut scrubber, 6.0, &["o", "k"]));
    assert_eq!(texts(&out), ["<tab>", "o", "k"]);
    // A press the tree does not name, away from a plain field: plain.
    scrubber.scrub(press_on(7.0, None), None);
    assert_eq!(texts(&typed(&mut scrubber, 8.0, &["z"])), ["z"]);
}

#[test]
fn two_password_fields_are_two_parameters_and_the_same_field_is_one() {
    let mut scrubber = Scrubber::new(SecretRules::default());
    let first = field(Role::PasswordInput, "Password:");
    let mut second = field(Role::PasswordInput, "Password:");
    second.path = vec![reprise_models::PathStep {
        role: Role::Pane,
        name: None,
    }];
    let mut out = Vec::new();
    scrubber.scrub(press_on(0.0, Some(first.clone())), None);
    out.extend(typed(&mut scrubber, 1.0, &["a"]));
    scrubber.scrub(press_on(2.0, Some(second)), None);
    out.extend(typed(&mut scrubber, 3.0, &["b"]));
    scrubber.scrub(press_on(4.0, Some(first)), None);
    out.extend(typed(&mut scrubber, 5.0, &["c"]));
    assert_eq!(texts(&out), ["{password}", "{password_2}", "{password}"]);
}

#[test]
fn the_toggle_and_secret_windows_make_keys_secret_where_no_tree_says() {
    let rules = SecretRules {
        windows: vec![WindowPattern::new("KeePassXC").unwrap()],
        toggle: Some("pause".into()),
    };
    assert!(rules.is_toggle(&key(EventName::Press, 0.0, "pause")));
    assert!(!rules.is_toggle(&key(EventName::Press, 0.0, "p")));
    let mut scrubber = Scrubber::new(rules);
    assert!(scrubber.toggle_at(1.0));
    assert!(scrubber.typing_secret());
    let out = typed(&mut scrubber, 0.5, &["a"]);
    assert_eq!(texts(&out), ["a"], "before the toggle");
    let out = typed(&mut scrubber, 1.5, &["b", "c"]);
    assert_eq!(texts(&out), ["{secret}", "{secret}"]);
    assert!(!scrubber.toggle_at(2.0));
    assert_eq!(texts(&typed(&mut scrubber, 2.5, &["d"])), ["d"]);

    let window = Some(("keepassxc", "Passwords.kdbx - KeePassXC"));
    let mut out = scrubber.scrub(key(EventName::Press, 3.0, "q"), window);
    out.extend(scrubber.scrub(key(EventName::Press, 3.1, "r"), Some(("xterm", "bash"))));
    assert_eq!(texts(&out), ["{secret}", "r"]);
    assert!(WindowPattern::new("  ").is_none());
    assert!(
        WindowPattern::new("kee")
            .unwrap()
            .matches("x", "My KEEPASS")
    );
}
