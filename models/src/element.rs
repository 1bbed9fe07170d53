//! The element a person acted on, named by the accessibility tree: its role,
//! name, states, box, the path from its window, and its identity band (the
//! other cells of its row, or a control's label). One function,
//! [`identity_of`], derives it from a tree, so the recorder (from the few
//! nodes it reads around the pointer) and replay (from a live window's tree)
//! compute identities by the same rules.

use accesskit::Role;
use serde::{Deserialize, Serialize};

use crate::{A11yNode, A11yTree, Rect};

pub mod check;
pub use check::{Disagreement, IdentityCheck, check_focus, check_press};

/// The version of [`ElementIdentity`]'s stored form. A reader ignores an
/// identity of a version it does not know (replay then falls back to pixels).
pub const ELEMENT_VERSION: u32 = 1;

/// A state of an accessible element that identity and effects depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElementState {
    Focused,
    Checked,
    Selected,
    Editable,
    Sensitive,
    Expanded,
    Pressed,
    /// A row or item of a list scrolled out of the list's view: its box is
    /// where the toolkit puts it, or where its row would be (see
    /// [`place_offscreen`]); what to scroll by, never where to press.
    Offscreen,
}

/// The window an element belongs to, as its accessibility tree names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowIdentity {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A window's title without the mark of unsaved changes an editor puts
/// before it (`*Untitled` is `Untitled` once typed into).
pub fn unmarked_title(title: &str) -> &str {
    title.trim().trim_start_matches('*').trim()
}

/// One ancestor on the way from the window to an element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathStep {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Who an element is: what replay looks for in the live tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElementIdentity {
    pub version: u32,
    /// The accessible application's name (`zenity`, `gedit`, …).
    pub app: String,
    pub window: WindowIdentity,
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<ElementState>,
    /// Its box on the screen, in logical coordinates.
    pub rect: Rect,
    /// The ancestors from the window (exclusive) down to its parent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<PathStep>,
    /// For a cell or list item, the names of the other cells of its row (left
    /// to right); for a control, its label. Empty where neither exists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub band: Vec<String>,
    /// Which of its twins it is, where a person taught it (`reprise
    /// teach`): nothing else tells them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<Ordinal>,
}

/// The `index`-th (from 1) of `of` elements of one identity, in reading
/// order (top to bottom, then left to right).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ordinal {
    pub index: u32,
    pub of: u32,
}

impl Ordinal {
    /// `the 2nd of 2`.
    pub fn words(self) -> String {
        format!("{} of {}", nth_words(self.index), self.of)
    }
}

/// `the 2nd`, `the 11th`.
pub fn nth_words(index: u32) -> String {
    let suffix = match (index % 10, index % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("the {index}{suffix}")
}

impl ElementIdentity {
    /// An element of `app`'s `window` with no states, path or band.
    pub fn new(
        app: &str,
        window: WindowIdentity,
        role: Role,
        name: Option<&str>,
        rect: Rect,
    ) -> ElementIdentity {
        ElementIdentity {
            version: ELEMENT_VERSION,
            app: app.to_owned(),
            window,
            role,
            name: name.map(str::to_owned),
            states: Vec::new(),
            rect,
            path: Vec::new(),
            band: Vec::new(),
            ordinal: None,
        }
    }

    /// A short phrase for people: `table cell "Maria Olsen" (row: Bergen)`.
    pub fn label(&self) -> String {
        let mut label = role_name(self.role).to_owned();
        if let Some(name) = &self.name {
            label.push_str(&format!(" {name:?}"));
        }
        if !self.band.is_empty() {
            let what = if is_row_member(self.role) {
                "row"
            } else {
                "label"
            };
            label.push_str(&format!(" ({what}: {})", self.band.join(", ")));
        }
        label
    }
}

/// A role in words, as people read it.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Button => "button",
        Role::CheckBox => "checkbox",
        Role::RadioButton => "radio button",
        Role::ComboBox => "combo box",
        Role::TextInput => "text field",
        Role::PasswordInput => "password field",
        Role::SpinButton => "spin button",
        Role::Slider => "slider",
        Role::Link => "link",
        Role::Label => "label",
        Role::MenuItem | Role::MenuItemCheckBox | Role::MenuItemRadio => "menu item",
        Role::Menu | Role::MenuListPopup => "menu",
        Role::MenuBar => "menu bar",
        Role::Cell => "table cell",
        Role::Row => "row",
        Role::ListItem => "list item",
        Role::TreeItem => "tree item",
        Role::Tab => "tab",
        Role::Table => "table",
        Role::List | Role::ListBox => "list",
        Role::Image => "image",
        Role::Window => "window",
        Role::Dialog => "dialog",
        _ => "element",
    }
}

