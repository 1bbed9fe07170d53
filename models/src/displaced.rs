//! Stale origins in accessibility trees. A toolkit that draws part of a
//! window itself can report that part's boxes from an origin it has not yet
//! updated: LibreOffice's document area, until the window gets a click,
//! reports itself and every cell 25 pixels up (the height of the native menu
//! bar above it), while the container around it, drawn by GTK, is right.
//! The sign is a child exactly its parent's size but not in its place,
//! which no layout produces (content the size of its viewport does not
//! scroll). Such a subtree is put back where its parent says it is.

use crate::{A11yTree, Rect};

/// The shift that puts `child` back onto `parent` when it is exactly the
/// parent's size but displaced, overlapping it; `None` when it is in place
/// or is not the parent's size.
pub fn displacement(parent: Rect, child: Rect) -> Option<(i32, i32)> {
    let same_size = parent.width == child.width && parent.height == child.height;
    let (dx, dy) = (parent.left - child.left, parent.top - child.top);
    let overlapping = dx.unsigned_abs() < parent.width && dy.unsigned_abs() < parent.height;
    (same_size && (dx, dy) != (0, 0) && overlapping).then_some((dx, dy))
}

/// A box moved by `(dx, dy)`.
pub fn shifted(rect: Rect, (dx, dy): (i32, i32)) -> Rect {
    Rect::new(rect.left + dx, rect.top + dy, rect.width, rect.height)
}

impl A11yTree {
    /// Puts every displaced subtree ([`displacement`]) back in its parent's
    /// place; returns how many were moved.
    pub fn repair_displaced(&mut self) -> usize {
        let mut repaired = 0;
        // Each node with the shift its ancestors' repairs give it.
        let mut stack = vec![(self.root, (0, 0))];
        let mut seen = vec![false; self.nodes.len()];
        while let Some((idx, inherited)) = stack.pop() {
            let Some(seen_here) = seen.get_mut(idx as usize) else {
                continue;
            };
            if std::mem::replace(seen_here, true) {
                continue;
            }
            let node = &mut self.nodes[idx as usize];
            node.rect = node.rect.map(|rect| shifted(rect, inherited));
            let parent_rect = node.rect;
            for &child in &self.nodes[idx as usize].children.clone() {
                let mut shift = inherited;
                if let (Some(parent), Some(child_rect)) = (
                    parent_rect,
                    self.nodes.get(child as usize).and_then(|child| child.rect),
                ) && let Some((dx, dy)) = displacement(parent, shifted(child_rect, inherited))
                {
                    shift = (inherited.0 + dx, inherited.1 + dy);
                    repaired += 1;
                }
                stack.push((child, shift));
            }
        }
        repaired
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::outline;
    use accesskit::Role;

    /// Repairs the tree of `rows` and returns how many subtrees moved and
    /// every box after.
    fn check(rows: &[crate::element::OutlineRow<'_>], expect: (usize, &[(i32, i32, u32, u32)])) {
        let mut tree = outline(rows);
        let repaired = tree.repair_displaced();
        let boxes: Vec<(i32, i32, u32, u32)> = tree
            .nodes
            .iter()
            .map(|node| {
                let rect = node.rect.expect("every row has a box");
                (rect.left, rect.top, rect.width, rect.height)
            })
            .collect();
        assert_eq!((repaired, &boxes[..]), expect);
    }

    #[test]
    fn a_document_area_reported_from_a_stale_origin_is_put_under_its_container() {
        // LibreOffice Calc before its first click: the root pane and all
        // below it 25 px up, inside a GTK panel that is right.
        check(
            &[
                (0, Role::Window, "Calc", (0, 0, 1280, 800)),
                (1, Role::Pane, "", (0, 44, 1280, 756)),
                (2, Role::Pane, "Calc", (0, 19, 1280, 756)),
                (3, Role::Table, "Sheet1", (41, 157, 1166, 559)),
                (4, Role::Cell, "B3", (123, 191, 82, 17)),
            ],
            (
                1,
                &[
                    (0, 0, 1280, 800),
                    (0, 44, 1280, 756),
                    (0, 44, 1280, 756),
                    (41, 182, 1166, 559),
                    (123, 216, 82, 17),
                ],
            ),
        );
    }

    #[test]
    fn trees_in_place_and_children_of_other_sizes_are_left_alone() {
        let rows = [
            (0, Role::Window, "Form", (100, 100, 400, 300)),
            (1, Role::Pane, "", (100, 100, 400, 300)),
            (2, Role::Label, "Name", (110, 110, 60, 20)),
            // A scrolled document, taller than its viewport: not displaced.
            (2, Role::Document, "", (100, 40, 400, 900)),
        ];
        let expect: Vec<(i32, i32, u32, u32)> = rows.iter().map(|row| row.3).collect();
        check(&rows, (0, &expect));
    }

    #[test]
    fn a_same_sized_box_elsewhere_on_the_screen_is_not_a_displacement() {
        // A popup the size of the item that opened it, far from it.
        assert_eq!(
            displacement(Rect::new(0, 0, 40, 20), Rect::new(0, 30, 40, 20)),
            None
        );
        assert_eq!(
            displacement(Rect::new(0, 44, 40, 20), Rect::new(0, 30, 40, 20)),
            Some((0, 14))
        );
    }
}
