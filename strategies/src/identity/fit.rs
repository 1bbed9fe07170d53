//! The offset of a tree whose boxes are off the screen, fitted by its own
//! names in the pixels. Where the pixels in a kept element's box read the
//! name of another element of its window, the tree's boxes are, very
//! likely, off by the distance between the two: moved by it, the other
//! element's box is where its name shows. The offset is kept only where
//! the element it then puts under the press reads its own name there and
//! so does another element of the window (a witness): two of the tree's
//! names, read where the moved boxes put them.

use reprise_models::displaced::shifted;
use reprise_models::element::deepest_at;
use reprise_models::{A11yTree, ElementIdentity, Rect, identity_of};

use super::labels::{LabelReading, check_in_frame, shows_its_name};
use crate::Frame;
use crate::describe::TextReader;

/// The farthest (in logical pixels, on each axis) a fitted offset moves
/// the boxes: a toolkit's margins and title bars, not another part of the
/// window.
pub const MAX_OFFSET: i32 = 160;

/// How many elements of the window are read as witnesses, nearest the
/// press first: one must read its name, none another's.
const WITNESSES: usize = 3;

/// How many elements named as the one the pixels read are tried.
const NAMESAKES: usize = 3;

/// A press's element found again once its tree is moved by `offset`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The element under the press in the moved tree, its box moved.
    pub element: ElementIdentity,
    pub offset: (i32, i32),
    /// The witness that read its own name at its moved box.
    pub witness: String,
}

/// `tree` with every box moved by `offset`.
pub fn moved_tree(tree: &A11yTree, (dx, dy): (i32, i32)) -> A11yTree {
    let mut moved = tree.clone();
    for node in &mut moved.nodes {
        node.rect = node.rect.map(|rect| shifted(rect, (dx, dy)));
    }
    moved
}

/// A press as the recording saw it: its point, its frame and its window's
/// tree (in screen coordinates as the toolkit's mapping gave them).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub point: (f64, f64),
    pub frame: &'a Frame,
    pub tree: &'a A11yTree,
}

impl<'a> Seen<'a> {
    /// The same press seen in `tree` (its tree moved).
    fn on<'b>(&self, tree: &'b A11yTree) -> Seen<'b>
    where
        'a: 'b,
    {
        Seen {
            point: self.point,
            frame: self.frame,
            tree,
        }
    }
}

/// The distance from `from` to the middle of `rect`.
fn distance(from: (f64, f64), rect: Rect) -> f64 {
    let (x, y) = rect.center();
    (x - from.0).hypot(y - from.1)
}

/// The press `seen` was kept as `kept`, whose pixels read `other`, the
/// name of another element of its tree. The element really under the
/// press, where an offset puts the tree's names where the pixels show
/// them; `None` where no offset is borne out.
pub fn refit(
    kept: &ElementIdentity,
    other: &str,
    seen: &Seen<'_>,
    reader: &mut dyn TextReader,
) -> Option<Fitted> {
    let at = kept.rect.center();
    let mut namesakes: Vec<Rect> = seen
        .tree
        .nodes
        .iter()
        .filter(|node| node.name.as_deref() == Some(other))
        .filter_map(|node| node.rect)
        .collect();
    namesakes.sort_by(|a, b| distance(at, *a).total_cmp(&distance(at, *b)));
    namesakes.into_iter().take(NAMESAKES).find_map(|namesake| {
        let (x, y) = namesake.center();
        let offset = ((at.0 - x).round() as i32, (at.1 - y).round() as i32);
        let plausible =
            offset != (0, 0) && offset.0.abs() <= MAX_OFFSET && offset.1.abs() <= MAX_OFFSET;
        plausible.then(|| borne_out(kept, offset, seen, reader))?
    })
}

