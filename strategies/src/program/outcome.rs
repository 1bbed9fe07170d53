//! The outcome of a task, marked while it was recorded (the person points
//! at the result and presses the mark key): the element under the pointer
//! in its window's tree read at that moment, kept as an assertion of the
//! value it showed, placed after the recorded steps made before the mark.
//! A replay then ends (or goes on past that point) only where the
//! application shows the same value: what catches a faithful replay of
//! the wrong thing, whatever its steps' own checks said.

use reprise_models::program::{Assertion, Compare, Entry, Program, Query, literal};
use reprise_models::{A11yNode, A11yTree, ActionEvent, ElementState};

/// Why a mark was not kept as an assertion, in words a person reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotKept(pub String);

/// The assertion a mark at `point` (logical screen coordinates) makes of
/// `tree`, the tree of the window titled `window` read at the mark: the
/// smallest element there that shows a value or a name, named by its role,
/// its name (where it has one) and its window, and which of those alike it
/// is in reading order where its role and name name others too (two
/// unnamed fields), expecting the value it held. Refused where nothing
/// there is named or the element is a password field.
pub fn assertion_at(
    tree: &A11yTree,
    window: &str,
    (x, y): (f64, f64),
) -> Result<Assertion, NotKept> {
    let shows = |node: &A11yNode| {
        node.value.is_some()
            || node
                .name
                .as_deref()
                .is_some_and(|name| !name.trim().is_empty())
    };
    let area = |node: &A11yNode| {
        node.rect.map_or(i64::MAX, |rect| {
            i64::from(rect.width) * i64::from(rect.height)
        })
    };
    let node = tree
        .nodes
        .iter()
        .enumerate()
        // The window itself names nothing it shows.
        .filter(|(idx, _)| *idx != tree.root as usize)
        .map(|(_, node)| node)
        .filter(|node| {
            !node.states.contains(&ElementState::Offscreen)
                && node.rect.is_some_and(|rect| rect.contains(x, y))
                && shows(node)
        })
        .min_by_key(|node| area(node))
        .ok_or_else(|| {
            NotKept(format!(
                "nothing named or holding a value is at ({x:.0}, {y:.0}) in {window:?}"
            ))
        })?;
    if reprise_models::element::is_secret_field(node.role) {
        return Err(NotKept(format!(
            "the element at ({x:.0}, {y:.0}) in {window:?} is a password field: its value is never kept"
        )));
    }
    let mut element = Query {
        role: Some(node.role),
        name: node.name.clone().filter(|name| !name.trim().is_empty()),
        window: Some(window.to_owned()),
        app: (!tree.app.is_empty()).then(|| tree.app.clone()),
        nth: None,
    };
    // Elements alike (two unnamed fields): which of them, in reading order.
    let alike = crate::program::matching(tree, &element);
    if alike.len() > 1 {
        element.nth = crate::program::in_reading_order(alike)
            .iter()
            .position(|other| std::ptr::eq(*other, node))
            .map(|idx| idx as u32 + 1);
    }
    // What `find` reads of it: a field's text, else its name.
    let value = node.value.as_ref().or(node.name.as_ref());
    Ok(Assertion {
        element,
        compare: Compare::Equals(literal(value.map_or("", String::as_str))),
    })
}

/// `check` with each text parameter's recorded value (`parameters`: name,
/// value) in its expected text named as the parameter, so that a replay
/// typing another value (`--set`, a row of `--each`) expects that value:
/// where the text is the value, or holds it and it is 3 characters or
/// more (a shorter one, a digit, would be found inside other words).
/// Longer values first; a value is named once, where it first shows.
pub fn naming_parameters(check: Assertion, parameters: &[(String, String)]) -> Assertion {
    let Compare::Equals(expected) = &check.compare else {
        return check;
    };
    let mut parameters: Vec<&(String, String)> = parameters
        .iter()
        .filter(|(_, value)| !value.trim().is_empty())
        .collect();
    parameters.sort_by_key(|(_, value)| std::cmp::Reverse(value.chars().count()));
    let mut text = expected.clone();
    for (name, value) in parameters {
        let escaped = literal(value);
        if text == escaped || (value.chars().count() >= 3 && text.contains(&escaped)) {
            text = text.replacen(&escaped, &format!("{{{name}}}"), 1);
        }
    }
    Assertion {
        compare: Compare::Equals(text),
        ..check
    }
}

/// The recording's steps (`planned`, as replay plans them) with each
/// outcome assertion placed after the last step begun before its mark
/// (`at`, seconds into the recording): before every step where it came
/// before them all.
pub fn with_outcomes(planned: &[ActionEvent], outcomes: &[(f64, Assertion)]) -> Program {
    let mut program = Program::default();
    let mut outcomes: Vec<&(f64, Assertion)> = outcomes.iter().collect();
    outcomes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut pending = outcomes.into_iter().peekable();
    for (idx, step) in planned.iter().enumerate() {
        while let Some((_, assertion)) = pending.next_if(|(at, _)| *at < step.timestamp) {
            program.entries.push(Entry::Assert(assertion.clone()));
        }
        program.entries.push(Entry::Recorded { step: idx + 1 });
    }
    program
        .entries
        .extend(pending.map(|(_, assertion)| Entry::Assert(assertion.clone())));
    program
}

