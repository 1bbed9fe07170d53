//! The reduction of raw events into parent/child trees.
//!
//! It follows the passes of OpenAdapt's legacy `events.py`, in its order:
//! 1. remove invalid key events (virtual key 0);
//! 2. remove redundant mouse moves (they become children of the next kept event);
//! 3. group consecutive key events into `type` parents, cutting at chords;
//! 4. merge runs of two or more moves into a `move` parent;
//! 5. merge runs of scrolls into a `scroll` parent with summed deltas;
//! 6. fuse left-button presses and releases into `singleclick` and `doubleclick`.
//!
//! Two deliberate differences from OpenAdapt, both bugs there: timestamps are
//! never "compressed" (a parent's timestamp is its first child's and no child's
//! changes), and no event is ever dropped (a lone trailing key event stays, as a
//! group of one; redundant moves with no later kept event stay under the last
//! kept event of their run).

use std::collections::HashMap;

use crate::{ActionEvent, DoubleClickSettings, EventName, MouseButton};

/// Settings for [`reduce`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReduceOptions {
    pub double_click: DoubleClickSettings,
}

/// Reduces raw events, in time order, into event trees with `text` filled in.
pub fn reduce(raw_events: Vec<ActionEvent>, options: &ReduceOptions) -> Vec<ActionEvent> {
    let events = remove_invalid_key_events(raw_events);
    let events = merge_runs(events, is_move_or_click, absorb_redundant_moves);
    let events = merge_runs(events, ActionEvent::is_raw_key, group_key_events);
    let events = merge_runs(events, |event| event.name == EventName::Move, merge_moves);
    let events = merge_runs(
        events,
        |event| event.name == EventName::Scroll,
        merge_scrolls,
    );
    let mut events = merge_runs(events, is_left_click, |run| {
        fuse_clicks(run, &options.double_click)
    });
    for event in &mut events {
        event.fill_text();
    }
    events
}

/// Passes every maximal run of consecutive events that satisfy `is_target` to
/// `merge`, and every other event through unchanged. The result is written
/// into the input's own slots (a merge never gives back more events than its
/// run held), so a pass holds one list of events, not two: a million events
/// are hundreds of MB.
fn merge_runs(
    mut events: Vec<ActionEvent>,
    is_target: impl Fn(&ActionEvent) -> bool,
    mut merge: impl FnMut(Vec<ActionEvent>) -> Vec<ActionEvent>,
) -> Vec<ActionEvent> {
    let mut written = 0;
    let mut run = Vec::new();
    let mut put = |events: &mut Vec<ActionEvent>, merged: Vec<ActionEvent>, read: usize| {
        assert!(
            written + merged.len() <= read,
            "a merge gave back more events than its run held"
        );
        for event in merged {
            events[written] = event;
            written += 1;
        }
    };
    for read in 0..events.len() {
        let event = std::mem::replace(&mut events[read], ActionEvent::new(EventName::Move, 0.0));
        if is_target(&event) {
            run.push(event);
            continue;
        }
        if !run.is_empty() {
            put(&mut events, merge(std::mem::take(&mut run)), read);
        }
        put(&mut events, vec![event], read + 1);
    }
    let end = events.len();
    if !run.is_empty() {
        put(&mut events, merge(run), end);
    }
    events.truncate(written);
    events
}

fn remove_invalid_key_events(events: Vec<ActionEvent>) -> Vec<ActionEvent> {
    events
        .into_iter()
        .filter(|event| !(event.is_raw_key() && event.key_vk == Some(0)))
        .collect()
}

fn is_move_or_click(event: &ActionEvent) -> bool {
    matches!(event.name, EventName::Move | EventName::Click)
}

fn is_left_click(event: &ActionEvent) -> bool {
    event.name == EventName::Click && event.mouse_button_name == Some(MouseButton::Left)
}

fn same_position(a: Option<&ActionEvent>, b: Option<&ActionEvent>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.mouse_x == b.mouse_x && a.mouse_y == b.mouse_y,
        _ => false,
    }
}

