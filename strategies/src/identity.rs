//! Identity rules and the structural rung: find the element a person acted on
//! again in a live accessibility tree, by who it is (role, name, the row or
//! label it belongs to, its place in the window), never by where it was.
//!
//! The rules, each unit-tested below:
//! - identity is role + name + band; two names are the same name only when
//!   they differ by nothing but case, white space, a trailing ellipsis or
//!   colon (what toolkits change between versions); "Olsen" is never "Olson";
//! - a row member (cell, list item) must have the recorded band: a namesake in
//!   another row is another element;
//! - candidates that the band and the path cannot tell apart are refused,
//!   with every candidate named;
//! - no candidate in a tree that names what it shows means the target is
//!   gone: refused, never replaced by a pixel guess;
//! - the one candidate, scrolled out of view (the press would land outside
//!   the list, table or scroll pane around it), is never pressed where its
//!   box is (what shows there is something else): it is scrolled into view
//!   first (`scroll.rs`), or refused where no point of the view lets the
//!   wheel through, or where it lies outside its window.

use reprise_models::element::{band_of, is_row_member, parents};
use reprise_models::{A11yTree, ElementIdentity, Rect, identity_of};

/// A window's tree names what it shows when it has at least this many named
/// elements with a box; below that an absent target may just be unexposed,
/// and the visual rung decides.
pub const RICH_TREE_NAMED_NODES: usize = 3;

/// Which rung found nothing, or what it found.
#[derive(Debug, Clone, PartialEq)]
pub enum StructuralAnswer {
    /// Exactly one live element is the recorded one.
    Found {
        node_idx: u32,
        rect: Rect,
        /// Where to act, in logical screen coordinates: the recorded offset
        /// inside the element, scaled to its live box.
        point: (f64, f64),
        evidence: String,
    },
    /// Exactly one live element is the recorded one, but it is scrolled
    /// out of the view around it: turn the wheel at `wheel` (logical
    /// screen coordinates, over the view) to bring it in, then look again.
    OutOfView {
        node_idx: u32,
        rect: Rect,
        /// The box of the view it is scrolled out of.
        view: Rect,
        wheel: (f64, f64),
        /// Who it is (`table cell "Maria Olsen" (row: Tromsø)`).
        label: String,
        /// Where it is, in words (`at (516, 532), outside its table at …`).
        place: String,
    },
    /// Several live elements fit and nothing tells them apart: each, in
    /// reading order (top to bottom, then left to right).
    Ambiguous { candidates: Vec<Twin> },
    /// The tree names what it shows, and the target is not among it.
    Gone { reason: String },
    /// The tree is too poor to decide: let the visual rung decide.
    NoAnswer,
}

/// A name as toolkits may render it differently: case, runs of white space,
/// a trailing ellipsis or colon, and GTK's mnemonic underscores.
pub fn normalize_name(name: &str) -> String {
    let mut text = name.trim().to_lowercase();
    loop {
        let trimmed = text
            .trim_end_matches('…')
            .trim_end_matches("...")
            .trim_end_matches(':')
            .trim_end();
        if trimmed.len() == text.len() {
            break;
        }
        text = trimmed.to_owned();
    }
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('_', "")
}

/// Whether two accessible names are the same name (see [`normalize_name`]);
/// any other difference, one letter or digit, makes another element.
pub fn same_name(recorded: Option<&str>, live: Option<&str>) -> bool {
    match (recorded, live) {
        (None, None) => true,
        (Some(recorded), Some(live)) => normalize_name(recorded) == normalize_name(live),
        (Some(name), None) | (None, Some(name)) => normalize_name(name).is_empty(),
    }
}

/// A text in the form OCR's confusions cannot change: normalised as
/// descriptions are, `rn` as `m`, `1` and `i` as `l`, `0` as `o`.
fn as_read(text: &str) -> String {
    crate::describe::normalise(&normalize_name(text))
        .replace("rn", "m")
        .chars()
        .map(|c| match c {
            '1' | 'i' => 'l',
            '0' => 'o',
            other => other,
        })
        .collect()
}

