//! Whether the pixels in a recorded element's box agree with its name: the
//! recorder's check, after the recording, that the tree named the element
//! the person saw. A tree whose boxes are off (a toolkit's coordinates
//! mapped wrongly) names, for a press, the element whose wrong box covers
//! the point; the pixels in that box then read the name of the element
//! really there.

use accesskit::Role;
use reprise_models::{A11yTree, ElementIdentity, Rect};

use super::{as_read, reads_within};
use crate::Frame;
use crate::describe::{TextReader, has_ink, label_of};

/// The tallest box read: a line of text, not a panel of them.
pub const MAX_LINE_HEIGHT: u32 = 64;

/// What the pixels in an element's box say of its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelReading {
    /// They read its name (among other words, perhaps).
    Agrees,
    /// They read the name of another element of its window, not its own.
    Another { read: String, other: String },
    /// Nothing that tells: no text (an icon), or text no element is named.
    Unclear,
}

/// Whether `element` shows its name as text in its box, one line high:
/// not a field or a control showing its value (a combo box shows the item
/// chosen, which may be another element's name), not a panel.
pub fn shows_its_name(element: &ElementIdentity) -> bool {
    let named = element
        .name
        .as_deref()
        .is_some_and(|name| !as_read(name).is_empty());
    named
        && element.rect.height <= MAX_LINE_HEIGHT
        && !reprise_models::element::stands_alone(element.role)
        && !matches!(
            element.role,
            Role::Window
                | Role::ComboBox
                | Role::EditableComboBox
                | Role::SpinButton
                | Role::Slider
                | Role::ProgressIndicator
        )
}