/// The element under the press in its tree moved by `offset`, where it
/// reads its own name there and a witness does too.
fn borne_out(
    kept: &ElementIdentity,
    offset: (i32, i32),
    seen: &Seen<'_>,
    reader: &mut dyn TextReader,
) -> Option<Fitted> {
    let moved_tree = moved_tree(seen.tree, offset);
    let moved = seen.on(&moved_tree);
    let element = reads_itself(&moved, reader)?;
    if element.role == kept.role && element.name == kept.name {
        return None;
    }
    let witness = witness(&element, &moved, reader)?;
    Some(Fitted {
        element,
        offset,
        witness,
    })
}

/// The element under the press in its tree moved by `offset` (an offset
/// another press of the same application bore out), where the pixels read
/// its own name at its moved box.
pub fn under_press(
    offset: (i32, i32),
    seen: &Seen<'_>,
    reader: &mut dyn TextReader,
) -> Option<ElementIdentity> {
    let moved_tree = moved_tree(seen.tree, offset);
    let moved = seen.on(&moved_tree);
    reads_itself(&moved, reader)
}

/// The element under the press in `moved` (a tree moved onto the pixels),
/// where it shows its name and the pixels read it there.
fn reads_itself(moved: &Seen<'_>, reader: &mut dyn TextReader) -> Option<ElementIdentity> {
    let tree = moved.tree;
    let element = identity_of(tree, &tree.app, deepest_at(tree, moved.point)?)?;
    (shows_its_name(&element)
        && check_in_frame(&element, moved.frame, Some(tree), reader) == LabelReading::Agrees)
        .then_some(element)
}

/// Another element of `moved` than `element` that reads its own name at its
/// moved box: the nearest to the press that show their names are read, at
/// most [`WITNESSES`]; one that reads another's name refuses the offset.
fn witness(
    element: &ElementIdentity,
    moved: &Seen<'_>,
    reader: &mut dyn TextReader,
) -> Option<String> {
    let tree = moved.tree;
    let mut others: Vec<ElementIdentity> = (0..tree.nodes.len() as u32)
        .filter(|&idx| idx != tree.root && tree.nodes[idx as usize].name.is_some())
        .filter_map(|idx| identity_of(tree, &tree.app, idx))
        .filter(|other| {
            shows_its_name(other)
                && other.name != element.name
                && !super::recheck::inside(other.rect, element.rect, 0)
                && !super::recheck::inside(element.rect, other.rect, 0)
        })
        .collect();
    others.sort_by(|a, b| distance(moved.point, a.rect).total_cmp(&distance(moved.point, b.rect)));
    others.dedup_by(|a, b| a.name == b.name);
    let mut agreed = None;
    for other in others.iter().take(WITNESSES) {
        match check_in_frame(other, moved.frame, Some(tree), reader) {
            LabelReading::Agrees => agreed = agreed.or_else(|| Some(other.label())),
            LabelReading::Another { .. } => return None,
            LabelReading::Unclear => {}
        }
    }
    agreed
}

#[cfg(test)]
mod tests {
    use accesskit::Role;
    use reprise_models::A11yNode;

    use super::*;

    const NAMES: [&str; 4] = ["Alpha", "Beta", "Gamma", "Delta"];

    /// Reads the name whose number is the darkest pixel's red value, over
    /// white: each button's label is painted so on the screen.
    struct ByInk;

    impl TextReader for ByInk {
        fn read(&mut self, crop: &image::RgbaImage) -> String {
            crop.pixels()
                .filter(|pixel| pixel.0[1] == 0)
                .map(|pixel| pixel.0[0] as usize / 20)
                .min()
                .and_then(|idx| NAMES.get(idx))
                .map_or_else(String::new, |name| (*name).to_owned())
        }
    }