#[cfg(test)]
mod tests {
    use accesskit::Role;
    use reprise_models::EventName;
    use reprise_models::element::outline;

    use super::*;

    /// A dialog "Greeting" with a label, a field holding "hello" and two
    /// buttons OK.
    fn dialog(field: Role) -> A11yTree {
        let mut tree = outline(&[
            (0, Role::Dialog, "Greeting", (0, 0, 300, 200)),
            (1, Role::Label, "Your name:", (10, 10, 200, 20)),
            (1, field, "", (10, 40, 280, 30)),
            (1, Role::Button, "OK", (150, 160, 60, 30)),
            (1, Role::Button, "OK", (220, 160, 60, 30)),
        ]);
        tree.app = "zenity".into();
        tree.nodes[2].name = None;
        tree.nodes[2].value = Some("hello".into());
        tree
    }

    #[test]
    fn a_mark_keeps_the_smallest_element_under_it_with_the_value_it_held() {
        let tree = dialog(Role::TextInput);
        let kept = assertion_at(&tree, "Greeting", (50.0, 55.0)).unwrap();
        assert_eq!(kept.compare, Compare::Equals("hello".into()));
        assert_eq!(kept.element.role, Some(Role::TextInput));
        assert_eq!(kept.element.name, None);
        assert_eq!(kept.element.window.as_deref(), Some("Greeting"));
        assert_eq!(kept.element.app.as_deref(), Some("zenity"));
        // The label: its name is what it shows.
        let label = assertion_at(&tree, "Greeting", (20.0, 15.0)).unwrap();
        assert_eq!(label.compare, Compare::Equals("Your name:".into()));
    }

    #[test]
    fn a_mark_on_nothing_named_or_a_password_is_not_kept_and_a_twin_is_counted() {
        let tree = dialog(Role::TextInput);
        // Outside the window.
        let outside = assertion_at(&tree, "Greeting", (400.0, 400.0)).unwrap_err();
        assert!(outside.0.contains("nothing named"), "{outside}");
        // Of two buttons OK, the second in reading order.
        let twin = assertion_at(&tree, "Greeting", (240.0, 170.0)).unwrap();
        assert_eq!(twin.element.nth, Some(2));
        assert_eq!(twin.compare, Compare::Equals("OK".into()));
        assert_eq!(
            crate::program::find(Some(&tree), &twin.element).unwrap(),
            Some("OK".into())
        );
        let password = dialog(Role::PasswordInput);
        let refused = assertion_at(&password, "Greeting", (50.0, 55.0)).unwrap_err();
        assert!(refused.0.contains("password"), "{refused}");
        // An offscreen element under the point is not what shows there,
        // and the window itself names nothing.
        let mut hidden = dialog(Role::TextInput);
        hidden.nodes[2].states.push(ElementState::Offscreen);
        let under = assertion_at(&hidden, "Greeting", (50.0, 55.0)).unwrap_err();
        assert!(under.0.contains("nothing named"), "{under}");
    }

    #[test]
    fn a_parameter_the_outcome_shows_is_named_and_braces_are_kept_as_shown() {
        let mut tree = dialog(Role::TextInput);
        tree.nodes[2].value = Some("Dear {alice}, 7 items".into());
        let check = assertion_at(&tree, "Greeting", (50.0, 55.0)).unwrap();
        assert_eq!(
            check.compare,
            Compare::Equals("Dear {{alice}}, 7 items".into())
        );
        let named = |parameters: &[(&str, &str)]| {
            let parameters: Vec<(String, String)> = parameters
                .iter()
                .map(|(name, value)| ((*name).into(), (*value).into()))
                .collect();
            naming_parameters(check.clone(), &parameters).compare
        };
        // A value of 3 characters or more, inside the text (its braces as
        // the text has them); a short one only where it is the whole text.
        assert_eq!(
            named(&[("who", "{alice}"), ("count", "7")]),
            Compare::Equals("Dear {who}, 7 items".into())
        );
        let mut whole = tree.clone();
        whole.nodes[2].value = Some("7".into());
        let seven = assertion_at(&whole, "Greeting", (50.0, 55.0)).unwrap();
        assert_eq!(
            naming_parameters(seven, &[("count".into(), "7".into())]).compare,
            Compare::Equals("{count}".into())
        );
        // Nothing typed shows: as it was.
        assert_eq!(named(&[("city", "Bergen")]), check.compare);
    }

    #[test]
    fn an_outcome_goes_after_the_steps_begun_before_its_mark() {
        let step = |at: f64| ActionEvent::new(EventName::Click, at);
        let planned = [step(1.0), step(2.0), step(5.0)];
        let check = |name: &str| Assertion {
            element: Query {
                name: Some(name.into()),
                ..Query::default()
            },
            compare: Compare::Equals("x".into()),
        };
        let program = with_outcomes(
            &planned,
            &[
                (9.0, check("end")),
                (3.0, check("middle")),
                (0.5, check("start")),
            ],
        );
        let order: Vec<String> = program
            .entries
            .iter()
            .map(|entry| match entry {
                Entry::Recorded { step } => step.to_string(),
                Entry::Assert(assertion) => assertion.element.name.clone().unwrap(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(order, ["start", "1", "2", "middle", "3", "end"]);
        assert_eq!(with_outcomes(&planned, &[]), Program::recorded(3));
    }
}
