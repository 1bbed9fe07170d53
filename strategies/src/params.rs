//! Parameters of a replay: every text the recording typed into a field,
//! named after the field's label (`{user_name}` = "alice"), which `--set`
//! replaces, and every secret (`{password}`), whose value comes from outside
//! at replay. They are found in the planned steps (one typing step per
//! window, see [`crate::plan`]): a text is a run of characters (Shift
//! included, for capitals) between keys that are not text (Tab, Enter, a
//! chord) or a secret.

use std::collections::BTreeMap;

use reprise_models::parameter::name_from_label;
use reprise_models::{ActionEvent, ElementIdentity, EventName};
use serde::Serialize;

/// What a parameter stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ParameterKind {
    /// Text the person typed, as recorded.
    Text { recorded: String },
    /// A secret: its value was never recorded.
    Secret,
}

/// One parameter of a recording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parameter {
    pub name: String,
    #[serde(flatten)]
    pub kind: ParameterKind,
    /// The field it was typed into, in words, when the tree named it.
    pub field: Option<String>,
    /// The planned step that types it.
    pub step: usize,
}

/// Why `--set` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    #[error("the recording has no parameter {{{name}}}; it has: {known}")]
    Unknown { name: String, known: String },
    #[error(
        "{{{0}}} is a secret: give it in the environment (REPRISE_SECRET_…) or a secrets file, never on the command line"
    )]
    Secret(String),
    #[error("--set {0} twice")]
    Twice(String),
    #[error("{0:?} cannot name a parameter: use letters, digits and _, starting with a letter")]
    BadName(String),
    #[error("the recording already has a parameter {{{0}}}")]
    Taken(String),
}

/// The names the person gave parameters: derived name -> chosen name.
pub type Names = BTreeMap<String, String>;

/// The steps with their secrets under the names the person gave them.
pub fn with_names(mut trees: Vec<ActionEvent>, names: &Names) -> Vec<ActionEvent> {
    fn walk(tree: &mut ActionEvent, names: &Names) {
        if let Some(chosen) = tree.secret.as_ref().and_then(|secret| names.get(secret)) {
            tree.secret = Some(chosen.clone());
        }
        for child in &mut tree.children {
            walk(child, names);
        }
    }
    if !names.is_empty() {
        for tree in &mut trees {
            walk(tree, names);
            tree.fill_text();
        }
    }
    trees
}

/// Renames the parameter now called `old` to `new` in `names`, given the
/// recording's parameters as they are now named.
pub fn rename(
    params: &[Parameter],
    names: &mut Names,
    old: &str,
    new: &str,
) -> Result<(), SetError> {
    if !params.iter().any(|param| param.name == old) {
        return Err(unknown(params, old));
    }
    if !reprise_models::parameter::is_valid_name(new) {
        return Err(SetError::BadName(new.to_owned()));
    }
    if new != old && params.iter().any(|param| param.name == new) {
        return Err(SetError::Taken(new.to_owned()));
    }
    let derived = names
        .iter()
        .find(|(_, chosen)| chosen.as_str() == old)
        .map_or_else(|| old.to_owned(), |(derived, _)| derived.clone());
    if derived == new {
        names.remove(&derived);
    } else {
        names.insert(derived, new.to_owned());
    }
    Ok(())
}

fn unknown(params: &[Parameter], name: &str) -> SetError {
    let known: Vec<String> = params
        .iter()
        .map(|param| format!("{{{}}}", param.name))
        .collect();
    SetError::Unknown {
        name: name.to_owned(),
        known: if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        },
    }
}

/// A run of text keys inside a step: leaf indexes `start..end`.
#[derive(Debug, Clone)]
struct Run {
    step: usize,
    start: usize,
    end: usize,
    text: String,
    field: Option<ElementIdentity>,
}

fn is_shift(leaf: &ActionEvent) -> bool {
    matches!(leaf.named_key(), Some("shift" | "shift_r"))
}

fn char_of(leaf: &ActionEvent) -> Option<&str> {
    if leaf.secret.is_some() || leaf.named_key().is_some() {
        return None;
    }
    leaf.key_char
        .as_deref()
        .or(leaf.canonical_key_char.as_deref())
}