/// Whether two texts read from pixels (a recorded target's and a live
/// candidate's) can be one name: equal once case, white space and the
/// confusions OCR makes (see [`reads_as`]) are set aside. Any other
/// difference, a letter or a digit, is another element, however similar:
/// "olsen" is never "olson", "invoice 1042" never "invoice 1043". A lone
/// glyph is one name only with itself; two empty readings are not a name.
pub fn same_reading(recorded: &str, live: &str) -> bool {
    let (recorded_words, live_words) = (as_read(recorded), as_read(live));
    if recorded_words.is_empty() && live_words.is_empty() {
        // A lone glyph (a calculator's `+`) is its own name, exactly.
        let glyph = recorded.trim();
        return !glyph.is_empty() && glyph == live.trim();
    }
    !recorded_words.is_empty() && recorded_words == live_words
}

/// Whether text read from pixels (OCR, normalised as descriptions are)
/// reads as the accessible name `name`: the same words once the confusions
/// OCR makes are set aside (`l`/`1`/`i`, `o`/`0`, `rn`/`m`, a letter
/// beyond its alphabet read as another), possibly followed by more (a menu
/// item's shortcut). Any other difference, a letter or a digit, is another
/// element.
pub fn reads_as(name: &str, read: &str) -> bool {
    let (name, read) = (as_read(name), as_read(read));
    if name.is_empty() {
        return false;
    }
    match strip_read(&name, &read) {
        Some("") => true,
        // Only a keyboard shortcut may follow ("Save As  Shift+Ctrl+S").
        Some(rest) => rest.starts_with(' ') && rest.split_whitespace().all(is_shortcut_word),
        None => false,
    }
}

/// What follows a start of `read` (text the pixels show, a line of them)
/// that reads as `name` as [`reads_as`] reads it, in the form OCR's
/// confusions cannot change; `None` where `read` does not start with it or
/// the name ends inside a word ("olsen" in "olsenby").
pub fn rest_after(name: &str, read: &str) -> Option<String> {
    let (name, read) = (as_read(name), as_read(read));
    if name.is_empty() {
        return None;
    }
    let rest = strip_read(&name, &read)?;
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim_start().to_owned())
}

/// Whether `text` reads somewhere in `read` (whole words of it, OCR's
/// confusions set aside as in [`reads_as`]): "tromsø" in "maria olsen
/// tromse", never "oslo" in "osloby".
pub fn reads_within(text: &str, read: &str) -> bool {
    let (text, read) = (as_read(text), as_read(read));
    if text.is_empty() {
        return false;
    }
    let mut starts = std::iter::once(0).chain(read.match_indices(' ').map(|(at, _)| at + 1));
    starts.any(|start| {
        strip_read(&text, &read[start..])
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    })
}

/// `read` without a start that reads as `name`: the same characters, where
/// a letter beyond OCR's alphabet (ø, é, ß) may be read as any one letter or
/// digit ("Tromsø" as "tromse"); any other difference is none.
fn strip_read<'a>(name: &str, read: &'a str) -> Option<&'a str> {
    let mut rest = read;
    for wanted in name.chars() {
        let mut chars = rest.chars();
        let got = chars.next()?;
        let fits = got == wanted
            || (!wanted.is_ascii() && wanted.is_alphanumeric() && got.is_alphanumeric());
        if !fits {
            return None;
        }
        rest = chars.as_str();
    }
    Some(rest)
}

/// A word of a keyboard shortcut as OCR reads it (after the confusions of
/// [`reads_as`]): a modifier, a named key, one character, or F1 to F24.
fn is_shortcut_word(word: &str) -> bool {
    // In their canonical forms: "shift" reads "shlft", "ins" "lns".
    const KEYS: [&str; 18] = [
        "ctrl",
        "shlft",
        "alt",
        "super",
        "meta",
        "cmd",
        "del",
        "delete",
        "lns",
        "enter",
        "esc",
        "tab",
        "space",
        "backspace",
        "home",
        "end",
        "pgup",
        "pgdn",
    ];
    KEYS.contains(&word)
        || word.chars().count() == 1
        || word.strip_prefix('f').is_some_and(|digits| {
            !digits.is_empty()
                && digits
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == 'l' || c == 'o')
        })
}

