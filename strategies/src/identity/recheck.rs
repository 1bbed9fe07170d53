//! The re-check just before a press: the element the platform names at the
//! point about to be pressed must be the element the step was decided on.
//! Between the decision and the press a list may have scrolled, a dialog may
//! have opened over the point, a row may have been added above: the press
//! then waits for a new decision rather than land on something else.

use reprise_models::{ElementIdentity, Rect};

use super::same_name;

/// How far (logical pixels) two boxes of one element may differ, at least:
/// a toolkit's boxes move by a pixel as its content settles.
const BOX_TOLERANCE: i64 = 4;

/// Whether `inner` lies inside `outer`, within `slack` pixels on each edge.
pub(super) fn inside(inner: Rect, outer: Rect, slack: i64) -> bool {
    i64::from(inner.left) >= i64::from(outer.left) - slack
        && i64::from(inner.top) >= i64::from(outer.top) - slack
        && inner.right() <= outer.right() + slack
        && inner.bottom() <= outer.bottom() + slack
}

/// Whether two boxes are the same box, within [`BOX_TOLERANCE`] or a tenth
/// of its size.
fn same_box(a: Rect, b: Rect) -> bool {
    let slack = BOX_TOLERANCE.max(i64::from(a.width.max(a.height)) / 10);
    inside(a, b, slack) && inside(b, a, slack)
}

/// Whether `live`, the element the platform names at `point` just before the
/// press, is `expected`, the element the step was decided on (its box as the
/// live tree gave it then); else why not, naming both.
///
/// It is the same element when it has its name (or, unnamed, its role and
/// band) and the same box; a part of it (an unnamed icon, its own label)
/// when its box lies inside and it names nothing else; one of its
/// ancestors (the hit-test stopped above it) when the path from the window
/// holds it and its box holds the expected one. Anything else at the point,
/// or an element there that is not at the point, is another element.
pub fn same_element_at(
    expected: &ElementIdentity,
    live: &ElementIdentity,
    point: (f64, f64),
) -> Result<(), String> {
    let differs = |why: &str| {
        Err(format!(
            "just before the press, ({:.0}, {:.0}) holds {} at {}, not {} at {}: {why}",
            point.0,
            point.1,
            live.label(),
            rect_words(live.rect),
            expected.label(),
            rect_words(expected.rect),
        ))
    };
    if !live.rect.contains(point.0, point.1) {
        return differs("the box the platform gave does not hold the point");
    }
    let names_agree = same_name(expected.name.as_deref(), live.name.as_deref());
    let same = names_agree
        && (expected.name.is_some() || (expected.role == live.role && expected.band == live.band));
    if same && same_box(expected.rect, live.rect) {
        return Ok(());
    }
    let part = inside(live.rect, expected.rect, BOX_TOLERANCE)
        && (names_agree
            || live
                .name
                .as_deref()
                .is_none_or(|name| name.trim().is_empty())
            || live.name.as_deref().is_some_and(|name| {
                expected
                    .band
                    .iter()
                    .any(|text| same_name(Some(text), Some(name)))
            }));
    if part {
        return Ok(());
    }
    let ancestor = inside(expected.rect, live.rect, BOX_TOLERANCE)
        && expected.path.iter().any(|step| {
            step.role == live.role && same_name(step.name.as_deref(), live.name.as_deref())
        });
    if ancestor {
        return Ok(());
    }
    differs(if names_agree {
        "its box moved"
    } else {
        "another element is there"
    })
}

fn rect_words(rect: Rect) -> String {
    format!(
        "({}, {}) {}x{}",
        rect.left, rect.top, rect.width, rect.height
    )
}

#[cfg(test)]
mod tests {
    use super::same_element_at;
    use reprise_models::element::{PathStep, WindowIdentity};
    use reprise_models::{ElementIdentity, Rect};

    fn element(role: accesskit::Role, name: Option<&str>, rect: Rect) -> ElementIdentity {
        let window = WindowIdentity {
            role: accesskit::Role::Window,
            name: Some("Window".into()),
        };
        ElementIdentity::new("app", window, role, name, rect)
    }

    #[test]
    fn the_element_decided_on_is_pressed_and_anything_else_at_the_point_is_refused() {
        use accesskit::Role;
        let ok = element(Role::Button, Some("OK"), Rect::new(100, 200, 80, 30));
        let at = (140.0, 215.0);
        // The same element, its box a pixel off.
        let mut live = ok.clone();
        live.rect = Rect::new(101, 200, 80, 30);
        assert_eq!(same_element_at(&ok, &live, at), Ok(()));
        // Its own label, or an unnamed icon in it: a part of it.
        let label = element(Role::Label, Some("OK"), Rect::new(120, 205, 40, 20));
        assert_eq!(same_element_at(&ok, &label, at), Ok(()));
        let icon = element(Role::Image, None, Rect::new(130, 205, 20, 20));
        assert_eq!(same_element_at(&ok, &icon, at), Ok(()));
        // Another button moved under the point (a row added above).
        let cancel = element(Role::Button, Some("Cancel"), Rect::new(100, 200, 80, 30));
        let refused = same_element_at(&ok, &cancel, at).unwrap_err();
        assert!(
            refused.contains("button \"Cancel\"") && refused.contains("button \"OK\""),
            "{refused}"
        );
        assert!(refused.contains("another element is there"), "{refused}");
        // A dialog over the point: its panel holds the point, not the button.
        let dialog = element(Role::Dialog, Some("Error"), Rect::new(0, 0, 600, 400));
        assert!(same_element_at(&ok, &dialog, at).is_err());
        // The same name somewhere else: the box moved.
        let moved = element(Role::Button, Some("OK"), Rect::new(100, 180, 80, 60));
        assert!(
            same_element_at(&ok, &moved, at)
                .unwrap_err()
                .contains("its box moved")
        );
    }

    #[test]
    fn a_hit_test_that_stops_at_an_ancestor_on_the_path_is_the_element_and_one_off_the_path_is_not()
    {
        use accesskit::Role;
        let mut source = element(Role::Label, Some("Source"), Rect::new(487, 174, 60, 36));
        source.path = vec![PathStep {
            role: Role::Tab,
            name: Some("Tab".into()),
        }];
        let tab = element(Role::Tab, Some("Tab"), Rect::new(475, 172, 84, 40));
        assert_eq!(same_element_at(&source, &tab, (510.0, 190.0)), Ok(()));
        // A tab that is not on its path: another element.
        let other = element(Role::Tab, Some("Info"), Rect::new(475, 172, 84, 40));
        assert!(same_element_at(&source, &other, (510.0, 190.0)).is_err());
        // An element whose box does not hold the point is never agreed with.
        let away = element(Role::Label, Some("Source"), Rect::new(487, 300, 60, 36));
        assert!(same_element_at(&source, &away, (510.0, 190.0)).is_err());
    }
}