/// The text runs of the planned steps, each with the field it went to: the
/// focused element read at one of its keys, else the element of the last
/// press before it. A run spans from its first character's press to the
/// last press or release of its own keys; a Shift pressed just before a
/// key that is not text (Shift+Tab) stays out of it.
fn runs(trees: &[ActionEvent]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut pressed: Option<ElementIdentity> = None;
    for (step, tree) in trees.iter().enumerate() {
        if !tree.name.is_key() {
            if let Some(element) = std::iter::once(tree)
                .chain(&tree.children)
                .find_map(|event| event.element.as_deref().cloned())
            {
                pressed = Some(element);
            }
            continue;
        }
        let leaves = key_leaves(tree);
        let mut current: Option<(Run, Vec<String>)> = None;
        let mut focus = pressed.clone();
        let mut flush = |current: &mut Option<(Run, Vec<String>)>| {
            if let Some((run, _)) = current.take() {
                out.push(run);
            }
        };
        for (idx, leaf) in leaves.iter().enumerate() {
            if let Some(element) = &leaf.element {
                focus = Some((**element).clone());
                flush(&mut current);
            }
            let char = char_of(leaf);
            match leaf.name {
                EventName::Press if char.is_some() || is_shift(leaf) => {
                    let (run, own) = current.get_or_insert_with(|| {
                        (
                            Run {
                                step,
                                start: idx,
                                end: idx,
                                text: String::new(),
                                field: focus.clone(),
                            },
                            Vec::new(),
                        )
                    });
                    own.push(leaf.key_identity());
                    if let Some(char) = char {
                        run.text.push_str(char);
                        run.end = idx + 1;
                    }
                }
                EventName::Press => flush(&mut current),
                _ => {
                    if let Some((run, own)) = current.as_mut()
                        && own.contains(&leaf.key_identity())
                        && run.end > run.start
                    {
                        run.end = idx + 1;
                    }
                }
            }
        }
        flush(&mut current);
        // The next step's keys go where these left the focus.
        pressed = focus;
    }
    out.retain(|run| !run.text.is_empty());
    out
}

fn key_leaves(tree: &ActionEvent) -> &[ActionEvent] {
    if tree.children.is_empty() {
        std::slice::from_ref(tree)
    } else {
        &tree.children
    }
}

fn field_label(field: &ElementIdentity) -> Option<&str> {
    field
        .band
        .first()
        .map(String::as_str)
        .or(field.name.as_deref())
        .filter(|label| !label.trim().is_empty())
}

/// Each text parameter's name and the text the recording typed, in the
/// order typed (the secrets, never recorded, left out).
pub fn recorded_texts(trees: &[ActionEvent], names: &Names) -> Vec<(String, String)> {
    parameters(trees, names)
        .into_iter()
        .filter_map(|param| match param.kind {
            ParameterKind::Text { recorded } => Some((param.name, recorded)),
            ParameterKind::Secret => None,
        })
        .collect()
}

/// Every parameter, in the order typed: texts named after their field's
/// label (`text` where none), unique among all, and the secrets; each under
/// the name the person gave it, if any (secrets: see [`with_names`]).
pub fn parameters(trees: &[ActionEvent], names: &Names) -> Vec<Parameter> {
    let secrets = secret_names(trees);
    let mut params: Vec<Parameter> = Vec::new();
    let mut taken: Vec<String> = secrets.clone();
    let runs = runs(trees);
    let mut run_iter = runs.iter().peekable();
    for (step, tree) in trees.iter().enumerate() {
        while let Some(run) = run_iter.next_if(|run| run.step == step) {
            let wanted = run
                .field
                .as_ref()
                .and_then(field_label)
                .map_or_else(|| "text".to_owned(), name_from_label);
            let mut name = wanted.clone();
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{wanted}_{n}");
                n += 1;
            }
            taken.push(name.clone());
            params.push(Parameter {
                name: names.get(&name).cloned().unwrap_or(name),
                kind: ParameterKind::Text {
                    recorded: run.text.clone(),
                },
                field: run.field.as_ref().map(ElementIdentity::label),
                step,
            });
        }
        let typed = secret_names(std::slice::from_ref(tree));
        for name in typed {
            if params.iter().any(|param| param.name == name) {
                continue;
            }
            let field = leaf_field(tree, &name);
            params.push(Parameter {
                name,
                kind: ParameterKind::Secret,
                field,
                step,
            });
        }
    }
    params
}

/// The field a secret was typed into, in words.
fn leaf_field(tree: &ActionEvent, secret: &str) -> Option<String> {
    tree.children
        .iter()
        .find(|leaf| leaf.secret.as_deref() == Some(secret) && leaf.element.is_some())
        .and_then(|leaf| leaf.element.as_deref())
        .map(ElementIdentity::label)
}