fn same_band(recorded: &[String], live: &[String]) -> bool {
    recorded.len() == live.len()
        && recorded
            .iter()
            .zip(live)
            .all(|(recorded, live)| same_name(Some(recorded), Some(live)))
}

/// How many of the recorded path's steps the live path has, in order, and
/// then whether it is the whole path, no deeper: an element nested in one
/// more container (a text field inside a combo box) is not the one recorded
/// beside it.
fn path_score(recorded: &ElementIdentity, live: &ElementIdentity) -> (usize, bool) {
    let matched = recorded
        .path
        .iter()
        .zip(&live.path)
        .take_while(|(recorded, live)| {
            recorded.role == live.role && same_name(recorded.name.as_deref(), live.name.as_deref())
        })
        .count();
    (
        matched,
        matched == recorded.path.len() && live.path.len() == recorded.path.len(),
    )
}

/// Whether keys meant for `recorded` (the element that had the focus when the
/// person typed) would go to another element: the recorded one is found in
/// the live tree but does not have the focus, and another element, neither
/// inside it nor around it, does (of several marked focused, the deepest is
/// named). That element's description, or `None`
/// when the keys would go to the recorded one, or the tree cannot tell
/// (the element is not found, or nothing reports the focus).
pub fn focus_elsewhere(recorded: &ElementIdentity, live: &A11yTree) -> Option<String> {
    let StructuralAnswer::Found { node_idx, .. } = locate(recorded, recorded.rect.center(), live)
    else {
        return None;
    };
    let focused = |idx: usize| {
        live.nodes[idx]
            .states
            .contains(&reprise_models::ElementState::Focused)
    };
    let parents = parents(live);
    let within = |idx: u32, root: u32| {
        let mut at = Some(idx);
        while let Some(node) = at {
            if node == root {
                return true;
            }
            at = parents[node as usize];
        }
        false
    };
    // A toolkit may mark more than one element focused (Qt marks its tab
    // widget's current tab beside the text area that has the keys): the
    // recorded one among them, or inside or around one, has them.
    let holders: Vec<u32> = (0..live.nodes.len() as u32)
        .filter(|&idx| focused(idx as usize))
        .collect();
    if holders
        .iter()
        .any(|&holder| within(holder, node_idx) || within(node_idx, holder))
    {
        return None;
    }
    let holder = *holders.last()?;
    Some(described(live, &parents, holder, "another"))
}

/// Finds `recorded` (pressed at `press`, logical screen coordinates) in the
/// live tree of its window.
pub fn locate(recorded: &ElementIdentity, press: (f64, f64), live: &A11yTree) -> StructuralAnswer {
    let parents = parents(live);
    let named_nodes = live
        .nodes
        .iter()
        .filter(|node| node.rect.is_some() && node.name.as_deref().is_some_and(|n| !n.is_empty()))
        .count();
    let candidates = candidates(recorded, live, &parents);
    let with_band: Vec<&(u32, ElementIdentity)> = candidates
        .iter()
        .filter(|(_, identity)| same_band(&recorded.band, &identity.band))
        .collect();
    let chosen: Vec<&(u32, ElementIdentity)> =
        if is_row_member(recorded.role) || recorded.name.is_none() || !with_band.is_empty() {
            with_band
        } else {
            // A control whose label moved or changed is still itself when its
            // name says so.
            candidates.iter().collect()
        };
    if chosen.is_empty() {
        return none_chosen(recorded, &candidates, named_nodes);
    }
    // Among equals, the one whose path from the window matches further.
    let best = chosen
        .iter()
        .map(|(_, identity)| path_score(recorded, identity))
        .max()
        .unwrap_or_default();
    let best: Vec<&&(u32, ElementIdentity)> = chosen
        .iter()
        .filter(|(_, identity)| path_score(recorded, identity) == best)
        .collect();
    let chosen_among = best.len();
    let (node_idx, identity) = match twins::choose(recorded, best) {
        Ok(chosen) => chosen,
        Err(candidates) => return StructuralAnswer::Ambiguous { candidates },
    };
    let point = offset_point(&recorded.rect, press, &identity.rect);
    if let Some(hidden) = hidden_at(live, &parents, *node_idx, point) {
        return out_of_sight(live, &parents, (*node_idx, identity), point, hidden);
    }
    if live.nodes[*node_idx as usize]
        .states
        .contains(&reprise_models::ElementState::Offscreen)
    {
        // Out of its list's view, at a place the list's view holds (the
        // toolkit's box or the guess at it is wrong): never pressed.
        return StructuralAnswer::Gone {
            reason: format!(
                "{} is in the window's accessibility tree but does not show, and where it is cannot be told: refusing to press where it does not show",
                identity.label()
            ),
        };
    }
    StructuralAnswer::Found {
        node_idx: *node_idx,
        rect: identity.rect,
        point,
        evidence: format!(
            "{} in {}{}",
            identity.label(),
            recorded
                .window
                .name
                .as_deref()
                .map_or_else(|| "its window".to_owned(), |name| format!("{name:?}")),
            twins::taught(recorded, chosen_among).map_or_else(String::new, |ordinal| {
                format!(", {} twins in reading order, as taught", ordinal.words())
            })
        ),
    }
}

