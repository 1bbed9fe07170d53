//! Why a found element would not be pressed where it is: outside a view
//! that scrolls, or under another element; and the answer then (scrolled
//! into view by a turn of the wheel, or refused).

use reprise_models::element::band_of;
use reprise_models::{A11yTree, ElementIdentity, Rect};

use super::StructuralAnswer;

/// The element found, but `hidden` at `point`: out of view where a turn of
/// the wheel over its view brings it in, else gone (never pressed where it
/// does not show).
pub(super) fn out_of_sight(
    live: &A11yTree,
    parents: &[Option<u32>],
    (node_idx, identity): (u32, &ElementIdentity),
    point: (f64, f64),
    hidden: Hidden,
) -> StructuralAnswer {
    let in_words = |rect: Rect| {
        format!(
            " at ({}, {}) {}×{}",
            rect.left, rect.top, rect.width, rect.height
        )
    };
    let place = match hidden {
        Hidden::Outside { container, .. } => {
            let node = &live.nodes[container as usize];
            format!(
                "at ({:.0}, {:.0}), outside its {}{}",
                point.0,
                point.1,
                reprise_models::element::role_name(node.role),
                node.rect.map_or_else(String::new, in_words)
            )
        }
        Hidden::Covered { by, .. } => format!(
            "at ({:.0}, {:.0}), under {}",
            point.0,
            point.1,
            described(live, parents, by, "a")
        ),
    };
    let view = match hidden {
        Hidden::Outside { view, .. } | Hidden::Covered { view, .. } => view,
    };
    let wheel = view.and_then(|(view, visible)| {
        crate::scroll::wheel_point(live, parents, view, visible).map(|wheel| (wheel, visible))
    });
    match wheel {
        Some((wheel, view)) => StructuralAnswer::OutOfView {
            node_idx,
            rect: identity.rect,
            view,
            wheel,
            label: identity.label(),
            place,
        },
        None => StructuralAnswer::Gone {
            reason: format!(
                "{} is in the window's accessibility tree but {} ({place}){}: refusing to press where it does not show",
                identity.label(),
                match hidden {
                    Hidden::Outside { container, .. } if container == live.root => {
                        "outside its window"
                    }
                    Hidden::Outside { .. } => "scrolled out of view",
                    Hidden::Covered { .. } => "something else shows where it is",
                },
                if view.is_some() {
                    ", and no point of the view lets a turn of the wheel scroll it"
                } else {
                    ""
                },
            ),
        },
    }
}

/// The container around the node `idx` whose box does not hold `point`:
/// one that scrolls (a list, a table, a tree, a scroll pane), or the window
/// itself; up to a popup that holds the node at most (a menu, a combo box's
/// list, a tooltip lie outside what holds them: Qt's menus outside their
/// window, LibreOffice's outside its menu bar). The node is there, but out
/// of view, and a press at `point` would land on whatever shows there
/// instead.
fn scrolled_out_of(
    live: &A11yTree,
    parents: &[Option<u32>],
    idx: u32,
    point: (f64, f64),
) -> Option<u32> {
    let outside = |node: u32| {
        live.nodes[node as usize]
            .rect
            .is_some_and(|rect| !rect.contains(point.0, point.1))
    };
    let mut at = parents[idx as usize];
    // At most as many steps as nodes, whatever the tree.
    for _ in 0..live.nodes.len() {
        let Some(up) = at else {
            break;
        };
        let role = live.nodes[up as usize].role;
        // A popup's items lie outside whatever holds the popup (a menu
        // under LibreOffice's menu bar): nothing above it clips them.
        if crate::scroll::is_popup(role) {
            return None;
        }
        if up == live.root {
            return outside(up).then_some(up);
        }
        if crate::scroll::scrolls(role) && outside(up) {
            return Some(up);
        }
        at = parents[up as usize];
    }
    None
}

/// Why a press at a point would not land on its element, and the view to
/// scroll it into where there is one: the scrolling container around it
/// and the part of that container's box that shows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Hidden {
    /// The point lies outside `container` (a list, a scroll pane, the
    /// window).
    Outside {
        container: u32,
        view: Option<(u32, Rect)>,
    },
    /// The point is inside every box around the element, but another
    /// element (`by`) is what the tree has there: a button drawn over a
    /// list whose box is its whole content (egui's).
    Covered { by: u32, view: Option<(u32, Rect)> },
}

/// Whether a press at `point` would miss the node `idx`, and why; `None`
/// when it lands on it.
pub(super) fn hidden_at(
    live: &A11yTree,
    parents: &[Option<u32>],
    idx: u32,
    point: (f64, f64),
) -> Option<Hidden> {
    let scroller = crate::scroll::scroller_of(live, parents, idx);
    let view_of = |container: u32| {
        crate::scroll::visible_view(live, parents, container).map(|visible| (container, visible))
    };
    if let Some(container) = scrolled_out_of(live, parents, idx, point) {
        let view = if container == live.root {
            // Outside the window: a list whose box is its whole content
            // (egui's) is scrolled in what of it shows in the window.
            scroller.flatten().and_then(view_of)
        } else {
            view_of(container)
        };
        return Some(Hidden::Outside { container, view });
    }
    // Inside every box around it, but under an element drawn over it or
    // its list (egui's lists have their whole content as their box); an
    // element of a popup is drawn over everything else.
    let scroller = match scroller {
        Some(None) => return None,
        Some(Some(scroller)) => Some(scroller),
        None => None,
    };
    let around = scroller.unwrap_or(idx);
    let inside = crate::scroll::subtree(live, around);
    let by = crate::scroll::covering(live, parents, &inside, around, point)?;
    Some(Hidden::Covered {
        by,
        view: scroller.and_then(view_of),
    })
}

/// A node in words, for a reason: its role and name, or its role and band.
/// `article` goes before an unnamed node's role ("another", "a").
pub(super) fn described(
    live: &A11yTree,
    parents: &[Option<u32>],
    idx: u32,
    article: &str,
) -> String {
    let node = &live.nodes[idx as usize];
    let role = reprise_models::element::role_name(node.role);
    match node.name.as_deref().filter(|name| !name.is_empty()) {
        Some(name) => format!("{role} {name:?}"),
        None => {
            let band = band_of(live, parents[idx as usize], idx);
            if band.is_empty() {
                format!("{article} {role}")
            } else {
                format!("the {role} of {:?}", band.join(" "))
            }
        }
    }
}
