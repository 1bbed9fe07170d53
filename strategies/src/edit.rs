//! Deterministic edits of a recording before it is replayed: `--replace
//! OLD=NEW` substitutes typed text, with no model.

use reprise_models::{ActionEvent, EventName};

/// The characters a key tree types, when it types only characters (no named
/// key such as ctrl or enter inside it).
pub fn typed_text(tree: &ActionEvent) -> Option<String> {
    if !matches!(
        tree.name,
        EventName::Type | EventName::Press | EventName::Release
    ) {
        return None;
    }
    let leaves: Vec<&ActionEvent> = if tree.children.is_empty() {
        vec![tree]
    } else {
        tree.children.iter().collect()
    };
    let mut text = String::new();
    for leaf in leaves {
        if leaf.key_name.is_some() || leaf.canonical_key_name.is_some() {
            return None;
        }
        if leaf.name == EventName::Press {
            text.push_str(
                leaf.key_char
                    .as_deref()
                    .or(leaf.canonical_key_char.as_deref())?,
            );
        }
    }
    Some(text)
}

/// A tree that types `text`: a press and a release per character, spaced as
/// the original tree was on average.
fn typing_tree(original: &ActionEvent, text: &str) -> ActionEvent {
    let leaves = if original.children.is_empty() {
        std::slice::from_ref(original)
    } else {
        &original.children
    };
    let typed = crate::params::typing_leaves(leaves, text);
    let mut tree = if typed.is_empty() {
        // Nothing left to type (`--replace alice=`): a step with no keys.
        let mut empty = ActionEvent::new(EventName::Type, original.timestamp);
        empty.screenshot_id = original.screenshot_id;
        empty.window_state_id = original.window_state_id;
        empty
    } else {
        ActionEvent::parent(EventName::Type, typed)
    };
    tree.fill_text();
    tree
}

/// Applies every `(old, new)` substitution to the text each key tree types;
/// returns the trees and how many substitutions were made.
pub fn replace_typed_text(
    trees: Vec<ActionEvent>,
    replacements: &[(String, String)],
) -> (Vec<ActionEvent>, usize) {
    let mut n_replaced = 0;
    let trees = trees
        .into_iter()
        .map(|tree| {
            let Some(text) = typed_text(&tree) else {
                return tree;
            };
            let mut edited = text.clone();
            for (old, new) in replacements {
                if !old.is_empty() && edited.contains(old.as_str()) {
                    n_replaced += edited.matches(old.as_str()).count();
                    edited = edited.replace(old.as_str(), new);
                }
            }
            if edited == text {
                tree
            } else {
                typing_tree(&tree, &edited)
            }
        })
        .collect();
    (trees, n_replaced)
}

#[cfg(test)]
mod tests {
    use reprise_models::{ReduceOptions, reduce};
    use serde_json::json;

    use super::*;

    #[test]
    fn typed_text_is_replaced_and_chords_are_left_alone() {
        let raw: Vec<ActionEvent> = serde_json::from_value(json!([
            {"name": "press", "timestamp": 0.0, "key_char": "a"},
            {"name": "release", "timestamp": 0.1, "key_char": "a"},
            {"name": "press", "timestamp": 0.2, "key_char": "l"},
            {"name": "release", "timestamp": 0.3, "key_char": "l"},
            {"name": "press", "timestamp": 1.0, "key_name": "ctrl"},
            {"name": "press", "timestamp": 1.1, "key_char": "a"},
            {"name": "release", "timestamp": 1.2, "key_char": "a"},
            {"name": "release", "timestamp": 1.3, "key_name": "ctrl"}
        ]))
        .unwrap();
        let trees = reduce(raw, &ReduceOptions::default());
        let (edited, n) = replace_typed_text(
            trees,
            &[("al".into(), "bob".into()), ("a".into(), "x".into())],
        );
        assert_eq!(n, 1);
        assert_eq!(edited[0].text.as_deref(), Some("b-o-b"));
        assert_eq!(
            edited[1].text.as_deref(),
            Some("<ctrl>-a"),
            "a chord is not text"
        );
        assert_eq!(edited[0].children.len(), 6);
        let raw: Vec<ActionEvent> = serde_json::from_value(json!([
            {"name": "press", "timestamp": 0.0, "key_char": "a"},
            {"name": "release", "timestamp": 0.1, "key_char": "a"}
        ]))
        .unwrap();
        let (edited, n) = replace_typed_text(
            reduce(raw, &ReduceOptions::default()),
            &[("a".into(), String::new())],
        );
        assert_eq!(n, 1);
        assert!(
            crate::tree::actions_for(&edited[0], |seconds| crate::Action::Pause { seconds })
                .is_empty(),
            "nothing is typed, and nothing panics"
        );
    }
}