/// The role a word of [`role_name`] names (`text field`), for people who
/// write roles; the roles no word names are not written.
pub fn role_from_name(word: &str) -> Option<Role> {
    const ROLES: [Role; 24] = [
        Role::Button,
        Role::CheckBox,
        Role::RadioButton,
        Role::ComboBox,
        Role::TextInput,
        Role::PasswordInput,
        Role::SpinButton,
        Role::Slider,
        Role::Link,
        Role::Label,
        Role::MenuItem,
        Role::Menu,
        Role::MenuBar,
        Role::Cell,
        Role::Row,
        Role::ListItem,
        Role::TreeItem,
        Role::Tab,
        Role::Table,
        Role::List,
        Role::Image,
        Role::Window,
        Role::Dialog,
        Role::MultilineTextInput,
    ];
    let word = word.trim().to_lowercase();
    if word == "text area" {
        return Some(Role::MultilineTextInput);
    }
    ROLES.into_iter().find(|role| role_name(*role) == word)
}

/// Roles whose identity includes the other cells of their row.
pub fn is_row_member(role: Role) -> bool {
    matches!(
        role,
        Role::Cell | Role::GridCell | Role::ListItem | Role::TreeItem | Role::RowHeader
    )
}

/// Whether what is typed into an element of this role is a secret (a
/// password entry): its keys are never stored, its box never shown.
pub fn is_secret_field(role: Role) -> bool {
    role == Role::PasswordInput
}

/// Roles that keep the focus where a press put it and take what is typed
/// next: text fields, documents, terminals, and the cells and items of
/// lists and tables.
pub fn takes_typing(role: Role) -> bool {
    is_row_member(role)
        || matches!(
            role,
            Role::TextInput
                | Role::PasswordInput
                | Role::MultilineTextInput
                | Role::SearchInput
                | Role::Terminal
                | Role::Document
        )
}

/// Roles whose element is an identity though neither a name nor a label
/// says which: a text area, a document, a terminal (an editor's text is
/// often the one unnamed element of its kind in its window). Two such
/// elements nothing tells apart are twins, refused as any twins are.
pub fn stands_alone(role: Role) -> bool {
    takes_typing(role) && !is_row_member(role)
}

/// Roles whose identity includes their label.
fn is_labelled_control(role: Role) -> bool {
    matches!(
        role,
        Role::TextInput
            | Role::PasswordInput
            | Role::MultilineTextInput
            | Role::SearchInput
            | Role::ComboBox
            | Role::SpinButton
            | Role::Slider
            | Role::CheckBox
            | Role::RadioButton
            | Role::Switch
            | Role::Button
    )
}

/// The parent of every node (`None` for the root and unreachable nodes).
pub fn parents(tree: &A11yTree) -> Vec<Option<u32>> {
    let mut parents = vec![None; tree.nodes.len()];
    for (idx, node) in tree.nodes.iter().enumerate() {
        for &child in &node.children {
            if let Some(slot) = parents.get_mut(child as usize) {
                *slot = Some(idx as u32);
            }
        }
    }
    parents
}

fn named(node: &A11yNode) -> Option<&str> {
    node.name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
}

/// Whether two boxes share most of a row: their vertical overlap is at least
/// half the smaller height.
fn same_row(a: &Rect, b: &Rect) -> bool {
    let overlap = a.bottom().min(b.bottom()) - i64::from(a.top.max(b.top));
    overlap * 2 >= i64::from(a.height.min(b.height)).max(1)
}

/// The identity band of node `idx` among its parent's children.
pub fn band_of(tree: &A11yTree, parent: Option<u32>, idx: u32) -> Vec<String> {
    let node = &tree.nodes[idx as usize];
    let (Some(parent), Some(rect)) = (parent, node.rect) else {
        return Vec::new();
    };
    let siblings = tree.nodes[parent as usize]
        .children
        .iter()
        .copied()
        .filter(|&sibling| sibling != idx)
        .filter_map(|sibling| {
            let sibling = &tree.nodes[sibling as usize];
            Some((sibling, sibling.rect?, named(sibling)?))
        });
    if is_row_member(node.role) {
        let row_given = tree.nodes[parent as usize].role == Role::Row;
        let mut cells: Vec<(i32, String)> = siblings
            .filter(|(_, sibling_rect, _)| row_given || same_row(&rect, sibling_rect))
            .map(|(_, sibling_rect, name)| (sibling_rect.left, name.to_owned()))
            .collect();
        cells.sort_by_key(|(left, _)| *left);
        return cells.into_iter().map(|(_, name)| name).collect();
    }
    if is_labelled_control(node.role) && named(node).is_none() {
        // The nearest label on the same row to its left, else the nearest
        // one just above it.
        let labels: Vec<(Rect, &str)> = siblings
            .filter(|(sibling, _, _)| sibling.role == Role::Label)
            .map(|(_, sibling_rect, name)| (sibling_rect, name))
            .collect();
        let left = labels
            .iter()
            .filter(|(label, _)| same_row(&rect, label) && label.right() <= rect.right())
            .min_by_key(|(label, _)| i64::from(rect.left) - label.right());
        let above = || {
            labels
                .iter()
                .filter(|(label, _)| {
                    label.bottom() <= i64::from(rect.top) + 2
                        && i64::from(rect.top) - label.bottom() <= 2 * i64::from(rect.height)
                        && label.right() > i64::from(rect.left)
                        && i64::from(label.left) < rect.right()
                })
                .min_by_key(|(label, _)| i64::from(rect.top) - label.bottom())
        };
        return left
            .or_else(above)
            .map(|(_, name)| vec![(*name).to_owned()])
            .unwrap_or_default();
    }
    Vec::new()
}

