//! The element under a point: AT-SPI's hit-testing down from the window
//! that holds it, with the neighbours its identity needs (its row's cells,
//! or its siblings), in screen coordinates.

use atspi_common::{CoordType, ObjectRefOwned};
use atspi_proxies::accessible::AccessibleProxyBlocking;
use atspi_proxies::component::ComponentProxyBlocking;
use atspi_proxies::table::TableProxyBlocking;
use reprise_models::displaced::{displacement, shifted};
use reprise_models::{A11yNode, A11yTree, Rect};

use super::coordinates::within;
use super::{
    A11yReader, Mapping, decorated_box, is_null, mapping_between, same_box, scale_between,
    to_screen,
};
use crate::platform::{ActiveWindow, FoundElement};

/// Whether an element of this role is a popup (a menu, a list's popup, a
/// tooltip, a window of its own).
fn is_popup(role: accesskit::Role) -> bool {
    use accesskit::Role as A;
    matches!(
        role,
        A::Menu | A::MenuListPopup | A::Tooltip | A::Window | A::Dialog
    )
}

/// Whether an element is a chooser (of files, a colour, a font): a dialog
/// as a window, and a widget inside one (GTK's file chooser dialog holds
/// its file chooser widget), never a popup.
fn is_chooser(proxy: &AccessibleProxyBlocking<'_>) -> bool {
    use atspi_common::Role;
    proxy.get_role().is_ok_and(|role| {
        matches!(
            role,
            Role::FileChooser | Role::ColorChooser | Role::FontChooser
        )
    })
}

/// The X window whose box gives the scale of an application's window frame
/// (`frame`, its box in the toolkit's coordinates, named `frame_name`), for
/// a press that arrived in `window`: that window, unless it is a popup and
/// the toolkit's boxes are the screen's divided by a scale (`!surface`). A
/// popup's box says nothing of the scale of another frame (Qt nests a
/// menu's popup in the window that opened it): that frame's own X window
/// does, the application's listed window of its name, or whose box it is
/// at a usual scale. A frame of neither (a popup's own, as GTK 3 gives one)
/// is measured against the popup.
fn frame_window<'a>(
    (frame, frame_name): (Rect, Option<&str>),
    window: &'a ActiveWindow,
    own_windows: &'a [ActiveWindow],
    surface: bool,
) -> &'a ActiveWindow {
    if !window.popup || surface {
        return window;
    }
    let named = frame_name.filter(|name| !name.is_empty());
    own_windows
        .iter()
        .find(|own| named == Some(own.title.as_str()))
        .or_else(|| {
            own_windows
                .iter()
                .find(|own| same_box(frame, scale_between(frame, own.rect), own.rect))
        })
        .unwrap_or(window)
}

/// What a search for a popup nested in a window looks for.
struct PopupSearch {
    /// The popup's X window (screen coordinates).
    popup: Rect,
    /// The tree's boxes are the screen's divided by this.
    scale: f64,
    /// A press that arrived in the popup, in the tree's coordinates.
    point: Option<(i32, i32)>,
}

impl PopupSearch {
    fn is_popup(&self, rect: Rect) -> bool {
        same_box(rect, self.scale, self.popup)
    }

    /// The area of `rect` when it lies inside the popup and holds the point.
    fn holds_point_inside(&self, rect: Rect) -> Option<u64> {
        let (x, y) = self.point?;
        (rect.contains(f64::from(x), f64::from(y)) && within(rect, self.scale, self.popup))
            .then(|| u64::from(rect.width) * u64::from(rect.height))
    }
}

/// The most elements read while looking for a popup nested in a window.
const POPUP_SEARCH_NODES: usize = 400;

