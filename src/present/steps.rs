//! A recording's steps as a text a person reads and edits (`reprise
//! steps`, `reprise edit`): TOML, one `[[step]]` entry a step, recorded
//! steps by their number with what they do as recorded, instructions
//! between them, and the values typed for the parameters. Parsing names the
//! line and the field of every mistake.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use reprise_models::ActionEvent;
use reprise_models::element::role_name;
use reprise_models::program::{Compare, Entry, Over, Program, ProgramError, Query, Until, Wait};
use reprise_strategies::params::{Parameter, ParameterKind};

mod diff;
mod entries;
mod parse;
pub use diff::diff;
pub use parse::{Parsed, ReadTable, parse, parse_lines};

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
                    nth: None,
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
    let mut depth = 0usize;
    for entry in &program.entries {
        if matches!(entry, Entry::Else | Entry::End) {
            depth = depth.saturating_sub(1);
        }
        let indent = "  ".repeat(depth);
        let _ = writeln!(out, "\n{indent}[[step]]");
        for line in entry_lines(entry, steps) {
            let _ = writeln!(out, "{indent}{line}");
        }
        if matches!(
            entry,
            Entry::If(_) | Entry::Repeat(_) | Entry::Retry { .. } | Entry::Else
        ) {
            depth += 1;
        }
    }
    out
}

/// What `program` adds to the recorded steps, a line each, placed by the
/// recorded step before it (`after step 3: assert = { … }`): for `show` and
/// the recording page, which list the recording's own steps.
pub fn added_entries(program: &Program) -> Vec<String> {
    let mut after = None;
    let mut lines = Vec::new();
    for entry in &program.entries {
        if let Entry::Recorded { step } = entry {
            after = Some(*step);
            continue;
        }
        let place = after.map_or_else(
            || "before step 1".to_owned(),
            |step| format!("after step {step}"),
        );
        for line in entry_lines(entry, &[]) {
            lines.push(format!("{place}: {line}"));
        }
    }
    lines
}

/// An entry's lines, below its `[[step]]`.
fn entry_lines(entry: &Entry, steps: &[RecordedStep]) -> Vec<String> {
    match entry {
        Entry::Recorded { step } => {
            let mut lines = vec![format!("recorded = {step}")];
            if let Some(recorded) = steps.get(step - 1) {
                lines.push(format!("do = {}", quoted(&recorded.action)));
                if let Some(on) = &recorded.on {
                    lines.push(format!("on = {}", query_table(on, &[])));
                }
                if let Some(types) = &recorded.types {
                    lines.push(format!("types = {}", quoted(types)));
                }
            }
            lines
        }
        Entry::Wait(wait) => vec![format!("wait = {}", wait_table(wait, true))],
        Entry::If(condition) => vec![format!("if = {}", wait_table(condition, false))],
        Entry::Else => vec!["else = true".into()],
        Entry::Retry { times } => vec![format!("retry = {{ times = {times} }}")],
        Entry::End => vec!["end = true".into()],
        Entry::Repeat(repeat) => {
            let max = ("max".to_owned(), repeat.max.to_string());
            vec![format!(
                "repeat = {}",
                match &repeat.over {
                    Over::Rows(file) => inline(vec![("rows".into(), quoted(file)), max]),
                    Over::While(until) => condition_table(until, vec![max]),
                }
            )]
        }
        Entry::Assert(assertion) => vec![format!(
            "assert = {}",
            query_table(&assertion.element, &compare_fields(&assertion.compare))
        )],
        Entry::Read(read) => {
            let mut more = vec![("into".to_owned(), quoted(&read.into))];
            if read.secret {
                more.push(("secret".into(), "true".into()));
            }
            vec![format!("read = {}", query_table(&read.element, &more))]
        }
    }
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
#   read = { role = \"text field\", name = \"Total\", into = \"total\" }   (secret = true: never shown)
# An element is looked for in the window of the recorded step after it
# unless `window` (and `app`) name another; `nth = 2` is the second of
# those alike (top to bottom, then left to right). A value read is typed
# as {total} in a value under [values], and an expected text may name it
# or a parameter; write {{ for a brace itself.
";

/// A TOML basic string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

fn number(value: f64) -> String {
    format!("{value}")
}

pub(super) fn query_table(query: &Query, more: &[(String, String)]) -> String {
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
    if let Some(nth) = query.nth {
        fields.push(("nth".into(), nth.to_string()));
    }
    fields.extend(more.iter().cloned());
    inline(fields)
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

/// A wait's table (`bound`: its timeout always written), or an if's (its
/// timeout written when it has one).
fn wait_table(wait: &Wait, bound: bool) -> String {
    let mut more = Vec::new();
    if bound || wait.timeout_seconds > 0.0 {
        more.push(("timeout".to_owned(), number(wait.timeout_seconds)));
    }
    condition_table(&wait.until, more)
}

fn condition_table(until: &Until, more: Vec<(String, String)>) -> String {
    match until {
        Until::Window { title } => {
            let mut fields = vec![("window".to_owned(), quoted(title))];
            fields.extend(more);
            inline(fields)
        }
        Until::Value { text, compare } => {
            let mut fields = vec![("value".to_owned(), quoted(text))];
            fields.extend(compare_fields(compare));
            fields.extend(more);
            inline(fields)
        }
        Until::Shows { element } => query_table(element, &more),
        Until::Gone { element } => {
            let mut fields = vec![("gone".to_owned(), "true".to_owned())];
            fields.extend(more);
            query_table(element, &fields)
        }
        Until::Holds { element, compare } => {
            let mut fields = compare_fields(compare);
            fields.extend(more);
            query_table(element, &fields)
        }
    }
}

/// `{ key = value, … }`.
fn inline(fields: Vec<(String, String)>) -> String {
    let inner: Vec<String> = fields
        .into_iter()
        .map(|(key, value)| format!("{key} = {value}"))
        .collect();
    format!("{{ {} }}", inner.join(", "))
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