/// In a run of moves and clicks, a move at the same position as the event
/// before or after it in the run adds nothing: it becomes a child of the next
/// kept event. Trailing ones go under the last kept event; a run where nothing
/// is kept keeps its last move, with the others as its children.
fn absorb_redundant_moves(run: Vec<ActionEvent>) -> Vec<ActionEvent> {
    let redundant: Vec<bool> = (0..run.len())
        .map(|idx| {
            let event = &run[idx];
            let prev = idx.checked_sub(1).map(|prev_idx| &run[prev_idx]);
            let next = run.get(idx + 1);
            event.name == EventName::Move
                && (same_position(prev, Some(event)) || same_position(Some(event), next))
        })
        .collect();
    let mut kept: Vec<ActionEvent> = Vec::with_capacity(run.len());
    let mut absorbed: Vec<ActionEvent> = Vec::new();
    for (event, is_redundant) in run.into_iter().zip(redundant) {
        if is_redundant {
            absorbed.push(event);
        } else {
            let mut event = event;
            if !absorbed.is_empty() {
                absorbed.append(&mut event.children);
                event.children = std::mem::take(&mut absorbed);
            }
            kept.push(event);
        }
    }
    if !absorbed.is_empty() {
        match kept.last_mut() {
            Some(last_kept) => last_kept.children.append(&mut absorbed),
            None => {
                let mut last = absorbed.pop().expect("absorbed is not empty");
                absorbed.append(&mut last.children);
                last.children = absorbed;
                kept.push(last);
            }
        }
    }
    kept
}

/// Groups a run of key presses and releases, cutting where the set of held
/// named keys becomes non-empty (before that press) and where it becomes empty
/// again (after that release). A group of one passes through unchanged.
fn group_key_events(run: Vec<ActionEvent>) -> Vec<ActionEvent> {
    let mut held: Vec<String> = Vec::new();
    let mut was_held = false;
    let mut start_idx = 0;
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for (event_idx, event) in run.iter().enumerate() {
        if let Some(key) = event.key_name.as_deref() {
            let position = held.iter().position(|held_key| held_key == key);
            match (event.name, position) {
                (EventName::Press, None) => held.push(key.to_owned()),
                (EventName::Release, Some(held_idx)) => {
                    held.remove(held_idx);
                }
                // A repeated press of a held key (auto-repeat) or a release of a
                // key pressed before the run changes nothing.
                _ => {}
            }
        }
        let is_held = !held.is_empty();
        let group_start = is_held && !was_held;
        let group_end = was_held && !is_held;
        if group_start || group_end {
            let end_idx = event_idx + usize::from(group_end);
            if end_idx > start_idx {
                cuts.push((start_idx, end_idx));
            }
            start_idx = end_idx;
        }
        was_held = is_held;
    }
    if start_idx < run.len() {
        cuts.push((start_idx, run.len()));
    }
    let mut events = run.into_iter();
    cuts.into_iter()
        .map(|(start, end)| {
            let group: Vec<ActionEvent> = events.by_ref().take(end - start).collect();
            if group.len() == 1 {
                group.into_iter().next().expect("a group of one")
            } else {
                ActionEvent::parent(EventName::Type, group)
            }
        })
        .collect()
}

/// A run of two or more moves becomes one `move` at the last child's position.
fn merge_moves(run: Vec<ActionEvent>) -> Vec<ActionEvent> {
    if run.len() < 2 {
        return run;
    }
    let last = run.last().expect("run has two events");
    let (mouse_x, mouse_y) = (last.mouse_x, last.mouse_y);
    let mut parent = ActionEvent::parent(EventName::Move, run);
    parent.mouse_x = mouse_x;
    parent.mouse_y = mouse_y;
    vec![parent]
}