impl A11yReader {
    /// The element under `point` (logical screen coordinates) in the
    /// windows of the application with process id `pid`: the deepest one
    /// AT-SPI's hit-testing reaches, or its nearest ancestor with an
    /// identity, with the other cells of its row or its siblings (a label),
    /// and the offset that moved its toolkit's boxes onto the screen where
    /// they needed one (GTK 4's are relative to its window's surface).
    /// Bounded: at most 32 levels and [`MAX_CHILDREN_READ`](super::MAX_CHILDREN_READ)
    /// siblings.
    ///
    /// `opened_since` says that the window under the pointer is no longer
    /// the one the press arrived in: the press opened a popup over the
    /// point (a combo box's list), so no popup is the element pressed and
    /// the descent stops above any.
    ///
    /// `own_windows`: for a press in a popup, the application's windows the
    /// window manager lists (their scale is the popup's where the toolkit
    /// nests the popup in the window that opened it, as Qt does).
    pub fn element_at(
        &self,
        window: Option<&ActiveWindow>,
        own_windows: &[ActiveWindow],
        point: (f64, f64),
        opened_since: bool,
    ) -> Result<Option<FoundElement>, super::A11yError> {
        let pid = window.and_then(|window| window.pid);
        let apps = self.applications(pid)?;
        tracing::debug!(?pid, apps = ?apps.iter().map(|(name, app)| (name, app.name_as_str())).collect::<Vec<_>>(), "hit-test");
        for (app_name, app_ref) in apps {
            if let Some(found) = self.element_in(
                &app_name,
                &app_ref,
                (window, own_windows),
                point,
                opened_since,
            ) {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The element under `point` in the application `app_ref` (see
    /// [`element_at`](Self::element_at)): `None` where none of its windows
    /// holds the point, else what its hit-testing names there, if anything.
    fn element_in(
        &self,
        app_name: &str,
        app_ref: &ObjectRefOwned,
        (window, own_windows): (Option<&ActiveWindow>, &[ActiveWindow]),
        point: (f64, f64),
        opened_since: bool,
    ) -> Option<Option<FoundElement>> {
        let app = self.accessible(app_ref).ok()?;
        // A press that arrived in a managed window was in no popup: a
        // popup is an X window of its own, and the press would have
        // arrived in it.
        let in_managed_window = window.is_some_and(|window| !window.popup);
        let Some((mapping, frame, frame_node)) =
            self.window_at(&app, app_ref, (window, own_windows), point)
        else {
            tracing::debug!(app = %app_name, "no showing window of it holds the point");
            return None;
        };
        let (x, y) = {
            let (x, y) = mapping.point_back(point);
            (x.round() as i32, y.round() as i32)
        };
        let (mut chain, mut nodes) =
            self.chain_start(app_name, window, (frame, frame_node), &mapping, (x, y))?;
        let offset = self.descend(
            (&mut chain, &mut nodes),
            (x, y),
            opened_since || in_managed_window,
        );
        // The hit element is the chain's end; its neighbours come after.
        // The chain is kept: a popup this press opens is looked for under
        // it first.
        *self
            .last_press
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = Some((chain.clone(), nodes.clone()));
        let target = nodes.len() as u32 - 1;
        if chain.len() > 1 {
            self.add_neighbours(&chain, &mut nodes, offset);
        }
        tracing::debug!(
            chain = ?nodes[..=target as usize]
                .iter()
                .map(|node| (node.role, node.name.as_deref()))
                .collect::<Vec<_>>(),
            "hit-test chain"
        );
        let mut tree = A11yTree {
            app: app_name.to_owned(),
            root: 0,
            nodes,
        };
        to_screen(&mut tree, mapping);
        Some(
            reprise_models::identity_of(&tree, app_name, target).map(|element| FoundElement {
                element,
                mapped_by: mapping.moved_by(),
            }),
        )
    }

    /// Where the descent starts: the window, or a popup nested in it when
    /// the X window under the pointer is not the window's own (Qt keeps a
    /// menu's popup under the menu bar item that opened it, and its
    /// hit-testing of the window does not reach it). `None` for a press
    /// that arrived in a popup the tree does not show: it is named by what
    /// that popup shows, or not at all (the window under the popup holds
    /// something else at that point).
    fn chain_start(
        &self,
        app_name: &str,
        window: Option<&ActiveWindow>,
        (frame, frame_node): (ObjectRefOwned, A11yNode),
        mapping: &Mapping,
        (x, y): (i32, i32),
    ) -> Option<(Vec<ObjectRefOwned>, Vec<A11yNode>)> {
        let scale = mapping.scale;
        // A managed window's frame (GTK 3 gives it with the window
        // manager's decorations) is the window: no popup is searched for
        // in it, element by element.
        let frame_is_the_window = mapping.moved_by().is_some()
            || window.is_some_and(|window| {
                frame_node.rect.is_some_and(|rect| {
                    same_box(rect, scale, window.rect)
                        || (!window.popup && decorated_box(rect, scale, window.rect))
                })
            });
        let popup = window.filter(|_| !frame_is_the_window).and_then(|window| {
            // Only a press that arrived in a popup may be named by an
            // element merely inside that popup's box.
            let point = window.popup.then_some((x, y));
            self.nested_popup(&frame, &frame_node, window.rect, scale, point)
        });
        match popup {
            Some(found) => Some(found),
            None if window.is_some_and(|window| window.popup) && !frame_is_the_window => {
                tracing::debug!(app = %app_name, "the press arrived in a popup that the tree does not show");
                None
            }
            None => Some((vec![frame], vec![frame_node])),
        }
    }

    /// Down the chain of hit-tested children from its last element, at
    /// `(x, y)` (the tree's coordinates), adding each level to `chain` and
    /// `nodes`; at most 32 levels. `no_popups`: a popup over the point that
    /// the press did not arrive in is not descended into. Where a part of
    /// the window reports its boxes from a stale origin
    /// (reprise_models::displaced), the point is asked in that part's
    /// coordinates and its boxes put back: the offset, returned.
    fn descend(
        &self,
        (chain, nodes): (&mut Vec<ObjectRefOwned>, &mut Vec<A11yNode>),
        (x, y): (i32, i32),
        no_popups: bool,
    ) -> (i32, i32) {
        let mut offset = (0, 0);
        for _ in 0..32 {
            let at = chain.last().expect("the chain starts with the window");
            let Ok(component) = self.proxy_of::<ComponentProxyBlocking>(at) else {
                break;
            };
            let Ok(child) =
                component.get_accessible_at_point(x - offset.0, y - offset.1, CoordType::Screen)
            else {
                break;
            };
            if is_null(&child) || child.path_as_str() == at.path_as_str() {
                break;
            }
            // AccessKit answers with the deepest element at the point, not
            // the child of the one asked: the levels in between (a table's
            // row) are read up the parents, so the path and the row are
            // those a walk down the tree gives.
            let hit = child.clone();
            let mut levels = self.levels_between(at, &child);
            levels.push(child);
            for child in levels {
                let Ok(proxy) = self.accessible(&child) else {
                    break;
                };
                let Some(mut node) = self.node(&child, &proxy, true) else {
                    break;
                };
                node.rect = node.rect.map(|rect| shifted(rect, offset));
                if let (Some(parent), Some(rect)) = (nodes.last().and_then(|n| n.rect), node.rect)
                    && let Some((dx, dy)) = displacement(parent, rect)
                {
                    tracing::debug!(dx, dy, "a displaced part of the window: put back");
                    offset = (offset.0 + dx, offset.1 + dy);
                    node.rect = Some(shifted(rect, (dx, dy)));
                }
                // A menu bar's items are menus too (GTK and LibreOffice give
                // an item with a submenu that role): an item, not a popup.
                let is_menu_bar_item = node.role == accesskit::Role::Menu
                    && nodes.last().map(|parent| parent.role) == Some(accesskit::Role::MenuBar);
                if no_popups && is_popup(node.role) && !is_menu_bar_item && !is_chooser(&proxy) {
                    tracing::debug!(
                        "a popup over the point that the press did not arrive in: not descending into it"
                    );
                    break;
                }
                let idx = nodes.len() as u32;
                nodes.last_mut().expect("a parent").children.push(idx);
                nodes.push(node);
                chain.push(child);
            }
            // Stopped short of the element hit: no deeper.
            if chain.last() != Some(&hit) {
                break;
            }
        }
        offset
    }

    /// The window of the application `app` a press at `point` (screen
    /// coordinates) is in, with the mapping of its boxes to the screen's:
    /// the showing window whose box is the X window the press arrived in
    /// (`window`: the X server's stacking order says which window was under
    /// the pointer, and a popup the press opened is not it); without one,
    /// the smallest showing window that contains the point (a dialog or a
    /// popup menu lies over the window it belongs to). Each window's boxes
    /// are in its toolkit's coordinates (GTK 3's are the screen's divided
    /// by its scale, GTK 4's relative to its surface).
    fn window_at(
        &self,
        app: &AccessibleProxyBlocking<'static>,
        app_ref: &ObjectRefOwned,
        (window, own_windows): (Option<&ActiveWindow>, &[ActiveWindow]),
        point: (f64, f64),
    ) -> Option<(Mapping, ObjectRefOwned, A11yNode)> {
        let surface = self.is_surface_relative(app_ref);
        let mut best: Option<(u64, Mapping, ObjectRefOwned, A11yNode)> = None;
        let mut exact: Option<(u64, Mapping, ObjectRefOwned, A11yNode)> = None;
        for frame in app.get_children().unwrap_or_default() {
            let Ok(proxy) = self.accessible(&frame) else {
                continue;
            };
            let Some(node) = self.node(&frame, &proxy, false) else {
                continue;
            };
            let Some(rect) = node.rect else {
                continue;
            };
            // A toolkit whose boxes are relative to its window's surface
            // (GTK 4) is placed where the X window the press arrived in
            // is, and only a frame that fits it (named as it is, when
            // the application has several) may be that window.
            let mapping = match window {
                Some(window) => match mapping_between(
                    rect,
                    frame_window((rect, node.name.as_deref()), window, own_windows, surface).rect,
                    surface,
                ) {
                    Some(mapping) => mapping,
                    None => continue,
                },
                None if surface => continue,
                None => Mapping::SCREEN,
            };
            if mapping.moved_by().is_some()
                && node.name.as_deref().is_some_and(|name| {
                    window.is_some_and(|window| !name.is_empty() && name != window.title)
                })
            {
                continue;
            }
            let on_screen = mapping.rect(rect);
            if !on_screen.contains(point.0, point.1) {
                continue;
            }
            let area = u64::from(rect.width) * u64::from(rect.height);
            if exact.is_none()
                && window.is_some_and(|window| {
                    mapping.moved_by().is_some() || same_box(rect, mapping.scale, window.rect)
                })
            {
                exact = Some((area, mapping, frame.clone(), node.clone()));
            }
            if best
                .as_ref()
                .is_none_or(|(best_area, ..)| area < *best_area)
            {
                best = Some((area, mapping, frame, node));
            }
        }
        exact
            .or(best)
            .map(|(_, mapping, frame, node)| (mapping, frame, node))
    }

    /// The elements between `top` and its descendant `deep`, top first, read
    /// up `deep`'s parents (bounded: 32 levels); none when `deep` is
    /// `top`'s child, or when the parents never reach `top`.
    fn levels_between(&self, top: &ObjectRefOwned, deep: &ObjectRefOwned) -> Vec<ObjectRefOwned> {
        let mut levels = Vec::new();
        let mut at = deep.clone();
        for _ in 0..32 {
            let Some(parent) = self
                .accessible(&at)
                .ok()
                .and_then(|proxy| proxy.parent().ok())
            else {
                return Vec::new();
            };
            if parent == *top {
                levels.reverse();
                return levels;
            }
            if is_null(&parent) {
                return Vec::new();
            }
            levels.push(parent.clone());
            at = parent;
        }
        Vec::new()
    }

    /// The chain from `frame` down to the showing element whose box is the
    /// popup window's (`popup`, screen coordinates; the tree's boxes are the
    /// screen's divided by `scale`); without one, when the press arrived in
    /// the popup, down to the smallest element inside the popup's box that
    /// holds its `point` (in the tree's coordinates): LibreOffice puts a
    /// menu's items straight under the menu bar's item, with no element for
    /// the popup that shows them.
    /// Looked for first under the element the last press named in this
    /// window (the menu bar item that opened the popup), then under the
    /// window, breadth first, among at most [`POPUP_SEARCH_NODES`] elements.
    fn nested_popup(
        &self,
        frame: &ObjectRefOwned,
        frame_node: &A11yNode,
        popup: Rect,
        scale: f64,
        point: Option<(i32, i32)>,
    ) -> Option<(Vec<ObjectRefOwned>, Vec<A11yNode>)> {
        let last_press = self
            .last_press
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
            .filter(|(chain, _)| {
                chain.first().is_some_and(|first| {
                    first.path_as_str() == frame.path_as_str()
                        && first.name_as_str() == frame.name_as_str()
                })
            });
        let search = PopupSearch {
            popup,
            scale,
            point,
        };
        let found = last_press
            .and_then(|start| self.search_popup(start, &search, POPUP_SEARCH_NODES / 4))
            .or_else(|| {
                let start = (vec![frame.clone()], vec![frame_node.clone()]);
                self.search_popup(start, &search, POPUP_SEARCH_NODES)
            })?;
        tracing::debug!(
            depth = found.0.len(),
            "the point is in a popup nested in the window"
        );
        Some(found)
    }

    /// [`Self::nested_popup`]'s search under the last element of `start`
    /// (a chain down from the window), among at most `max_nodes` elements;
    /// the chain is extended down to what was found.
    fn search_popup(
        &self,
        (mut chain, mut nodes): (Vec<ObjectRefOwned>, Vec<A11yNode>),
        search: &PopupSearch,
        max_nodes: usize,
    ) -> Option<(Vec<ObjectRefOwned>, Vec<A11yNode>)> {
        let start = chain.last()?.clone();
        let start_node = nodes.last()?.clone();
        // Every element read: itself, its node, and its parent's place here.
        let mut seen: Vec<(ObjectRefOwned, A11yNode, Option<usize>)> =
            vec![(start, start_node, None)];
        let mut next = 0;
        let mut found = None;
        // The smallest element inside the popup holding the point: its area
        // and place in `seen`.
        let mut inside: Option<(u64, usize)> = None;
        while next < seen.len() && seen.len() < max_nodes {
            let Ok(proxy) = self.accessible(&seen[next].0) else {
                next += 1;
                continue;
            };
            for child in self.few_children(&seen[next].0, &proxy) {
                if is_null(&child) || seen.len() >= max_nodes {
                    break;
                }
                let Ok(child_proxy) = self.accessible(&child) else {
                    continue;
                };
                let Some(node) = self.node(&child, &child_proxy, false) else {
                    continue;
                };
                let (is_popup, holds_point_inside) = match node.rect {
                    Some(rect) => (search.is_popup(rect), search.holds_point_inside(rect)),
                    None => (false, None),
                };
                seen.push((child, node, Some(next)));
                if is_popup {
                    found = Some(seen.len() - 1);
                    break;
                }
                if let Some(area) = holds_point_inside
                    && inside.is_none_or(|(smallest, _)| area < smallest)
                {
                    inside = Some((area, seen.len() - 1));
                }
            }
            if found.is_some() {
                break;
            }
            next += 1;
        }
        let mut at = found.or(inside.map(|(_, idx)| idx))?;
        // The path from the start (already in the chain) down to it.
        let mut ancestry = Vec::new();
        while let Some(parent) = seen[at].2 {
            ancestry.push(at);
            at = parent;
        }
        ancestry.reverse();
        for idx in ancestry {
            let (object, mut node, _) = seen[idx].clone();
            node.children.clear();
            let idx_here = nodes.len() as u32;
            if let Some(parent) = nodes.last_mut() {
                parent.children.push(idx_here);
            }
            nodes.push(node);
            chain.push(object);
        }
        Some((chain, nodes))
    }

    /// Adds the hit element's neighbours under its parent (the last two of
    /// `chain`): the cells of its row where the parent is a table, else the
    /// parent's other children. Their boxes are moved by `offset`, as the
    /// hit element's were.
    fn add_neighbours(
        &self,
        chain: &[ObjectRefOwned],
        nodes: &mut Vec<A11yNode>,
        offset: (i32, i32),
    ) {
        let target = &chain[chain.len() - 1];
        let parent = &chain[chain.len() - 2];
        let parent_idx = nodes.len() - 2;
        let Ok(target_proxy) = self.accessible(target) else {
            return;
        };
        // Only a parent that says it is a table is asked for rows (GTK
        // logs a critical warning for a table call on anything else).
        let is_table = self.accessible(parent).is_ok_and(|proxy| {
            proxy
                .get_interfaces()
                .is_ok_and(|interfaces| interfaces.contains(atspi_common::Interface::Table))
        });
        let row_cells = is_table
            .then(|| self.proxy_of::<TableProxyBlocking>(parent).ok())
            .flatten()
            .and_then(|table| {
                let index = target_proxy.get_index_in_parent().ok()?;
                let row = table.get_row_at_index(index).ok()?;
                Some(self.row_cells(parent, &table, row))
            });
        tracing::debug!(is_table, cells = ?row_cells.as_ref().map(Vec::len), "the row of a hit element");
        let neighbours = match row_cells {
            Some(cells) if !cells.is_empty() => cells,
            // Siblings only where they are few: the cells around one in a
            // large container (a spreadsheet) tell nothing of it.
            _ => match self.accessible(parent) {
                Ok(parent_proxy) => self.few_children(parent, &parent_proxy),
                Err(_) => return,
            },
        };
        for neighbour in neighbours {
            if neighbour.path_as_str() == target.path_as_str() || is_null(&neighbour) {
                continue;
            }
            let Ok(proxy) = self.accessible(&neighbour) else {
                continue;
            };
            if let Some(mut node) = self.node(&neighbour, &proxy, false) {
                node.rect = node.rect.map(|rect| shifted(rect, offset));
                let idx = nodes.len() as u32;
                nodes[parent_idx].children.push(idx);
                nodes.push(node);
            }
        }
    }
}
