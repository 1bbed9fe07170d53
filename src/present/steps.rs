//! A recording's steps as a text a person reads and edits (`reprise
//! steps`, `reprise edit`): TOML, one `[[step]]` entry a step, recorded
//! steps by their number with what they do as recorded, instructions
//! between them, and the values typed for the parameters. Parsing names the
//! line and the field of every mistake.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use reprise_models::ActionEvent;
use reprise_models::element::{role_from_name, role_name};
use reprise_models::program::{
    Assertion, Compare, Entry, Program, ProgramError, Query, Read, Until, Wait,
};
use reprise_strategies::params::{Parameter, ParameterKind};
use serde::Deserialize;

mod parse;
pub use parse::{Parsed, parse, parse_lines};

/// A mistake in a steps file: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, {field}: {message}")]
pub struct StepsError {
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// What a recorded step does, as the file shows it (and checks it was left
/// as it is).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedStep {
    /// `singleclick`, `type`, …
    pub action: String,
    pub on: Option<Query>,
    /// What it types, as people read keys.
    pub types: Option<String>,
}

/// The recorded steps (planned, parameters named) as the file shows them.
pub fn recorded_steps(planned: &[ActionEvent]) -> Vec<RecordedStep> {
    planned
        .iter()
        .map(|tree| {
            let element = std::iter::once(tree)
                .chain(&tree.children)
                .find_map(|event| event.element.as_deref());
            RecordedStep {
                action: tree.name.as_str().to_owned(),
                on: element.map(|element| Query {
                    role: Some(element.role),
                    name: element.name.clone().filter(|name| !name.trim().is_empty()),
                    window: element.window.name.clone(),
                    app: None,
                }),
                types: tree.typed_words(),
            }
        })
        .collect()
}

/// The file for `program` over a recording's `steps` and `parameters`;
/// `title` names the recording and its version for the header.
pub fn render(
    title: &str,
    edit_command: &str,
    program: &Program,
    steps: &[RecordedStep],
    parameters: &[Parameter],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The steps of {title}, in the order replay takes them."
    );
    let _ = writeln!(out, "# Apply an edited copy: {edit_command}");
    out.push_str(HELP);
    out.push_str(&values_table(program, parameters));
    for entry in &program.entries {
        out.push_str("\n[[step]]\n");
        match entry {
            Entry::Recorded { step } => {
                let _ = writeln!(out, "recorded = {step}");
                if let Some(recorded) = steps.get(step - 1) {
                    let _ = writeln!(out, "do = {}", quoted(&recorded.action));
                    if let Some(on) = &recorded.on {
                        let _ = writeln!(out, "on = {}", query_table(on, &[]));
                    }
                    if let Some(types) = &recorded.types {
                        let _ = writeln!(out, "types = {}", quoted(types));
                    }
                }
            }
            Entry::Wait(wait) => {
                let _ = writeln!(out, "wait = {}", wait_table(wait));
            }
            Entry::Assert(assertion) => {
                let _ = writeln!(
                    out,
                    "assert = {}",
                    query_table(&assertion.element, &compare_fields(&assertion.compare))
                );
            }
            Entry::Read(read) => {
                let _ = writeln!(
                    out,
                    "read = {}",
                    query_table(&read.element, &[("into".into(), quoted(&read.into))])
                );
            }
        }
    }
    out
}

/// The `[values]` table: a line for each text parameter (commented out
/// where the recording's text is typed), and the secrets named.
fn values_table(program: &Program, parameters: &[Parameter]) -> String {
    let mut out = String::from("\n[values]\n");
    let texts: Vec<&Parameter> = parameters
        .iter()
        .filter(|param| matches!(param.kind, ParameterKind::Text { .. }))
        .collect();
    if texts.is_empty() {
        out.push_str("# (the recording types no text)\n");
    }
    for param in texts {
        let ParameterKind::Text { recorded } = &param.kind else {
            continue;
        };
        match program.values.get(&param.name) {
            Some(value) => {
                let _ = writeln!(
                    out,
                    "{} = {}    # recorded: {}",
                    param.name,
                    quoted(value),
                    quoted(recorded)
                );
            }
            None => {
                let _ = writeln!(out, "# {} = {}", param.name, quoted(recorded));
            }
        }
    }
    for param in parameters {
        if param.kind == ParameterKind::Secret {
            let _ = writeln!(
                out,
                "# {{{}}} is a secret: its value is given at replay, never here",
                param.name
            );
        }
    }
    out
}

