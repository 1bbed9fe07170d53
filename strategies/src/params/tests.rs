use accesskit::Role;
use reprise_models::{ActionEvent, ElementIdentity, EventName, Rect, WindowIdentity};

use super::*;
use crate::{Action, KeySpec};

fn field(role: Role, label: &str) -> ElementIdentity {
    let window = WindowIdentity {
        role: Role::Dialog,
        name: Some("Login".into()),
    };
    let rect = Rect::new(10, 10, 100, 20);
    ElementIdentity {
        band: vec![label.into()],
        ..ElementIdentity::new("zenity", window, role, None, rect)
    }
}

fn leaf(name: EventName, t: f64, key: &str) -> ActionEvent {
    let mut event = ActionEvent::key(name, t, key);
    event.key_vk = Some(match key.chars().count() {
        1 => key.to_lowercase().chars().next().unwrap() as u32,
        _ => 1000 + key.len() as u32,
    });
    event
}

fn secret(name: EventName, t: f64) -> ActionEvent {
    let mut event = ActionEvent::new(name, t);
    event.secret = Some("password".into());
    event
}

/// A login typed into one window: "Al" (a capital), Tab released late,
/// a secret, Enter.
fn login() -> Vec<ActionEvent> {
    let mut first = leaf(EventName::Press, 1.0, "shift");
    first.element = Some(Box::new(field(Role::TextInput, "User name:")));
    let mut into_password = secret(EventName::Press, 2.2);
    into_password.element = Some(Box::new(field(Role::PasswordInput, "Password:")));
    let children = vec![
        first,
        leaf(EventName::Press, 1.1, "A"),
        leaf(EventName::Release, 1.2, "A"),
        leaf(EventName::Release, 1.3, "shift"),
        leaf(EventName::Press, 1.4, "l"),
        leaf(EventName::Press, 1.5, "tab"),
        leaf(EventName::Release, 1.55, "l"),
        into_password,
        leaf(EventName::Release, 2.25, "tab"),
        secret(EventName::Release, 2.3),
        secret(EventName::Press, 2.4),
        secret(EventName::Release, 2.5),
        leaf(EventName::Press, 3.0, "enter"),
        leaf(EventName::Release, 3.1, "enter"),
    ];
    let mut tree = ActionEvent::parent(EventName::Type, children);
    tree.fill_text();
    vec![tree]
}

/// Every key pressed is released later in the same step.
fn balanced(actions: &[Action]) {
    let mut held: Vec<&KeySpec> = Vec::new();
    for action in actions {
        match action {
            Action::KeyDown { key } => held.push(key),
            Action::KeyUp { key } => {
                let at = held
                    .iter()
                    .position(|other| *other == key)
                    .unwrap_or_else(|| panic!("{key:?} released but not pressed in {actions:?}"));
                held.remove(at);
            }
            _ => {}
        }
    }
    assert!(held.is_empty(), "left held: {held:?}");
}

#[test]
fn texts_and_secrets_are_named_after_their_fields() {
    let params = parameters(&login(), &Names::new());
    assert_eq!(
        params,
        [
            Parameter {
                name: "user_name".into(),
                kind: ParameterKind::Text {
                    recorded: "Al".into()
                },
                field: Some("text field (label: User name:)".into()),
                step: 0,
            },
            Parameter {
                name: "password".into(),
                kind: ParameterKind::Secret,
                field: Some("password field (label: Password:)".into()),
                step: 0,
            },
        ]
    );
}

#[test]
fn a_set_text_replaces_its_run_and_leaves_the_keys_around_it_pressed_and_released() {
    let trees = set_parameters(
        login(),
        &[("user_name".into(), "Bö b".into())],
        &Names::new(),
    )
    .unwrap();
    assert_eq!(
        trees[0].text.as_deref(),
        Some("B-ö- -b-<tab>-{password}-<enter>")
    );
    let actions = crate::tree::actions_for(&trees[0], |seconds| Action::Pause { seconds });
    balanced(&actions);
    let typed: Vec<&Action> = actions
        .iter()
        .filter(|action| !matches!(action, Action::Pause { .. }))
        .collect();
    assert_eq!(
        typed
            .iter()
            .filter(|action| matches!(action, Action::TypeSecret { .. }))
            .count(),
        1,
        "the secret is typed once: {typed:?}"
    );
    // Timestamps stay in order though the value is longer.
    let times: Vec<f64> = trees[0]
        .children
        .iter()
        .map(|leaf| leaf.timestamp)
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
    // The focused field stays on the first key.
    assert!(trees[0].children[0].element.is_some());
}

#[test]
fn set_refuses_unknown_names_secrets_and_repeats() {
    let unknown =
        set_parameters(login(), &[("login".into(), "x".into())], &Names::new()).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "the recording has no parameter {login}; it has: {user_name}, {password}"
    );
    assert!(matches!(
        set_parameters(login(), &[("password".into(), "x".into())], &Names::new()),
        Err(SetError::Secret(_))
    ));
    assert!(matches!(
        set_parameters(
            login(),
            &[
                ("user_name".into(), "x".into()),
                ("user_name".into(), "y".into())
            ],
            &Names::new()
        ),
        Err(SetError::Twice(_))
    ));
    // An empty value types nothing, and keeps the rest.
    let trees = set_parameters(
        login(),
        &[("user_name".into(), String::new())],
        &Names::new(),
    )
    .unwrap();
    assert_eq!(trees[0].text.as_deref(), Some("<tab>-{password}-<enter>"));
    balanced(&crate::tree::actions_for(&trees[0], |seconds| {
        Action::Pause { seconds }
    }));
}

#[test]
fn renamed_parameters_go_by_their_new_names() {
    let mut names = Names::new();
    let params = parameters(&login(), &names);
    rename(&params, &mut names, "user_name", "login").unwrap();
    rename(&params, &mut names, "password", "pin").unwrap();
    assert!(matches!(
        rename(&params, &mut names, "nothing", "x"),
        Err(SetError::Unknown { .. })
    ));
    assert!(matches!(
        rename(&params, &mut names, "user_name", "2fa"),
        Err(SetError::BadName(_))
    ));
    let trees = with_names(login(), &names);
    let params = parameters(&trees, &names);
    let named: Vec<&str> = params.iter().map(|param| param.name.as_str()).collect();
    assert_eq!(named, ["login", "pin"]);
    assert!(matches!(
        rename(&params, &mut names, "login", "pin"),
        Err(SetError::Taken(_))
    ));
    // Renamed back to what it was derived as: no name is kept for it.
    rename(&params, &mut names, "login", "user_name").unwrap();
    assert_eq!(names.len(), 1);
    let trees = set_parameters(trees, &[("user_name".into(), "zed".into())], &names).unwrap();
    assert_eq!(trees[0].text.as_deref(), Some("z-e-d-<tab>-{pin}-<enter>"));
    assert_eq!(crate::params::secret_names(&trees), ["pin"]);
}