/// The nodes of `live` that may be `recorded`: its role and name first
/// (cheap), then the identity of each survivor, whose box must be the
/// node's (an unnamed recorded element is identified by its band alone).
fn candidates(
    recorded: &ElementIdentity,
    live: &A11yTree,
    parents: &[Option<u32>],
) -> Vec<(u32, ElementIdentity)> {
    (0..live.nodes.len() as u32)
        .filter(|&idx| {
            let node = &live.nodes[idx as usize];
            node.role == recorded.role
                && node.rect.is_some()
                && same_name(recorded.name.as_deref(), node.name.as_deref())
        })
        .filter_map(|idx| {
            let band = band_of(live, parents[idx as usize], idx);
            if recorded.name.is_none()
                && band.is_empty()
                && !reprise_models::element::stands_alone(recorded.role)
            {
                return None;
            }
            let identity = identity_of(live, &recorded.app, idx)?;
            (identity.rect == live.nodes[idx as usize].rect.expect("filtered on a box"))
                .then_some((idx, identity))
        })
        .collect()
}

/// No candidate agrees with `recorded`: no answer from a tree too poor to
/// tell (fewer than [`RICH_TREE_NAMED_NODES`] named elements), else gone,
/// naming the namesakes that did not agree.
fn none_chosen(
    recorded: &ElementIdentity,
    candidates: &[(u32, ElementIdentity)],
    named_nodes: usize,
) -> StructuralAnswer {
    if named_nodes < RICH_TREE_NAMED_NODES {
        return StructuralAnswer::NoAnswer;
    }
    let namesakes: Vec<String> = candidates
        .iter()
        .map(|(_, identity)| identity.label())
        .collect();
    let reason = if namesakes.is_empty() {
        format!(
            "no {} in the window's accessibility tree ({named_nodes} named elements)",
            recorded.label()
        )
    } else {
        format!(
            "no {} in the window's accessibility tree; only {}",
            recorded.label(),
            namesakes.join("; ")
        )
    };
    StructuralAnswer::Gone { reason }
}

/// The point at the same relative place in `live` as `press` was in
/// `recorded`, kept a pixel inside the box.
pub fn offset_point(recorded: &Rect, press: (f64, f64), live: &Rect) -> (f64, f64) {
    let along = |at: f64, start: i32, length: u32| {
        if length == 0 {
            0.5
        } else {
            ((at - f64::from(start)) / f64::from(length)).clamp(0.0, 1.0)
        }
    };
    let inside = |start: i32, length: u32, fraction: f64| {
        let length = f64::from(length);
        let at = f64::from(start) + fraction * length;
        at.clamp(
            f64::from(start) + 1.0_f64.min(length / 2.0),
            f64::from(start) + (length - 1.0).max(length / 2.0),
        )
    };
    let fx = along(press.0, recorded.left, recorded.width);
    let fy = along(press.1, recorded.top, recorded.height);
    (
        inside(live.left, live.width, fx),
        inside(live.top, live.height, fy),
    )
}

pub mod fit;
mod hidden;
pub mod labels;
pub mod recheck;
mod twins;
use hidden::{described, hidden_at, out_of_sight};
pub use recheck::same_element_at;
pub use twins::Twin;

#[cfg(test)]
mod tests;