const HELP: &str = "\
#
# A recorded step is `recorded = N`; what it does (do, on, types) is as it
# was recorded and stays so. Delete an entry to leave its step out, or move
# it. Between steps, add instructions, each with a bound:
#   wait = { window = \"Saved\", timeout = 10 }
#   wait = { role = \"button\", name = \"OK\", timeout = 10 }        (gone = true: until it goes)
#   wait = { role = \"label\", name = \"Status\", equals = \"Done\", timeout = 30 }
#   assert = { role = \"text field\", name = \"Total\", equals = \"42\" }
#     (or contains = \"…\", matches = \"Invoice *\", near = 42.5 with within = 0.01)
#   read = { role = \"text field\", name = \"Total\", into = \"total\" }
# An element is looked for in the window of the recorded step after it
# unless `window` (and `app`) name another. A value read is typed as
# {total} in a value under [values]; write {{ for a brace itself.
";

/// A TOML basic string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

fn number(value: f64) -> String {
    format!("{value}")
}

fn query_table(query: &Query, more: &[(String, String)]) -> String {
    let mut fields: Vec<(String, String)> = Vec::new();
    if let Some(role) = query.role {
        fields.push(("role".into(), quoted(role_word(role))));
    }
    if let Some(name) = &query.name {
        fields.push(("name".into(), quoted(name)));
    }
    if let Some(window) = &query.window {
        fields.push(("window".into(), quoted(window)));
    }
    if let Some(app) = &query.app {
        fields.push(("app".into(), quoted(app)));
    }
    fields.extend(more.iter().cloned());
    let inner: Vec<String> = fields
        .into_iter()
        .map(|(key, value)| format!("{key} = {value}"))
        .collect();
    format!("{{ {} }}", inner.join(", "))
}

/// The word the file writes for a role (which [`role_from_name`] reads).
fn role_word(role: accesskit::Role) -> &'static str {
    match role {
        accesskit::Role::MultilineTextInput => "text area",
        role => role_name(role),
    }
}

fn compare_fields(compare: &Compare) -> Vec<(String, String)> {
    match compare {
        Compare::Equals(text) => vec![("equals".into(), quoted(text))],
        Compare::Contains(text) => vec![("contains".into(), quoted(text))],
        Compare::Matches(text) => vec![("matches".into(), quoted(text))],
        Compare::Near { value, within } => vec![
            ("near".into(), number(*value)),
            ("within".into(), number(*within)),
        ],
    }
}

fn wait_table(wait: &Wait) -> String {
    let timeout = ("timeout".to_owned(), number(wait.timeout_seconds));
    match &wait.until {
        Until::Window { title } => format!(
            "{{ window = {}, timeout = {} }}",
            quoted(title),
            number(wait.timeout_seconds)
        ),
        Until::Shows { element } => query_table(element, &[timeout]),
        Until::Gone { element } => query_table(element, &[("gone".into(), "true".into()), timeout]),
        Until::Holds { element, compare } => {
            let mut more = compare_fields(compare);
            more.push(timeout);
            query_table(element, &more)
        }
    }
}

/// The raw entry as TOML has it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    recorded: Option<usize>,
    #[serde(rename = "do")]
    action: Option<String>,
    on: Option<RawElement>,
    types: Option<String>,
    wait: Option<RawElement>,
    assert: Option<RawElement>,
    read: Option<RawElement>,
}

/// Every field an element's table may hold; which are allowed depends on
/// the entry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawElement {
    role: Option<String>,
    name: Option<String>,
    window: Option<String>,
    app: Option<String>,
    gone: Option<bool>,
    equals: Option<String>,
    contains: Option<String>,
    matches: Option<String>,
    near: Option<Number>,
    within: Option<Number>,
    timeout: Option<Number>,
    into: Option<String>,
}

/// A TOML integer or float.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum Number {
    Whole(i64),
    Float(f64),
}

impl Number {
    fn get(self) -> f64 {
        match self {
            Number::Whole(value) => value as f64,
            Number::Float(value) => value,
        }
    }
}