/// The deepest showing node of `tree` under `point` (logical screen
/// coordinates): down from the root, into the smallest child whose box holds
/// the point, as AT-SPI's hit-testing descends (never into one scrolled out
/// of view).
pub fn deepest_at(tree: &A11yTree, point: (f64, f64)) -> Option<u32> {
    let holds = |idx: u32| {
        tree.nodes.get(idx as usize).is_some_and(|node| {
            !node.states.contains(&ElementState::Offscreen)
                && node
                    .rect
                    .is_some_and(|rect| rect.contains(point.0, point.1))
        })
    };
    let mut at = tree.root;
    if !holds(at) {
        return None;
    }
    for _ in 0..tree.nodes.len() {
        let next = tree.nodes[at as usize]
            .children
            .iter()
            .copied()
            .filter(|&child| holds(child))
            .min_by_key(|&child| {
                let rect = tree.nodes[child as usize].rect.expect("holds the point");
                u64::from(rect.width) * u64::from(rect.height)
            });
        match next {
            Some(child) => at = child,
            None => break,
        }
    }
    Some(at)
}

/// The element with the keyboard focus: of the nodes in the Focused state,
/// the one read last (the deepest, as trees are read from the root down).
pub fn focused(tree: &A11yTree) -> Option<u32> {
    tree.nodes
        .iter()
        .rposition(|node| node.states.contains(&ElementState::Focused))
        .map(|idx| idx as u32)
}

/// The identity of node `idx` itself, named or not (the focused element: a
/// password entry whose label sits elsewhere is still the password entry),
/// or of the text area it is an unnamed part of;
/// `None` for the root or a node with no box.
pub fn identity_of_node(tree: &A11yTree, app: &str, idx: u32) -> Option<ElementIdentity> {
    let parents = parents(tree);
    // An unnamed part of a text area that holds the focus (Qt's editors
    // give it to their viewport) stands for the text area.
    let idx = match (tree.nodes.get(idx as usize), parents.get(idx as usize)) {
        (Some(node), Some(&Some(parent)))
            if named(node).is_none()
                && !stands_alone(node.role)
                && stands_alone(tree.nodes[parent as usize].role)
                && parent != tree.root =>
        {
            parent
        }
        _ => idx,
    };
    let node = tree.nodes.get(idx as usize)?;
    if idx == tree.root || node.rect.is_none() {
        return None;
    }
    let band = band_of(tree, parents[idx as usize], idx);
    Some(identity_at(tree, &parents, app, idx, band))
}

/// The identity of node `idx` of `tree` (whose root is the window), or of
/// its nearest ancestor that has one when it has none itself (an unnamed
/// filler under the pointer). A node has one when it is named, has a band,
/// or [stands alone](stands_alone). `None` when nothing on the way up has an
/// identity, or the node has no box.
pub fn identity_of(tree: &A11yTree, app: &str, idx: u32) -> Option<ElementIdentity> {
    let parents = parents(tree);
    let mut at = idx;
    loop {
        let node = tree.nodes.get(at as usize)?;
        let band = band_of(tree, parents[at as usize], at);
        let is_root = at == tree.root;
        if !is_root
            && node.rect.is_some()
            && (named(node).is_some() || !band.is_empty() || stands_alone(node.role))
        {
            return Some(identity_at(tree, &parents, app, at, band));
        }
        at = parents[at as usize]?;
    }
}

