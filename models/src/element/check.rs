//! Whether an element the accessibility tree named for a press may be kept
//! as the press's identity: its box, in screen coordinates, must hold the
//! press and lie inside the window (or popup) the press was made in; a
//! typed group's focused element must lie inside its window. A tree whose boxes are not the screen's (GTK 4 under X11 reports
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
        /// What the pixels in its box read, where they read its name (the
        /// check after the recording, off the input's path).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read: Option<String>,
        /// The offset the pixels fitted beyond the toolkit's mapping, where
        /// the tree's boxes were off the screen (they read other elements'
        /// names): the element is the one under the press once the tree is
        /// moved by it, its box so moved. A replay finds the same offset
        /// again in its own pixels, or does not use the tree for the press.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fitted: Option<(i32, i32)>,
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
    /// Its box reaches `by` (right, down; negative: left, up) beyond the
    /// window or popup it was named in.
    OutsideWindow { element: String, by: (i32, i32) },
    /// The pixels in its box, in the frame of the press, read `read`: not
    /// its name, but the name of another element of its window.
    ReadsAnother { element: String, read: String },
}

impl IdentityCheck {
    /// The check in words, for `show` and reports.
    pub fn describe(&self) -> String {
        match self {
            IdentityCheck::Checked {
                mapped_by,
                read,
                fitted,
            } => {
                const FIT: &str = "the offset at which the pixels read the tree's names";
                let moved = match (mapped_by, fitted) {
                    (Some((dx, dy)), Some((fx, fy))) => format!(
                        " once the toolkit's boxes are moved by ({dx}, {dy}) onto the screen and by ({fx}, {fy}) more, {FIT}"
                    ),
                    (Some((dx, dy)), None) => {
                        format!(
                            " once the toolkit's boxes are moved by ({dx}, {dy}) onto the screen"
                        )
                    }
                    (None, Some((fx, fy))) => {
                        format!(" once the tree's boxes are moved by ({fx}, {fy}), {FIT}")
                    }
                    (None, None) => String::new(),
                };
                let read = read.as_ref().map_or_else(String::new, |read| {
                    format!(", and its pixels read {read:?}")
                });
                format!("identity kept: its box holds the press{moved}{read}")
            }
            IdentityCheck::Dropped(Disagreement::MissesPress { element, by }) => format!(
                "identity not kept: the tree's box of {element} misses the press by ({}, {})",
                by.0, by.1
            ),
            IdentityCheck::Dropped(Disagreement::OutsideWindow { element, by }) => format!(
                "identity not kept: the tree's box of {element} reaches ({}, {}) beyond its window",
                by.0, by.1
            ),
            IdentityCheck::Dropped(Disagreement::ReadsAnother { element, read }) => format!(
                "identity not kept: the pixels in the tree's box of {element} read {read:?}, another element's name"
            ),
        }
    }

    /// The check as a step's label ends: why it was dropped, or where the
    /// tree's boxes had to be moved to agree; `None` for a kept identity
    /// whose boxes were the screen's.
    pub fn brief(&self) -> Option<String> {
        match self {
            IdentityCheck::Dropped(_) => Some(self.describe()),
            IdentityCheck::Checked {
                fitted: Some((dx, dy)),
                ..
            } => Some(format!(
                "tree boxes off by ({dx}, {dy}), fitted to the pixels"
            )),
            IdentityCheck::Checked {
                mapped_by: Some((dx, dy)),
                ..
            } => Some(format!("tree boxes moved by ({dx}, {dy})")),
            IdentityCheck::Checked { .. } => None,
        }
    }

    pub fn is_kept(&self) -> bool {
        matches!(self, IdentityCheck::Checked { .. })
    }
}

/// Checks a typed group's focused `element` (boxes in screen coordinates)
/// against the window it was typed in: kept only where its box lies inside.
pub fn check_focus(
    element: &ElementIdentity,
    window: crate::Rect,
    mapped_by: Option<(i32, i32)>,
) -> IdentityCheck {
    match outside(element, window) {
        Some(dropped) => dropped,
        None => IdentityCheck::Checked {
            mapped_by: mapped_by.filter(|&offset| offset != (0, 0)),
            read: None,
            fitted: None,
        },
    }
}

/// How far `element`'s box reaches beyond `window`, where it does (by
/// more than the tolerance on a side).
fn outside(element: &ElementIdentity, window: crate::Rect) -> Option<IdentityCheck> {
    let (rect, tolerance) = (element.rect, TOLERANCE as i64);
    let side = |low: i64, high: i64, window_low: i64, window_high: i64| -> i32 {
        if low < window_low - tolerance {
            (low - window_low) as i32
        } else if high > window_high + tolerance {
            (high - window_high) as i32
        } else {
            0
        }
    };
    let by = (
        side(
            i64::from(rect.left),
            rect.right(),
            i64::from(window.left),
            window.right(),
        ),
        side(
            i64::from(rect.top),
            rect.bottom(),
            i64::from(window.top),
            window.bottom(),
        ),
    );
    (by != (0, 0)).then(|| {
        IdentityCheck::Dropped(Disagreement::OutsideWindow {
            element: element.label(),
            by,
        })
    })
}

