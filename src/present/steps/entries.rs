//! One `[[step]]` entry read: its raw TOML table, then the entry it is,
//! each mistake with its field.

use reprise_models::element::role_from_name;
use reprise_models::program::{Assertion, Compare, Entry, Over, Query, Read, Repeat, Until, Wait};
use serde::Deserialize;

use super::{RecordedStep, query_table};

/// The raw entry as TOML has it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEntry {
    recorded: Option<usize>,
    #[serde(rename = "do")]
    action: Option<String>,
    on: Option<RawElement>,
    types: Option<String>,
    wait: Option<RawElement>,
    assert: Option<RawElement>,
    read: Option<RawElement>,
    #[serde(rename = "if")]
    if_: Option<RawElement>,
    #[serde(rename = "else")]
    else_: Option<bool>,
    end: Option<bool>,
    repeat: Option<RawElement>,
    retry: Option<RawElement>,
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
    nth: Option<Number>,
    gone: Option<bool>,
    equals: Option<String>,
    contains: Option<String>,
    matches: Option<String>,
    near: Option<Number>,
    within: Option<Number>,
    timeout: Option<Number>,
    into: Option<String>,
    secret: Option<bool>,
    value: Option<String>,
    rows: Option<String>,
    max: Option<Number>,
    times: Option<Number>,
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
    let nth = match raw.nth.map(Number::get) {
        Some(nth) if nth.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&nth) => {
            Some(nth as u32)
        }
        Some(_) => {
            return Err((
                format!("{what}.nth"),
                "nth is which of the elements alike: a whole number from 1".into(),
            ));
        }
        None => None,
    };
    Ok(Query {
        role,
        name: raw.name.clone(),
        window: raw.window.clone(),
        app: raw.app.clone(),
        nth,
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
        ("secret", raw.secret.is_some()),
        ("value", raw.value.is_some()),
        ("rows", raw.rows.is_some()),
        ("max", raw.max.is_some()),
        ("times", raw.times.is_some()),
    ];
    present
        .into_iter()
        .find(|(field, there)| *there && !allowed.contains(field))
        .map(|(field, _)| field)
}

/// The kinds of entry, as the file names them.
const KINDS: &str = "recorded = N, wait, assert, read, if, else, end, repeat, retry";