fn identity_at(
    tree: &A11yTree,
    parents: &[Option<u32>],
    app: &str,
    idx: u32,
    band: Vec<String>,
) -> ElementIdentity {
    let node = &tree.nodes[idx as usize];
    let mut path = Vec::new();
    let mut up = parents[idx as usize];
    while let Some(ancestor) = up {
        if ancestor == tree.root {
            break;
        }
        let ancestor_node = &tree.nodes[ancestor as usize];
        path.push(PathStep {
            role: ancestor_node.role,
            name: named(ancestor_node).map(str::to_owned),
        });
        up = parents[ancestor as usize];
    }
    path.reverse();
    let root = &tree.nodes[tree.root as usize];
    ElementIdentity {
        version: ELEMENT_VERSION,
        app: app.to_owned(),
        window: WindowIdentity {
            role: root.role,
            name: named(root).map(str::to_owned),
        },
        role: node.role,
        name: named(node).map(str::to_owned),
        states: node.states.clone(),
        rect: node.rect.expect("identities are taken of nodes with a box"),
        path,
        band,
        ordinal: None,
    }
}

/// One row of [`outline`]: depth, role, name, and the box as
/// `(left, top, width, height)`.
pub type OutlineRow<'a> = (usize, Role, &'a str, (i32, i32, u32, u32));

/// A tree from `(depth, role, name, (left, top, width, height))` rows in
/// depth-first order, the root at depth 0: for tests and examples.
pub fn outline(rows: &[OutlineRow<'_>]) -> A11yTree {
    let mut nodes: Vec<A11yNode> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for &(depth, role, name, (left, top, width, height)) in rows {
        stack.truncate(depth);
        let idx = nodes.len();
        if let Some(&parent) = stack.last() {
            nodes[parent].children.push(idx as u32);
        }
        nodes.push(A11yNode {
            role,
            name: (!name.is_empty()).then(|| name.to_owned()),
            rect: Some(Rect::new(left, top, width, height)),
            states: Vec::new(),
            value: None,
            children: Vec::new(),
        });
        stack.push(idx);
    }
    A11yTree {
        app: String::new(),
        root: 0,
        nodes,
    }
}

/// Places the children of `container` listed in `unplaced`: rows or items
/// scrolled out of its view whose toolkit gives their size but no place
/// (GTK's tree view puts such a cell at about -2^31). Each goes in its
/// column (the placed children of its width whose place among the children
/// is a whole number of rows from its own: a row is as many children as the
/// nearest placed one shares its line with), that many rows from the
/// nearest, at the column's row pitch (its own height where one row alone
/// shows). One that cannot be placed so, or would land inside the
/// container's box (rows of uneven heights), loses its box. Each keeps the
/// [`ElementState::Offscreen`] state.
pub fn place_offscreen(tree: &mut A11yTree, container: u32, unplaced: &[u32]) {
    let Some(node) = tree.nodes.get(container as usize) else {
        return;
    };
    let view = node.rect;
    let children = node.children.clone();
    let unplaced: std::collections::HashSet<u32> = unplaced.iter().copied().collect();
    let placed: Vec<(usize, Rect)> = children
        .iter()
        .enumerate()
        .filter(|(_, child)| !unplaced.contains(child))
        .filter_map(|(at, &child)| Some((at, tree.nodes.get(child as usize)?.rect?)))
        .collect();
    // How many placed children share each placed child's line: a row's
    // width in children.
    let mut on_line: std::collections::HashMap<i32, usize> = std::collections::HashMap::new();
    for (_, rect) in &placed {
        *on_line.entry(rect.top).or_default() += 1;
    }
    for (at, &child) in children.iter().enumerate() {
        if !unplaced.contains(&child) {
            continue;
        }
        let size = tree.nodes[child as usize].rect;
        let place = size.and_then(|size| {
            // The nearest placed child of its column, and the row's width
            // in children there.
            let (near, near_rect, per_row) = placed
                .iter()
                .filter(|(_, rect)| rect.width == size.width)
                .filter_map(|&(near, rect)| {
                    let per_row = on_line[&rect.top];
                    (at.abs_diff(near) % per_row == 0).then_some((near, rect, per_row))
                })
                .min_by_key(|(near, _, _)| at.abs_diff(*near))?;
            let column: Vec<&(usize, Rect)> = placed
                .iter()
                .filter(|(other, rect)| {
                    rect.width == size.width
                        && rect.left == near_rect.left
                        && other.abs_diff(near) % per_row == 0
                })
                .collect();
            let pitch = match (column.first(), column.last()) {
                (Some((first, first_rect)), Some((last, last_rect))) if last > first => {
                    f64::from(last_rect.top - first_rect.top) / ((last - first) / per_row) as f64
                }
                _ => f64::from(size.height),
            };
            let rows = (at as f64 - near as f64) / per_row as f64;
            let rect = Rect::new(
                near_rect.left,
                near_rect.top + (rows * pitch).round() as i32,
                size.width,
                size.height,
            );
            (pitch > 0.0 && view.is_none_or(|view| view.intersection(&rect).is_none()))
                .then_some(rect)
        });
        tree.nodes[child as usize].rect = place;
    }
}

#[cfg(test)]
mod tests;
