//! Bringing an element that is scrolled out of its list's view back into
//! it, as a person would: turn the wheel over the view, toward the element,
//! and look again. Where to turn it (a point of the view over nothing that
//! takes the wheel for itself: a spin button or a combo box would change
//! its value), which way, and how far (the pixels the element still has to
//! travel, over what one notch moved it on the last turn). Pure: the visual
//! strategy returns each turn as a step the loop makes before the step
//! proper, and reads the tree again after it.

use accesskit::Role;
use reprise_models::{A11yTree, Rect};

/// The most turns of the wheel for one step: more, and the element is not
/// coming into view (the list does not scroll that far, or not this way).
pub const MAX_TURNS: u32 = 8;

/// The most notches in one turn.
const MAX_NOTCHES: i32 = 30;

/// How many of the element's own heights a notch is first taken to move
/// it (a few lines, as most toolkits scroll); the first turn's movement
/// corrects it.
const FIRST_GUESS_LINES: f64 = 3.0;

/// Roles of containers that scroll what they hold: a list, a table, a
/// tree, a scroll pane.
pub(crate) fn scrolls(role: Role) -> bool {
    matches!(
        role,
        Role::ScrollView
            | Role::Table
            | Role::Tree
            | Role::TreeGrid
            | Role::Grid
            | Role::List
            | Role::ListBox
    )
}

/// Roles of popups (a menu, a combo box's list, a tooltip): drawn over
/// everything else, and lying outside what holds them.
pub(crate) fn is_popup(role: Role) -> bool {
    matches!(
        role,
        Role::Menu | Role::MenuListPopup | Role::ComboBox | Role::Tooltip
    )
}

/// The nearest container above the node `idx` that scrolls: `Some(Some)`;
/// `Some(None)` when a popup comes first (nothing above it clips it);
/// `None` when there is neither.
pub(crate) fn scroller_of(
    live: &A11yTree,
    parents: &[Option<u32>],
    idx: u32,
) -> Option<Option<u32>> {
    std::iter::successors(parents.get(idx as usize).copied().flatten(), |&at| {
        parents[at as usize]
    })
    .take(live.nodes.len())
    .find_map(|up| {
        let role = live.nodes[up as usize].role;
        if is_popup(role) {
            return Some(None);
        }
        scrolls(role).then_some(Some(up))
    })
}

/// What of the box of `container` (a list or a scroll pane; where it has
/// none, what its content spans) shows: inside the window, and on the
/// larger side of each element beside it or its ancestors drawn over it (a
/// button over the lower part of egui's list; groups and scroll bars are
/// not drawn over it). `None` when nothing of it shows.
pub(crate) fn visible_view(
    live: &A11yTree,
    parents: &[Option<u32>],
    container: u32,
) -> Option<Rect> {
    let window = live.nodes.get(live.root as usize)?.rect?;
    let mut view = box_of(live, container)?.intersection(&window)?;
    let inside = subtree(live, container);
    let chain: Vec<u32> = std::iter::successors(Some(container), |&at| parents[at as usize])
        .take(live.nodes.len())
        .collect();
    for &ancestor in &chain[1..] {
        for &beside in &live.nodes[ancestor as usize].children {
            let node = &live.nodes[beside as usize];
            if chain.contains(&beside)
                || inside[beside as usize]
                || is_transparent(node.role)
                || node.role == Role::ScrollBar
            {
                continue;
            }
            let Some(over) = node.rect.and_then(|rect| rect.intersection(&view)) else {
                continue;
            };
            // What shows is on the larger side of it.
            let above = i64::from(over.top) - i64::from(view.top);
            let below = view.bottom() - over.bottom();
            view = if above >= below {
                Rect::new(view.left, view.top, view.width, above.max(0) as u32)
            } else {
                Rect::new(view.left, over.bottom() as i32, view.width, below as u32)
            };
        }
    }
    (view.width > 0 && view.height > 0).then_some(view)
}

/// Roles whose element takes the wheel for itself (it changes a value, or
/// scrolls something other than the view), so the wheel is not turned over
/// one.
fn takes_wheel(role: Role) -> bool {
    scrolls(role)
        || matches!(
            role,
            Role::SpinButton
                | Role::ComboBox
                | Role::EditableComboBox
                | Role::Slider
                | Role::ScrollBar
                | Role::MultilineTextInput
                | Role::Document
                | Role::Canvas
                | Role::Terminal
                | Role::TabList
        )
}