/// A raw element's query, its role read from its word.
fn query_of(raw: &RawElement, what: &str) -> Result<Query, (String, String)> {
    let role = match &raw.role {
        Some(word) => Some(role_from_name(word).ok_or_else(|| {
            (
                format!("{what}.role"),
                format!("{word:?} is not a role this file knows (button, text field, label, check box, combo box, list item, table cell, menu item, dialog, …)"),
            )
        })?),
        None => None,
    };
    Ok(Query {
        role,
        name: raw.name.clone(),
        window: raw.window.clone(),
        app: raw.app.clone(),
    })
}

/// The comparison a raw element asks for, if any (at most one).
fn compare_of(raw: &RawElement, what: &str) -> Result<Option<Compare>, (String, String)> {
    let mut found = Vec::new();
    if let Some(text) = &raw.equals {
        found.push(Compare::Equals(text.clone()));
    }
    if let Some(text) = &raw.contains {
        found.push(Compare::Contains(text.clone()));
    }
    if let Some(text) = &raw.matches {
        found.push(Compare::Matches(text.clone()));
    }
    match (raw.near, raw.within) {
        (Some(value), within) => found.push(Compare::Near {
            value: value.get(),
            within: within.map_or(0.0, Number::get),
        }),
        (None, Some(_)) => {
            return Err((
                format!("{what}.within"),
                "within goes with near = NUMBER".into(),
            ));
        }
        (None, None) => {}
    }
    if found.len() > 1 {
        return Err((
            what.into(),
            "give one of equals, contains, matches, near".into(),
        ));
    }
    Ok(found.pop())
}

/// The fields of `raw` that `allowed` does not name.
fn stray(raw: &RawElement, allowed: &[&str]) -> Option<&'static str> {
    let present = [
        ("gone", raw.gone.is_some()),
        ("equals", raw.equals.is_some()),
        ("contains", raw.contains.is_some()),
        ("matches", raw.matches.is_some()),
        ("near", raw.near.is_some()),
        ("within", raw.within.is_some()),
        ("timeout", raw.timeout.is_some()),
        ("into", raw.into.is_some()),
    ];
    present
        .into_iter()
        .find(|(field, there)| *there && !allowed.contains(field))
        .map(|(field, _)| field)
}

/// An entry read from its raw table, checked against the recorded steps.
fn entry_of(raw: &RawEntry, steps: &[RecordedStep]) -> Result<Entry, (String, String)> {
    let kinds = [
        raw.recorded.is_some(),
        raw.wait.is_some(),
        raw.assert.is_some(),
        raw.read.is_some(),
    ];
    match kinds.iter().filter(|kind| **kind).count() {
        1 => {}
        0 => {
            return Err((
                "step".into(),
                "an entry is one of recorded = N, wait, assert, read".into(),
            ));
        }
        _ => {
            return Err((
                "step".into(),
                "an entry holds one of recorded, wait, assert, read: split it into entries".into(),
            ));
        }
    }
    if raw.recorded.is_none() && (raw.action.is_some() || raw.on.is_some() || raw.types.is_some()) {
        return Err((
            "do".into(),
            "do, on and types belong to a recorded step".into(),
        ));
    }
    if let Some(step) = raw.recorded {
        return recorded_entry(raw, step, steps);
    }
    if let Some(wait) = &raw.wait {
        return wait_entry(wait).map(Entry::Wait);
    }
    if let Some(check) = &raw.assert {
        if let Some(field) = stray(check, &["equals", "contains", "matches", "near", "within"]) {
            return Err((
                format!("assert.{field}"),
                "an assert does not take it".into(),
            ));
        }
        let compare = compare_of(check, "assert")?.ok_or_else(|| {
            (
                "assert".into(),
                "say what to expect: equals, contains, matches or near".into(),
            )
        })?;
        return Ok(Entry::Assert(Assertion {
            element: query_of(check, "assert")?,
            compare,
        }));
    }
    let read = raw.read.as_ref().expect("one kind is there");
    if let Some(field) = stray(read, &["into"]) {
        return Err((format!("read.{field}"), "a read does not take it".into()));
    }
    Ok(Entry::Read(Read {
        element: query_of(read, "read")?,
        into: read.into.clone().ok_or_else(|| {
            (
                "read.into".into(),
                "say which variable to read into: into = \"total\"".into(),
            )
        })?,
    }))
}