/// An entry read from its raw table, checked against the recorded steps.
pub(super) fn entry_of(raw: &RawEntry, steps: &[RecordedStep]) -> Result<Entry, (String, String)> {
    let kinds = [
        raw.recorded.is_some(),
        raw.wait.is_some(),
        raw.assert.is_some(),
        raw.read.is_some(),
        raw.if_.is_some(),
        raw.else_.is_some(),
        raw.end.is_some(),
        raw.repeat.is_some(),
        raw.retry.is_some(),
    ];
    match kinds.iter().filter(|kind| **kind).count() {
        1 => {}
        0 => return Err(("step".into(), format!("an entry is one of {KINDS}"))),
        _ => {
            return Err((
                "step".into(),
                format!("an entry holds one of {KINDS}: split it into entries"),
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
    if raw.else_ == Some(false) || raw.end == Some(false) {
        return Err(("step".into(), "write else = true, end = true".into()));
    }
    if raw.else_.is_some() {
        return Ok(Entry::Else);
    }
    if raw.end.is_some() {
        return Ok(Entry::End);
    }
    if let Some(wait) = &raw.wait {
        return wait_entry(wait, "wait").map(Entry::Wait);
    }
    if let Some(condition) = &raw.if_ {
        return wait_entry(condition, "if").map(Entry::If);
    }
    if let Some(repeat) = &raw.repeat {
        return repeat_entry(repeat).map(Entry::Repeat);
    }
    if let Some(retry) = &raw.retry {
        return retry_entry(retry);
    }
    if let Some(check) = &raw.assert {
        return assert_entry(check);
    }
    let read = raw.read.as_ref().expect("one kind is there");
    if let Some(field) = stray(read, &["into", "secret"]) {
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
        secret: read.secret.unwrap_or(false),
    }))
}

fn assert_entry(check: &RawElement) -> Result<Entry, (String, String)> {
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
    Ok(Entry::Assert(Assertion {
        element: query_of(check, "assert")?,
        compare,
    }))
}

fn retry_entry(raw: &RawElement) -> Result<Entry, (String, String)> {
    let has_other = raw.role.is_some()
        || raw.name.is_some()
        || raw.window.is_some()
        || raw.value.is_some()
        || stray(raw, &["times"]).is_some();
    if has_other {
        return Err((
            "retry".into(),
            "a retry takes only its tries: times = N".into(),
        ));
    }
    let times = raw.times.map(Number::get).ok_or_else(|| {
        (
            "retry.times".into(),
            "a retry needs its bound: times = TRIES".into(),
        )
    })?;
    if !(times >= 1.0 && times.fract() == 0.0 && times <= f64::from(u32::MAX)) {
        return Err((
            "retry.times".into(),
            "times is a whole number of tries, 1 or more".into(),
        ));
    }
    Ok(Entry::Retry {
        times: times as u32,
    })
}

fn repeat_entry(raw: &RawElement) -> Result<Repeat, (String, String)> {
    let Some(max) = raw.max else {
        return Err((
            "repeat.max".into(),
            "a repeat needs its bound: max = ROUNDS".into(),
        ));
    };
    let max = max.get();
    if !(max >= 1.0 && max.fract() == 0.0 && max <= f64::from(u32::MAX)) {
        return Err((
            "repeat.max".into(),
            "max is a whole number of rounds, 1 or more".into(),
        ));
    }
    let over = match &raw.rows {
        Some(file) => {
            let has_condition = raw.role.is_some()
                || raw.name.is_some()
                || raw.window.is_some()
                || raw.value.is_some();
            if let Some(field) = stray(raw, &["rows", "max"]).or(has_condition.then_some("rows")) {
                return Err((
                    format!("repeat.{field}"),
                    "a repeat goes over rows, or while a condition holds, not both".into(),
                ));
            }
            Over::Rows(file.clone())
        }
        None => {
            if let Some(field) = stray(
                raw,
                &[
                    "gone", "equals", "contains", "matches", "near", "within", "value", "max",
                ],
            ) {
                return Err((
                    format!("repeat.{field}"),
                    "a repeat does not take it".into(),
                ));
            }
            Over::While(condition_of(raw, "repeat")?)
        }
    };
    Ok(Repeat {
        over,
        max: max as u32,
    })
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

/// A wait (`what` = "wait": its timeout required) or an if's condition
/// (its timeout 0 unless given).
fn wait_entry(raw: &RawElement, what: &str) -> Result<Wait, (String, String)> {
    let timeout = match (raw.timeout, what) {
        (Some(timeout), _) => timeout.get(),
        (None, "wait") => {
            return Err((
                "wait.timeout".into(),
                "a wait needs its bound: timeout = SECONDS".into(),
            ));
        }
        (None, _) => 0.0,
    };
    let mut allowed = vec![
        "gone", "equals", "contains", "matches", "near", "within", "timeout",
    ];
    if what == "if" {
        allowed.push("value");
    }
    if let Some(field) = stray(raw, &allowed) {
        return Err((
            format!("{what}.{field}"),
            format!("a {what} does not take it"),
        ));
    }
    Ok(Wait {
        until: condition_of(raw, what)?,
        timeout_seconds: timeout,
    })
}

/// The condition a raw table names: a window's title alone, a value (a
/// text naming variables) and its comparison, or an element that shows,
/// is gone or holds a value.
fn condition_of(raw: &RawElement, what: &str) -> Result<Until, (String, String)> {
    let compare = compare_of(raw, what)?;
    if let Some(text) = &raw.value {
        if raw.role.is_some() || raw.name.is_some() || raw.window.is_some() || raw.gone.is_some() {
            return Err((
                format!("{what}.value"),
                "a value's condition takes only the value and its comparison".into(),
            ));
        }
        let compare = compare.ok_or_else(|| {
            (
                what.into(),
                "say what the value must be: equals, contains, matches or near".into(),
            )
        })?;
        return Ok(Until::Value {
            text: text.clone(),
            compare,
        });
    }
    if raw.role.is_none() && raw.name.is_none() {
        let title = raw.window.clone().ok_or_else(|| {
            (
                what.into(),
                format!("say what the {what} looks for: window = \"TITLE\", an element's role and name, or a value"),
            )
        })?;
        if raw.gone.is_some() || compare.is_some() {
            return Err((
                what.into(),
                format!("a {what} on a window takes only its title"),
            ));
        }
        return Ok(Until::Window { title });
    }
    let element = query_of(raw, what)?;
    Ok(match (raw.gone.unwrap_or(false), compare) {
        (true, Some(_)) => {
            return Err((
                format!("{what}.gone"),
                "it is gone, or it holds a value, not both".into(),
            ));
        }
        (true, None) => Until::Gone { element },
        (false, Some(compare)) => Until::Holds { element, compare },
        (false, None) => Until::Shows { element },
    })
}