/// A point inside `visible` (what shows of the container `view`, inside
/// the window) where a turn of the wheel scrolls the view itself: nothing
/// outside the view is drawn over it there ([`covering`]), and nothing
/// between the smallest element of the view there and the view takes the
/// wheel. The middle first, then points around it; `None` when none is
/// safe.
pub fn wheel_point(
    live: &A11yTree,
    parents: &[Option<u32>],
    view: u32,
    visible: Rect,
) -> Option<(f64, f64)> {
    let window = live.nodes.get(live.root as usize)?.rect?;
    let inside = subtree(live, view);
    let fractions = [0.5, 0.3, 0.7, 0.15, 0.85];
    fractions
        .iter()
        .flat_map(|&fy| fractions.iter().map(move |&fx| (fx, fy)))
        .map(|(fx, fy)| {
            (
                (f64::from(visible.left) + fx * f64::from(visible.width)).floor(),
                (f64::from(visible.top) + fy * f64::from(visible.height)).floor(),
            )
        })
        .find(|&point| {
            if !window.contains(point.0, point.1)
                || !visible.contains(point.0, point.1)
                || covering(live, parents, &inside, view, point).is_some()
            {
                return false;
            }
            // The smallest element of the view there (of two the same
            // size, the one read later: the child), and up to the view:
            // each must let the wheel through.
            let smallest = (0..live.nodes.len())
                .filter(|&idx| inside[idx] && holds(live, idx as u32, point))
                .min_by_key(|&idx| (area(live, idx as u32), std::cmp::Reverse(idx)));
            let mut at = smallest.map(|idx| idx as u32);
            for _ in 0..live.nodes.len() {
                match at {
                    None => return true,
                    Some(node) if node == view => return true,
                    Some(node) if takes_wheel(live.nodes[node as usize].role) => return false,
                    Some(node) => at = parents[node as usize],
                }
            }
            false
        })
}

/// Which nodes lie in the subtree of `container` (itself included).
pub(crate) fn subtree(live: &A11yTree, container: u32) -> Vec<bool> {
    let mut inside = vec![false; live.nodes.len()];
    let mut stack = vec![container];
    while let Some(at) = stack.pop() {
        let Some(seen) = inside.get_mut(at as usize) else {
            continue;
        };
        if std::mem::replace(seen, true) {
            continue;
        }
        stack.extend(&live.nodes[at as usize].children);
    }
    inside
}

/// The box of `container`, or, where it has none (egui's table), what the
/// boxes of its descendants span.
pub(crate) fn box_of(live: &A11yTree, container: u32) -> Option<Rect> {
    if let Some(rect) = live.nodes.get(container as usize)?.rect {
        return Some(rect);
    }
    let inside = subtree(live, container);
    (0..live.nodes.len())
        .filter(|&idx| inside[idx])
        .filter_map(|idx| live.nodes[idx].rect)
        .reduce(|span, rect| span.union(&rect))
        .filter(|span| span.width > 0 && span.height > 0)
}

/// Roles of elements that hold what lies within their box rather than
/// being drawn over it: layout groups and panes.
pub(crate) fn is_transparent(role: Role) -> bool {
    matches!(
        role,
        Role::Group | Role::Pane | Role::Unknown | Role::GenericContainer
    )
}

/// An element drawn over `container` at `point`: one outside it (`inside`
/// is its subtree) and not around it, whose box holds the point (a button
/// over the lower part of a list whose box is its whole content); the
/// smallest. Only what holds nothing is drawn over others (a button, a
/// label, a menu's item); groups, panes and other containers, elements out
/// of view, and the elements of another list where that list does not
/// show (its rows running on under the buttons below it) are not.
pub(crate) fn covering(
    live: &A11yTree,
    parents: &[Option<u32>],
    inside: &[bool],
    container: u32,
    point: (f64, f64),
) -> Option<u32> {
    let mut around = vec![false; live.nodes.len()];
    let mut at = parents.get(container as usize).copied().flatten();
    for _ in 0..live.nodes.len() {
        let Some(up) = at else {
            break;
        };
        around[up as usize] = true;
        at = parents[up as usize];
    }
    // An element of another list shows at the point only where that list
    // shows it (egui's rows run on under the buttons below their list).
    let shown = |idx: usize| match scroller_of(live, parents, idx as u32) {
        Some(Some(scroller)) => visible_view(live, parents, scroller)
            .is_some_and(|view| view.contains(point.0, point.1)),
        _ => true,
    };
    (0..live.nodes.len())
        .filter(|&idx| {
            let node = &live.nodes[idx];
            !inside[idx]
                && !around[idx]
                && node.children.is_empty()
                && !is_transparent(node.role)
                && !node
                    .states
                    .contains(&reprise_models::ElementState::Offscreen)
                && holds(live, idx as u32, point)
                && shown(idx)
        })
        .min_by_key(|&idx| area(live, idx as u32))
        .map(|idx| idx as u32)
}