/// Checks `element` (boxes already in screen coordinates, moved by
/// `mapped_by` where the toolkit needed it) against the press at `point`
/// and the window (or popup) the press was made in, where it is known.
pub fn check_press(
    element: &ElementIdentity,
    point: (f64, f64),
    mapped_by: Option<(i32, i32)>,
    window: Option<crate::Rect>,
) -> IdentityCheck {
    if let Some(dropped) = window.and_then(|window| outside(element, window)) {
        return dropped;
    }
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
            read: None,
            fitted: None,
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
    use super::{Disagreement, IdentityCheck, check_focus, check_press};
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
            check_press(&ok, (140.0, 215.0), None, None),
            IdentityCheck::Checked {
                mapped_by: None,
                read: None,
                fitted: None,
            }
        );
        // On the edge, within the rounding a toolkit does.
        assert!(check_press(&ok, (180.5, 230.0), None, None).is_kept());
        // The same tree with every box moved by (0, 84), as a toolkit whose
        // boxes are relative to its surface gives them: refused, with by how
        // much the box misses.
        let moved = button("OK", Rect::new(100, 200 - 84, 80, 30));
        let check = check_press(&moved, (140.0, 215.0), None, None);
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
        let left = check_press(&ok, (90.0, 215.0), None, None);
        assert!(matches!(
            left,
            IdentityCheck::Dropped(Disagreement::MissesPress { by: (-10, 0), .. })
        ));
        // A mapping that was needed is said; none, or a null one, is not.
        assert_eq!(
            check_press(&ok, (140.0, 215.0), Some((155, 125)), None).describe(),
            "identity kept: its box holds the press once the toolkit's boxes are moved by (155, 125) onto the screen"
        );
        // An offset the pixels fitted, with and without a mapping before it.
        let fitted = |mapped_by| IdentityCheck::Checked {
            mapped_by,
            read: Some("Source".into()),
            fitted: Some((0, -38)),
        };
        assert_eq!(
            fitted(Some((155, 125))).describe(),
            "identity kept: its box holds the press once the toolkit's boxes are moved by (155, 125) onto the screen and by (0, -38) more, the offset at which the pixels read the tree's names, and its pixels read \"Source\""
        );
        assert_eq!(
            fitted(None).describe(),
            "identity kept: its box holds the press once the tree's boxes are moved by (0, -38), the offset at which the pixels read the tree's names, and its pixels read \"Source\""
        );
        assert_eq!(
            fitted(None).brief().as_deref(),
            Some("tree boxes off by (0, -38), fitted to the pixels")
        );
        assert_eq!(
            check_press(&ok, (140.0, 215.0), Some((0, 0)), None),
            IdentityCheck::Checked {
                mapped_by: None,
                read: None,
                fitted: None,
            }
        );
    }

    #[test]
    fn a_box_that_reaches_beyond_its_window_is_dropped_for_a_press_and_for_keys() {
        let window = Rect::new(90, 180, 300, 200);
        let ok = button("OK", Rect::new(100, 200, 80, 30));
        assert!(check_press(&ok, (140.0, 215.0), None, Some(window)).is_kept());
        assert!(check_focus(&ok, window, None).is_kept());
        // A box that holds the press but lies partly outside the window
        // (a toolkit's boxes off by less than the control's size).
        let shifted = button("OK", Rect::new(100, 170, 80, 60));
        let check = check_press(&shifted, (140.0, 215.0), None, Some(window));
        assert_eq!(
            check.describe(),
            "identity not kept: the tree's box of button \"OK\" reaches (0, -10) beyond its window"
        );
        // A focused field whose box is surface-relative: at the screen's
        // corner, far from its window.
        let field = button("Name", Rect::new(5, 5, 120, 24));
        assert!(matches!(
            check_focus(&field, window, None),
            IdentityCheck::Dropped(Disagreement::OutsideWindow {
                by: (-85, -175),
                ..
            })
        ));
        // Right and below.
        let wide = button("Name", Rect::new(300, 360, 120, 24));
        assert!(matches!(
            check_focus(&wide, window, None),
            IdentityCheck::Dropped(Disagreement::OutsideWindow { by: (30, 4), .. })
        ));
        // Within the rounding a toolkit does.
        let edge = button("Name", Rect::new(89, 180, 302, 200));
        assert!(check_focus(&edge, window, None).is_kept());
    }

    #[test]
    fn a_check_reads_back_as_it_was_stored() {
        for check in [
            IdentityCheck::Checked {
                mapped_by: None,
                read: None,
                fitted: None,
            },
            IdentityCheck::Checked {
                mapped_by: Some((5, 7)),
                read: Some("OK".into()),
                fitted: None,
            },
            IdentityCheck::Checked {
                mapped_by: None,
                read: Some("Source".into()),
                fitted: Some((0, -38)),
            },
            IdentityCheck::Dropped(Disagreement::ReadsAnother {
                element: "button \"Cancel\"".into(),
                read: "OK".into(),
            }),
            IdentityCheck::Dropped(Disagreement::MissesPress {
                element: "tab \"Source\"".into(),
                by: (0, 84),
            }),
            IdentityCheck::Dropped(Disagreement::OutsideWindow {
                element: "text \"Name\"".into(),
                by: (-5, 0),
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