/// The steps with each `(name, value)` typed in place of the text the
/// parameter stands for. An unknown name, a secret, or a name given twice
/// is refused, naming what the recording has.
pub fn set_parameters(
    mut trees: Vec<ActionEvent>,
    values: &[(String, String)],
    names: &Names,
) -> Result<Vec<ActionEvent>, SetError> {
    let params = parameters(&trees, names);
    let runs = runs(&trees);
    let text_params: Vec<(&Parameter, &Run)> = params
        .iter()
        .filter(|param| matches!(param.kind, ParameterKind::Text { .. }))
        .zip(&runs)
        .collect();
    let mut edits: Vec<(&Run, &str)> = Vec::new();
    for (idx, (name, value)) in values.iter().enumerate() {
        if values[..idx].iter().any(|(other, _)| other == name) {
            return Err(SetError::Twice(name.clone()));
        }
        if params
            .iter()
            .any(|param| &param.name == name && param.kind == ParameterKind::Secret)
        {
            return Err(SetError::Secret(name.clone()));
        }
        let Some((_, run)) = text_params.iter().find(|(param, _)| &param.name == name) else {
            return Err(unknown(&params, name));
        };
        edits.push((run, value.as_str()));
    }
    // Later runs first, so earlier indexes stay right.
    edits.sort_by_key(|(run, _)| std::cmp::Reverse((run.step, run.start)));
    for (run, value) in edits {
        retype(&mut trees[run.step], run, value);
    }
    Ok(trees)
}

/// The keys of `run` in `tree` replaced by `value` typed in their place.
fn retype(tree: &mut ActionEvent, run: &Run, value: &str) {
    if tree.children.is_empty() {
        *tree = ActionEvent::parent(EventName::Type, vec![tree.clone()]);
    }
    let old: Vec<ActionEvent> = tree.children.drain(run.start..run.end).collect();
    let mut tail = tree.children.split_off(run.start);
    // The run's own keys go; a release of another key pressed before it
    // stays, ahead of the new text.
    let mut pressed: Vec<String> = Vec::new();
    let mut kept: Vec<ActionEvent> = Vec::new();
    for leaf in &old {
        match leaf.name {
            EventName::Press => pressed.push(leaf.key_identity()),
            _ => {
                let id = leaf.key_identity();
                match pressed.iter().position(|other| *other == id) {
                    Some(at) => {
                        pressed.remove(at);
                    }
                    None => kept.push(leaf.clone()),
                }
            }
        }
    }
    // Releases after the run of keys it pressed go with them.
    tail.retain(|leaf| {
        if leaf.name == EventName::Press {
            return true;
        }
        match pressed
            .iter()
            .position(|other| *other == leaf.key_identity())
        {
            Some(at) => {
                pressed.remove(at);
                false
            }
            None => true,
        }
    });
    let typed = typing_leaves(&old, value);
    // Typing a longer value takes longer: what follows keeps its order.
    let overrun = match (typed.last(), tail.first()) {
        (Some(last), Some(next)) => last.timestamp - next.timestamp,
        _ => 0.0,
    };
    if overrun > 0.0 {
        for leaf in &mut tail {
            leaf.timestamp += overrun + 0.01;
        }
    }
    tree.children.extend(kept);
    tree.children.extend(typed);
    tree.children.extend(tail);
    if let Some(first) = tree.children.first() {
        tree.timestamp = first.timestamp;
    }
    tree.fill_text();
}

/// A press and a release per character of `text`, spread evenly over the
/// time the replaced keys took, with their links (and the first one's
/// focused element).
pub(crate) fn typing_leaves(old: &[ActionEvent], text: &str) -> Vec<ActionEvent> {
    let first = &old[0];
    let start = first.timestamp;
    let end = old.last().map_or(start, |last| last.timestamp);
    let n_chars = text.chars().count().max(1);
    let step = ((end - start) / (2 * n_chars) as f64).max(0.01);
    let mut leaves = Vec::new();
    for (idx, char) in text.chars().enumerate() {
        for (offset, name) in [(0, EventName::Press), (1, EventName::Release)] {
            let mut event = ActionEvent::new(name, start + step * (2 * idx + offset) as f64);
            event.key_char = Some(char.to_string());
            event.screenshot_id = first.screenshot_id;
            event.window_state_id = first.window_state_id;
            if idx == 0 && offset == 0 {
                event.element = first.element.clone();
            }
            leaves.push(event);
        }
    }
    leaves
}

/// The secret parameters the trees type, each once, in the order first typed.
pub fn secret_names(trees: &[ActionEvent]) -> Vec<String> {
    fn walk(tree: &ActionEvent, names: &mut Vec<String>) {
        if let Some(name) = &tree.secret
            && !names.contains(name)
        {
            names.push(name.clone());
        }
        for child in &tree.children {
            walk(child, names);
        }
    }
    let mut names = Vec::new();
    for tree in trees {
        walk(tree, &mut names);
    }
    names
}

#[cfg(test)]
mod tests;