/// The names of `tree`'s elements that could show apart from `element`:
/// each node's name whose box lies outside the element's box (what lies
/// inside it is its own content) and that neither holds nor is held in
/// the element's name ("Save" beside "Save As").
pub fn other_names<'a>(tree: &'a A11yTree, element: &ElementIdentity) -> Vec<&'a str> {
    let own = element.name.as_deref().unwrap_or_default();
    let mut names: Vec<&str> = tree
        .nodes
        .iter()
        .filter(|node| {
            !node
                .rect
                .is_some_and(|rect| super::recheck::inside(rect, element.rect, 0))
        })
        .filter_map(|node| node.name.as_deref())
        .filter(|name| {
            !as_read(name).is_empty() && !reads_within(name, own) && !reads_within(own, name)
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// What `read` (the pixels in the element's box, read) says of the name
/// `name`, beside the names of the other elements of its window
/// (`others`, from [`other_names`]).
pub fn label_in_pixels(name: &str, read: &str, others: &[&str]) -> LabelReading {
    if as_read(read).is_empty() {
        return LabelReading::Unclear;
    }
    if reads_within(name, read) {
        return LabelReading::Agrees;
    }
    // The longest other name read: "Save As" before "Save".
    others
        .iter()
        .filter(|other| reads_within(other, read))
        .max_by_key(|other| as_read(other).len())
        .map_or(LabelReading::Unclear, |other| LabelReading::Another {
            read: read.trim().to_owned(),
            other: (*other).to_owned(),
        })
}

/// What the pixels of `frame` (the frame of the press) say of `element`'s
/// name, beside the other names of its window's `tree` where it was read:
/// its box read, its border left out.
pub fn check_in_frame(
    element: &ElementIdentity,
    frame: &Frame,
    tree: Option<&A11yTree>,
    reader: &mut dyn TextReader,
) -> LabelReading {
    let Some(name) = element.name.as_deref().filter(|_| shows_its_name(element)) else {
        return LabelReading::Unclear;
    };
    let rect = element.rect;
    let inner = if rect.width > 12 && rect.height > 12 {
        Rect::new(rect.left + 2, rect.top + 2, rect.width - 4, rect.height - 4)
    } else {
        rect
    };
    let Some((image, _)) = crate::analysis::window_image(frame, &inner) else {
        return LabelReading::Unclear;
    };
    if !has_ink(&image) {
        return LabelReading::Unclear;
    }
    let read = label_of(&reader.read(&image));
    let others = tree
        .map(|tree| other_names(tree, element))
        .unwrap_or_default();
    label_in_pixels(name, &read, &others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reprise_models::A11yNode;

    fn node(role: Role, name: &str, rect: Rect, children: Vec<u32>) -> A11yNode {
        A11yNode {
            role,
            name: (!name.is_empty()).then(|| name.to_owned()),
            rect: Some(rect),
            states: Vec::new(),
            value: None,
            children,
        }
    }

    fn element(role: Role, name: &str, rect: Rect) -> ElementIdentity {
        let window = reprise_models::element::WindowIdentity {
            role: Role::Window,
            name: Some("Sign up".into()),
        };
        ElementIdentity::new("app", window, role, Some(name), rect)
    }

    /// A dialog: "OK" and "Cancel" side by side, "Save" and "Save As"
    /// below, a group "Options" holding a check box "Remember".
    fn dialog() -> A11yTree {
        A11yTree {
            app: "app".into(),
            root: 0,
            nodes: vec![
                node(
                    Role::Window,
                    "Sign up",
                    Rect::new(0, 0, 400, 300),
                    vec![1, 2, 3, 4, 5],
                ),
                node(Role::Button, "OK", Rect::new(200, 250, 80, 30), vec![]),
                node(Role::Button, "Cancel", Rect::new(300, 250, 80, 30), vec![]),
                node(Role::Button, "Save", Rect::new(20, 200, 80, 30), vec![]),
                node(Role::Button, "Save As", Rect::new(120, 200, 80, 30), vec![]),
                node(Role::Group, "Options", Rect::new(20, 40, 300, 60), vec![6]),
                node(
                    Role::CheckBox,
                    "Remember",
                    Rect::new(30, 60, 120, 24),
                    vec![],
                ),
            ],
        }
    }

    #[test]
    fn the_pixels_agree_where_they_read_its_name_and_disagree_only_where_they_read_anothers() {
        let tree = dialog();
        let cancel = element(Role::Button, "Cancel", Rect::new(300, 250, 80, 30));
        let others = other_names(&tree, &cancel);
        assert_eq!(
            others,
            ["OK", "Options", "Remember", "Save", "Save As", "Sign up"]
        );
        assert_eq!(
            label_in_pixels("Cancel", "Cancel", &others),
            LabelReading::Agrees
        );
        // OCR's confusions and a shortcut beside it are its name.
        assert_eq!(
            label_in_pixels("Cancel", "CanceI Esc", &others),
            LabelReading::Agrees
        );
        // The element whose wrong box covered the press: its pixels show
        // the button really there.
        assert_eq!(
            label_in_pixels("Cancel", " OK ", &others),
            LabelReading::Another {
                read: "OK".into(),
                other: "OK".into()
            }
        );
        // The longest name read is the one said.
        let save = element(Role::Button, "Remember", Rect::new(30, 60, 120, 24));
        assert_eq!(
            label_in_pixels("Remember", "Save As", &other_names(&tree, &save)),
            LabelReading::Another {
                read: "Save As".into(),
                other: "Save As".into()
            }
        );
        // An icon (no text), stray marks, or text no element is named tell
        // nothing.
        for read in ["", "  ", "ie", "Welcome back"] {
            assert_eq!(
                label_in_pixels("Cancel", read, &others),
                LabelReading::Unclear,
                "{read}"
            );
        }
    }

    #[test]
    fn what_lies_inside_its_box_and_names_alike_are_not_another_element() {
        let tree = dialog();
        // The group's box holds the check box: its label is the group's own
        // content.
        let options = element(Role::Group, "Options", Rect::new(20, 40, 300, 60));
        let others = other_names(&tree, &options);
        assert!(!others.contains(&"Remember"), "{others:?}");
        assert_eq!(
            label_in_pixels("Options", "Remember", &others),
            LabelReading::Unclear
        );
        // "Save" read in "Save As"'s box is its own name's start, not
        // another element.
        let save_as = element(Role::Button, "Save As", Rect::new(120, 200, 80, 30));
        let others = other_names(&tree, &save_as);
        assert!(!others.contains(&"Save"), "{others:?}");
        assert_eq!(
            label_in_pixels("Save As", "Save", &others),
            LabelReading::Unclear
        );
    }

    #[test]
    fn only_an_element_that_shows_its_name_on_a_line_is_read() {
        let rect = Rect::new(0, 0, 80, 30);
        assert!(shows_its_name(&element(Role::Button, "OK", rect)));
        assert!(shows_its_name(&element(Role::Cell, "Oslo", rect)));
        assert!(!shows_its_name(&element(Role::TextInput, "Name", rect)));
        assert!(!shows_its_name(&element(Role::ComboBox, "City", rect)));
        assert!(!shows_its_name(&element(Role::Button, " ", rect)));
        assert!(!shows_its_name(&element(
            Role::Group,
            "Options",
            Rect::new(0, 0, 300, 65)
        )));
    }

    /// Reads what it is told to, noting each crop's size.
    struct Told(&'static str, Vec<(u32, u32)>);

    impl TextReader for Told {
        fn read(&mut self, crop: &image::RgbaImage) -> String {
            self.1.push(crop.dimensions());
            self.0.to_owned()
        }
    }

    #[test]
    fn the_box_is_read_in_the_frame_at_its_place_on_the_screen_at_scale_two() {
        // A 400x300 screen at scale 2: its frame is 800x600. Dark text
        // where the tree says "Cancel" is, white elsewhere.
        let mut image = image::RgbaImage::from_pixel(800, 600, image::Rgba([255; 4]));
        for x in 620..740 {
            for y in 510..540 {
                image.put_pixel(x, y, image::Rgba([0, 0, 0, 255]));
            }
        }
        let frame = Frame {
            image,
            screen: reprise_models::ScreenGeometry {
                rect: Rect::new(0, 0, 400, 300),
                scale_factor: 2.0,
            },
        };
        let tree = dialog();
        let cancel = element(Role::Button, "Cancel", Rect::new(300, 250, 80, 30));
        let mut reader = Told("OK", Vec::new());
        assert_eq!(
            check_in_frame(&cancel, &frame, Some(&tree), &mut reader),
            LabelReading::Another {
                read: "ok".into(),
                other: "OK".into()
            }
        );
        // Its box without a 2-pixel border, in the frame's pixels.
        assert_eq!(reader.1, [(152, 52)]);
        // With no tree, no other name is known: nothing tells.
        assert_eq!(
            check_in_frame(&cancel, &frame, None, &mut reader),
            LabelReading::Unclear
        );
        // A box with no ink is not read; nor a field's.
        let ok = element(Role::Button, "OK", Rect::new(200, 250, 80, 30));
        let field = element(Role::TextInput, "Cancel", Rect::new(300, 250, 80, 30));
        let mut reader = Told("Cancel", Vec::new());
        assert_eq!(
            check_in_frame(&ok, &frame, Some(&tree), &mut reader),
            LabelReading::Unclear
        );
        assert_eq!(
            check_in_frame(&field, &frame, Some(&tree), &mut reader),
            LabelReading::Unclear
        );
        assert!(reader.1.is_empty());
    }
}