fn recorded_entry(
    raw: &RawEntry,
    step: usize,
    steps: &[RecordedStep],
) -> Result<Entry, (String, String)> {
    let Some(recorded) = step.checked_sub(1).and_then(|idx| steps.get(idx)) else {
        return Err((
            "recorded".into(),
            format!("the recording has steps 1 to {}, not {step}", steps.len()),
        ));
    };
    let unchanged =
        "is as recorded and cannot be changed here (re-record the step, or leave its entry out)";
    if raw
        .action
        .as_ref()
        .is_some_and(|action| *action != recorded.action)
    {
        return Err((
            "do".into(),
            format!("{unchanged}: it was {:?}", recorded.action),
        ));
    }
    if let Some(on) = &raw.on {
        let written = query_of(on, "on")?;
        if Some(&written) != recorded.on.as_ref() {
            return Err((
                "on".into(),
                format!(
                    "{unchanged}: it was {}",
                    recorded
                        .on
                        .as_ref()
                        .map_or_else(|| "no element".into(), |on| query_table(on, &[]))
                ),
            ));
        }
    }
    if raw.types.is_some() && raw.types != recorded.types {
        return Err((
            "types".into(),
            format!("{unchanged}; to type another value, set it under [values]"),
        ));
    }
    Ok(Entry::Recorded { step })
}

fn wait_entry(wait: &RawElement) -> Result<Wait, (String, String)> {
    let Some(timeout) = wait.timeout else {
        return Err((
            "wait.timeout".into(),
            "a wait needs its bound: timeout = SECONDS".into(),
        ));
    };
    if let Some(field) = stray(
        wait,
        &[
            "gone", "equals", "contains", "matches", "near", "within", "timeout",
        ],
    ) {
        return Err((format!("wait.{field}"), "a wait does not take it".into()));
    }
    let is_window = wait.role.is_none() && wait.name.is_none();
    let until = if is_window {
        let title = wait.window.clone().ok_or_else(|| {
            (
                "wait".into(),
                "say what to wait for: window = \"TITLE\", or an element's role and name".into(),
            )
        })?;
        if wait.gone.is_some() || compare_of(wait, "wait")?.is_some() {
            return Err((
                "wait".into(),
                "a wait for a window takes only its title and timeout".into(),
            ));
        }
        Until::Window { title }
    } else {
        let element = query_of(wait, "wait")?;
        match (wait.gone.unwrap_or(false), compare_of(wait, "wait")?) {
            (true, Some(_)) => {
                return Err((
                    "wait.gone".into(),
                    "wait for it to go, or for its value, not both".into(),
                ));
            }
            (true, None) => Until::Gone { element },
            (false, Some(compare)) => Until::Holds { element, compare },
            (false, None) => Until::Shows { element },
        }
    };
    Ok(Wait {
        until,
        timeout_seconds: timeout.get(),
    })
}

/// A program mistake found after parsing, at its entry's line.
pub fn at_line(error: ProgramError, entry_lines: &[usize], text: &str) -> StepsError {
    let line = match error.entry {
        Some(entry) => entry_lines.get(entry).copied().unwrap_or(1),
        None => value_line(text, error.field.strip_prefix("values.").unwrap_or("")),
    };
    StepsError {
        line,
        field: error.field,
        message: error.message,
    }
}

/// The line of `name = …` under `[values]` (the table's own line else).
fn value_line(text: &str, name: &str) -> usize {
    let mut in_values = false;
    let mut table_line = 1;
    for (idx, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_values = trimmed == "[values]";
            if in_values {
                table_line = idx + 1;
            }
            continue;
        }
        if in_values
            && !name.is_empty()
            && trimmed
                .strip_prefix(name)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        {
            return idx + 1;
        }
    }
    table_line
}

/// Parameter name → the step (from 1) that types it.
pub fn parameter_steps(parameters: &[Parameter]) -> BTreeMap<String, usize> {
    parameters
        .iter()
        .filter(|param| matches!(param.kind, ParameterKind::Text { .. }))
        .map(|param| (param.name.clone(), param.step + 1))
        .collect()
}

#[cfg(test)]
mod tests;