/// A run of scrolls (a run of one too) becomes one `scroll` at the first
/// child's position with the deltas summed.
fn merge_scrolls(run: Vec<ActionEvent>) -> Vec<ActionEvent> {
    fn sum(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
        values.fold(None, |total, value| match (total, value) {
            (None, None) => None,
            (total, value) => Some(total.unwrap_or(0.0) + value.unwrap_or(0.0)),
        })
    }
    let mouse_dx = sum(run.iter().map(|event| event.mouse_dx));
    let mouse_dy = sum(run.iter().map(|event| event.mouse_dy));
    let (mouse_x, mouse_y) = (run[0].mouse_x, run[0].mouse_y);
    let mut parent = ActionEvent::parent(EventName::Scroll, run);
    parent.mouse_x = mouse_x;
    parent.mouse_y = mouse_y;
    parent.mouse_dx = mouse_dx;
    parent.mouse_dy = mouse_dy;
    vec![parent]
}

/// Fuses a run of left-button events: a press whose next press is within the
/// double-click interval and within the distance on each axis (both inclusive)
/// gives a `doubleclick` of `[press, release, press, release]`; any other press
/// with a release gives a `singleclick` of `[press, release]`; a press without a
/// release, or a release without a press, stays a raw `click`.
fn fuse_clicks(run: Vec<ActionEvent>, settings: &DoubleClickSettings) -> Vec<ActionEvent> {
    let mut next_press_of: HashMap<usize, usize> = HashMap::new();
    let mut release_of: HashMap<usize, usize> = HashMap::new();
    let mut prev_press: Option<usize> = None;
    for (idx, event) in run.iter().enumerate() {
        match event.mouse_pressed {
            Some(true) => {
                if let Some(prev_idx) = prev_press
                    && is_double_click(&run[prev_idx], event, settings)
                {
                    next_press_of.insert(prev_idx, idx);
                }
                prev_press = Some(idx);
            }
            Some(false) => {
                if let Some(prev_idx) = prev_press {
                    release_of.entry(prev_idx).or_insert(idx);
                }
            }
            None => {}
        }
    }

    let mut slots: Vec<Option<ActionEvent>> = run.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for idx in 0..slots.len() {
        let Some(event) = slots[idx].take() else {
            continue;
        };
        let release_idx = release_of.get(&idx).copied();
        let double = next_press_of.get(&idx).and_then(|&next_idx| {
            let next_release_idx = *release_of.get(&next_idx)?;
            Some((release_idx?, next_idx, next_release_idx))
        });
        let (name, children) = if let Some((release_idx, next_idx, next_release_idx)) = double {
            let mut take =
                |slot_idx: usize| slots[slot_idx].take().expect("each event is used once");
            let children = vec![
                event,
                take(release_idx),
                take(next_idx),
                take(next_release_idx),
            ];
            (EventName::Doubleclick, children)
        } else if let Some(release_idx) = release_idx {
            let release = slots[release_idx].take().expect("each event is used once");
            (EventName::Singleclick, vec![event, release])
        } else {
            out.push(event);
            continue;
        };
        let (mouse_x, mouse_y) = (children[0].mouse_x, children[0].mouse_y);
        let mut parent = ActionEvent::parent(name, children);
        parent.mouse_x = mouse_x;
        parent.mouse_y = mouse_y;
        parent.mouse_button_name = Some(MouseButton::Left);
        out.push(parent);
    }
    out
}

fn is_double_click(
    first: &ActionEvent,
    second: &ActionEvent,
    settings: &DoubleClickSettings,
) -> bool {
    let (Some((x0, y0)), Some((x1, y1))) = (first.position(), second.position()) else {
        return false;
    };
    // Both bounds are inclusive; the epsilon keeps a press recorded exactly at
    // the interval inside it despite the rounding of a subtraction of seconds.
    const EPSILON: f64 = 1e-9;
    second.timestamp - first.timestamp <= settings.interval_seconds + EPSILON
        && (x1 - x0).abs() <= settings.distance_pixels + EPSILON
        && (y1 - y0).abs() <= settings.distance_pixels + EPSILON
}

#[cfg(test)]
mod tests;