fn holds(live: &A11yTree, idx: u32, point: (f64, f64)) -> bool {
    live.nodes[idx as usize]
        .rect
        .is_some_and(|rect| rect.contains(point.0, point.1))
}

fn area(live: &A11yTree, idx: u32) -> u64 {
    live.nodes[idx as usize].rect.map_or(u64::MAX, |rect| {
        u64::from(rect.width) * u64::from(rect.height)
    })
}

/// How far, in pixels, the element with box `target` has to travel for it
/// to show inside `view` with a margin (its own size, at most a quarter of
/// the view): positive rightwards and downwards. (0, 0) when it shows.
pub fn shortfall(target: Rect, view: Rect) -> (i32, i32) {
    let along = |start: i32, length: u32, view_start: i32, view_length: u32| -> i32 {
        let (end, view_end) = (start + length as i32, view_start + view_length as i32);
        let margin = (length.min(view_length / 4)) as i32;
        if start < view_start {
            // Its start down to the view's start and a margin, but never
            // its end past the view's end (unless it is longer than the
            // view: then its start shows).
            (view_start - start + margin)
                .min(view_end - end)
                .max(view_start - start)
        } else if end > view_end {
            // Its end up to the view's end and a margin, but never its start
            // past the view's start.
            -(end - view_end + margin).min(start - view_start)
        } else {
            0
        }
    };
    (
        along(target.left, target.width, view.left, view.width),
        along(target.top, target.height, view.top, view.height),
    )
}

/// How far one notch of the wheel moves an element, per axis, in pixels,
/// signed as the wheel's notches are (a notch up, `dy > 0`, moves content
/// down; a notch right, `dx > 0`, moves it left; a toolkit that scrolls the
/// other way has it negative).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerNotch {
    pub x: f64,
    pub y: f64,
}

impl PerNotch {
    /// The first guess for an element of box `target`: a few of its heights.
    pub fn guess(target: Rect) -> PerNotch {
        let step = FIRST_GUESS_LINES * f64::from(target.height.max(1));
        PerNotch { x: -step, y: step }
    }

    /// What the last turn (`notches`, as the wheel's dx and dy) showed: the
    /// element moved `moved` pixels (right and down positive). An axis that
    /// was not turned keeps its value; one that was turned and did not move
    /// makes it [`Stuck`], for the caller to refuse (the view does not
    /// scroll so).
    pub fn learned(self, notches: (i32, i32), moved: (i32, i32)) -> Result<PerNotch, Stuck> {
        let axis = |notches: i32, moved: i32, before: f64| {
            if notches == 0 {
                Ok(before)
            } else if moved == 0 {
                Err(Stuck)
            } else {
                Ok(f64::from(moved) / f64::from(notches))
            }
        };
        Ok(PerNotch {
            x: axis(notches.0, moved.0, self.x)?,
            y: axis(notches.1, moved.1, self.y)?,
        })
    }

    /// The notches (the wheel's dx, dy) that move an element by `travel`
    /// pixels (right and down positive), rounded up, at most
    /// [`MAX_NOTCHES`] each way.
    pub fn notches(self, travel: (i32, i32)) -> (i32, i32) {
        let axis = |travel: i32, per_notch: f64| {
            if travel == 0 || per_notch == 0.0 {
                return 0;
            }
            let notches = f64::from(travel) / per_notch;
            (notches.signum() * notches.abs().ceil())
                .clamp(-f64::from(MAX_NOTCHES), f64::from(MAX_NOTCHES)) as i32
        };
        (axis(travel.0, self.x), axis(travel.1, self.y))
    }
}

/// A turn of the wheel that did not move the element at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stuck;

/// Words for a turn (`3 notches down`, `1 notch left and 2 notches up`).
pub fn turn_words((dx, dy): (i32, i32)) -> String {
    let axis = |count: i32, positive: &str, negative: &str| {
        (count != 0).then(|| {
            format!(
                "{} notch{} {}",
                count.abs(),
                if count.abs() == 1 { "" } else { "es" },
                if count > 0 { positive } else { negative }
            )
        })
    };
    [axis(dx, "right", "left"), axis(dy, "up", "down")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
mod tests;