    /// A 200x200 screen at scale 1, with the four buttons one under the
    /// other (40 pixels apart), their labels painted in their boxes.
    fn screen() -> Frame {
        let mut image = image::RgbaImage::from_pixel(200, 200, image::Rgba([255; 4]));
        for (idx, _) in NAMES.iter().enumerate() {
            let top = 10 + 40 * idx as u32;
            for x in 20..100 {
                for y in top + 8..top + 22 {
                    image.put_pixel(x, y, image::Rgba([20 * idx as u8, 0, 0, 255]));
                }
            }
        }
        Frame {
            image,
            screen: reprise_models::ScreenGeometry {
                rect: Rect::new(0, 0, 200, 200),
                scale_factor: 1.0,
            },
        }
    }

    /// The window's tree, its buttons' boxes `skew` below where they show.
    fn tree(skew: i32) -> A11yTree {
        let mut nodes = vec![A11yNode {
            role: Role::Window,
            name: Some("List".into()),
            rect: Some(Rect::new(0, 0, 200, 200)),
            states: Vec::new(),
            value: None,
            children: (1..=NAMES.len() as u32).collect(),
        }];
        for (idx, name) in NAMES.iter().enumerate() {
            nodes.push(A11yNode {
                role: Role::Button,
                name: Some((*name).into()),
                rect: Some(Rect::new(10, 10 + 40 * idx as i32 + skew, 120, 30)),
                states: Vec::new(),
                value: None,
                children: Vec::new(),
            });
        }
        A11yTree {
            app: "app".into(),
            root: 0,
            nodes,
        }
    }

    #[test]
    fn a_tree_a_row_off_is_moved_back_and_names_the_element_pressed() {
        let (frame, tree) = (screen(), tree(40));
        // The press on "Gamma" (its label at y 90-104); the tree's box
        // there is Beta's.
        let press = (50.0, 95.0);
        let kept = identity_of(&tree, "app", deepest_at(&tree, press).unwrap()).unwrap();
        assert_eq!(kept.name.as_deref(), Some("Beta"));
        let reading = check_in_frame(&kept, &frame, Some(&tree), &mut ByInk);
        let LabelReading::Another { other, .. } = reading else {
            panic!("the pixels read another's name: {reading:?}");
        };
        assert_eq!(other, "Gamma");
        let seen = Seen {
            point: press,
            frame: &frame,
            tree: &tree,
        };
        let fitted = refit(&kept, &other, &seen, &mut ByInk).expect("fitted");
        assert_eq!(fitted.offset, (0, -40));
        assert_eq!(fitted.element.name.as_deref(), Some("Gamma"));
        assert_eq!(fitted.element.rect, Rect::new(10, 90, 120, 30));
        assert!(fitted.element.rect.contains(press.0, press.1));
        assert_eq!(fitted.witness, r#"button "Beta""#);
    }

    #[test]
    fn an_offset_the_other_names_do_not_bear_out_is_not_kept() {
        let (frame, tree) = (screen(), tree(40));
        let blank = Frame {
            image: image::RgbaImage::from_pixel(200, 200, image::Rgba([255; 4])),
            ..screen()
        };
        let kept = identity_of(&tree, "app", 2).unwrap();
        let refit_on = |frame: &Frame, other: &str, reader: &mut dyn TextReader| {
            let seen = Seen {
                point: (50.0, 95.0),
                frame,
                tree: &tree,
            };
            refit(&kept, other, &seen, reader)
        };
        // Boxes a row off, but told that the pixels read "Delta": moved two
        // rows, the tree puts Delta under the press, where "Gamma" shows.
        assert_eq!(refit_on(&frame, "Delta", &mut ByInk), None);
        // Every other label reads one name: the witnesses read another's.
        struct Always;
        impl TextReader for Always {
            fn read(&mut self, _: &image::RgbaImage) -> String {
                "Gamma".into()
            }
        }
        assert_eq!(refit_on(&frame, "Gamma", &mut Always), None);
        // No element reads its name where the offset puts it: the pixels
        // show nothing there.
        assert_eq!(refit_on(&blank, "Gamma", &mut ByInk), None);
        // The same reader and offset, right: kept.
        assert!(refit_on(&frame, "Gamma", &mut ByInk).is_some());
    }
}
