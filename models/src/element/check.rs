//! Whether an element the accessibility tree named for a press may be kept
//! as the press's identity: its box, in screen coordinates, must hold the
//! press. A tree whose boxes are not the screen's (GTK 4 under X11 reports
//! them relative to its surface) names another element than the one pressed,
//! and a replay that trusted it would press that other element exactly.

use serde::{Deserialize, Serialize};

use super::ElementIdentity;

/// How far (in logical pixels) a box may miss the press and still hold it:
/// a toolkit rounds its boxes to whole pixels, a pointer lands on them.
const TOLERANCE: f64 = 1.0;

/// What the recorder found when it checked a press's element against the
/// screen, kept with the press so `show` can say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kept")]
pub enum IdentityCheck {
    /// Kept: its box holds the press on the screen. `mapped_by`: the offset
    /// that put the toolkit's boxes on the screen, where they needed one.
    Checked {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mapped_by: Option<(i32, i32)>,
    },
    /// Not kept: the press is recorded by its pixels alone.
    Dropped(Disagreement),
}

/// Why an element named for a press was not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Disagreement {
    /// Its box does not hold the press: the press lies `by` (right, down)
    /// beyond the box's nearest edge.
    MissesPress { element: String, by: (i32, i32) },
}

impl IdentityCheck {
    /// The check in words, for `show` and reports.
    pub fn describe(&self) -> String {
        match self {
            IdentityCheck::Checked { mapped_by: None } => {
                "identity kept: its box holds the press".into()
            }
            IdentityCheck::Checked {
                mapped_by: Some((dx, dy)),
            } => format!(
                "identity kept: its box holds the press once the toolkit's boxes are moved by ({dx}, {dy}) onto the screen"
            ),
            IdentityCheck::Dropped(Disagreement::MissesPress { element, by }) => format!(
                "identity not kept: the tree's box of {element} misses the press by ({}, {})",
                by.0, by.1
            ),
        }
    }

    pub fn is_kept(&self) -> bool {
        matches!(self, IdentityCheck::Checked { .. })
    }
}

/// Checks `element` (boxes already in screen coordinates, moved by
/// `mapped_by` where the toolkit needed it) against the press at `point`.
pub fn check_press(
    element: &ElementIdentity,
    point: (f64, f64),
    mapped_by: Option<(i32, i32)>,
) -> IdentityCheck {
    let rect = element.rect;
    let beyond = |at: f64, low: i32, size: u32| -> i32 {
        let high = f64::from(low) + f64::from(size);
        if at < f64::from(low) - TOLERANCE {
            (at - f64::from(low)).floor() as i32
        } else if at > high + TOLERANCE {
            (at - high).ceil() as i32
        } else {
            0
        }
    };
    let by = (
        beyond(point.0, rect.left, rect.width),
        beyond(point.1, rect.top, rect.height),
    );
    if by == (0, 0) {
        IdentityCheck::Checked {
            mapped_by: mapped_by.filter(|&offset| offset != (0, 0)),
        }
    } else {
        IdentityCheck::Dropped(Disagreement::MissesPress {
            element: element.label(),
            by,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Disagreement, IdentityCheck, check_press};
    use crate::element::WindowIdentity;
    use crate::{ElementIdentity, Rect};

    fn button(name: &str, rect: Rect) -> ElementIdentity {
        let window = WindowIdentity {
            role: accesskit::Role::Window,
            name: Some("Window".into()),
        };
        ElementIdentity::new("app", window, accesskit::Role::Button, Some(name), rect)
    }

    #[test]
    fn a_box_that_holds_the_press_is_kept_and_one_moved_off_it_is_dropped_with_the_offset() {
        let ok = button("OK", Rect::new(100, 200, 80, 30));
        assert_eq!(
            check_press(&ok, (140.0, 215.0), None),
            IdentityCheck::Checked { mapped_by: None }
        );
        // On the edge, within the rounding a toolkit does.
        assert!(check_press(&ok, (180.5, 230.0), None).is_kept());
        // The same tree with every box moved by (0, 84), as a toolkit whose
        // boxes are relative to its surface gives them: refused, with by how
        // much the box misses.
        let moved = button("OK", Rect::new(100, 200 - 84, 80, 30));
        let check = check_press(&moved, (140.0, 215.0), None);
        assert_eq!(
            check,
            IdentityCheck::Dropped(Disagreement::MissesPress {
                element: "button \"OK\"".into(),
                by: (0, 69),
            })
        );
        assert_eq!(
            check.describe(),
            "identity not kept: the tree's box of button \"OK\" misses the press by (0, 69)"
        );
        let left = check_press(&ok, (90.0, 215.0), None);
        assert!(matches!(
            left,
            IdentityCheck::Dropped(Disagreement::MissesPress { by: (-10, 0), .. })
        ));
        // A mapping that was needed is said; none, or a null one, is not.
        assert_eq!(
            check_press(&ok, (140.0, 215.0), Some((155, 125))).describe(),
            "identity kept: its box holds the press once the toolkit's boxes are moved by (155, 125) onto the screen"
        );
        assert_eq!(
            check_press(&ok, (140.0, 215.0), Some((0, 0))),
            IdentityCheck::Checked { mapped_by: None }
        );
    }

    #[test]
    fn a_check_reads_back_as_it_was_stored() {
        for check in [
            IdentityCheck::Checked { mapped_by: None },
            IdentityCheck::Checked {
                mapped_by: Some((5, 7)),
            },
            IdentityCheck::Dropped(Disagreement::MissesPress {
                element: "tab \"Source\"".into(),
                by: (0, 84),
            }),
        ] {
            let text = serde_json::to_string(&check).unwrap();
            assert_eq!(
                serde_json::from_str::<IdentityCheck>(&text).unwrap(),
                check,
                "{text}"
            );
        }
    }
}
