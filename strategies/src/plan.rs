//! Replay's steps from the reduced trees, with keys as the person held them.
//!
//! `reduce` keeps OpenAdapt's trees (they compare with OpenAdapt's own), in
//! which `press ctrl, press s, release ctrl, release s` gives `type <ctrl>-s`
//! with `release s` in the next tree, and a typed path with capitals becomes
//! a tree per capital. Replayed tree by tree, a key stays held through the
//! wait for the screen to settle between two steps, and X's autorepeat types
//! it dozens of times. So replay plans its steps in two passes:
//! 1. a key released in a later tree is released in the tree that pressed
//!    it (at its recorded time, so within the same step);
//! 2. consecutive key trees typed into the same window, with no pointer
//!    action between them, become one typing step at the recorded pace. A
//!    change of window splits them: keys typed into a dialog wait for it.

use reprise_models::{ActionEvent, EventName, WindowState};

use crate::KeySpec;

/// The trees as replay steps (see the module's passes). `windows` are the
/// recording's window states, which say where each tree's keys went.
pub fn plan_steps(trees: Vec<ActionEvent>, windows: &[WindowState]) -> Vec<ActionEvent> {
    join_typing(release_where_pressed(trees), windows)
}

fn is_key_tree(tree: &ActionEvent) -> bool {
    tree.name.is_key()
}

/// The raw key events of a tree, in order.
fn leaves(tree: ActionEvent) -> Vec<ActionEvent> {
    if tree.children.is_empty() {
        return vec![tree];
    }
    tree.children.into_iter().flat_map(leaves).collect()
}

/// The keys a tree leaves held: pressed in it and not released in it.
fn held_after(tree: &ActionEvent) -> Vec<KeySpec> {
    let mut held: Vec<KeySpec> = Vec::new();
    let mut visit = |event: &ActionEvent| {
        let Some(key) = KeySpec::of_event(event) else {
            return;
        };
        match event.name {
            EventName::Press if !held.contains(&key) => held.push(key),
            EventName::Release => held.retain(|other| other != &key),
            _ => {}
        }
    };
    fn walk(tree: &ActionEvent, visit: &mut dyn FnMut(&ActionEvent)) {
        if tree.children.is_empty() {
            visit(tree);
        }
        for child in &tree.children {
            walk(child, visit);
        }
    }
    walk(tree, &mut visit);
    held
}

/// A typing parent over `children` (raw key events), as `reduce` makes them.
fn typing_tree(children: Vec<ActionEvent>) -> ActionEvent {
    let first = &children[0];
    let mut tree = ActionEvent::new(EventName::Type, first.timestamp);
    tree.screenshot_id = first.screenshot_id;
    tree.window_state_id = first.window_state_id;
    tree.children = children;
    tree.fill_text();
    tree
}

/// Pass 1: the releases at the start of a key tree whose keys the key tree
/// before it left held move into that tree.
fn release_where_pressed(trees: Vec<ActionEvent>) -> Vec<ActionEvent> {
    let mut planned: Vec<ActionEvent> = Vec::with_capacity(trees.len());
    for tree in trees {
        let previous_held = planned
            .last()
            .filter(|previous| is_key_tree(previous))
            .map(held_after)
            .unwrap_or_default();
        if !is_key_tree(&tree) || previous_held.is_empty() {
            planned.push(tree);
            continue;
        }
        let mut events = leaves(tree);
        let n_moved = events
            .iter()
            .take_while(|event| {
                event.name == EventName::Release
                    && KeySpec::of_event(event).is_some_and(|key| previous_held.contains(&key))
            })
            .count();
        let moved: Vec<ActionEvent> = events.drain(..n_moved).collect();
        let previous = planned.pop().expect("a key tree before this one");
        let mut joined = leaves(previous);
        joined.extend(moved);
        planned.push(typing_tree(joined));
        if !events.is_empty() {
            planned.push(typing_tree(events));
        }
    }
    planned
}

/// The X window (or the platform's) a tree's keys went to.
fn window_of(tree: &ActionEvent, windows: &[WindowState]) -> Option<u64> {
    tree.window_state_id
        .and_then(|id| windows.get(id as usize))
        .map(|window| window.window_id)
}

/// Pass 2: consecutive key trees in the same window become one.
fn join_typing(trees: Vec<ActionEvent>, windows: &[WindowState]) -> Vec<ActionEvent> {
    let mut planned: Vec<ActionEvent> = Vec::with_capacity(trees.len());
    for tree in trees {
        let joins = planned.last().is_some_and(|previous| {
            is_key_tree(previous)
                && is_key_tree(&tree)
                && window_of(previous, windows) == window_of(&tree, windows)
        });
        if !joins {
            planned.push(tree);
            continue;
        }
        let previous = planned.pop().expect("checked above");
        let mut children = leaves(previous);
        children.extend(leaves(tree));
        planned.push(typing_tree(children));
    }
    planned
}

#[cfg(test)]
mod tests;
