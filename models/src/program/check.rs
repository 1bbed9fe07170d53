//! The rules a program keeps, each mistake at its entry and field.

use std::collections::BTreeMap;

use super::{
    Compare, Entry, MAX_REPEAT, MAX_TRIES, MAX_WAIT_SECONDS, Over, Program, Query, Repeat, Tables,
    Until, Wait, pieces, variables_in,
};

/// What a program is checked against: the recording's `n_steps` steps,
/// which of them type each parameter (name → planned step, from 1), its
/// secrets, and the rows files its repeats name, as read.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub n_steps: usize,
    pub parameters: &'a BTreeMap<String, usize>,
    pub secrets: &'a [String],
    pub tables: &'a Tables,
}

/// A block's places: its `If` or `Repeat`, its `Else`, its `End`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub opener: usize,
    pub middle: Option<usize>,
    pub end: usize,
}

/// Every block of `entries`, in the order they open; an `Else` outside an
/// `If`, an `End` with nothing to end or a block with no `End` is the
/// mistake.
pub fn block_ends(entries: &[Entry]) -> Result<Vec<Block>, ProgramError> {
    let mut open: Vec<Block> = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    for (idx, entry) in entries.iter().enumerate() {
        match entry {
            Entry::If(_) | Entry::Repeat(_) | Entry::Retry { .. } => open.push(Block {
                opener: idx,
                middle: None,
                end: usize::MAX,
            }),
            Entry::Else => match open.last_mut() {
                Some(block)
                    if matches!(entries[block.opener], Entry::If(_)) && block.middle.is_none() =>
                {
                    block.middle = Some(idx);
                }
                _ => {
                    return Err(ProgramError::at(
                        Some(idx),
                        "else",
                        "an else belongs inside an if, once",
                    ));
                }
            },
            Entry::End => {
                let mut block = open.pop().ok_or_else(|| {
                    ProgramError::at(Some(idx), "end", "this end closes no if or repeat")
                })?;
                block.end = idx;
                blocks.push(block);
            }
            _ => {}
        }
    }
    if let Some(block) = open.pop() {
        let what = match entries[block.opener] {
            Entry::If(_) => "if",
            Entry::Retry { .. } => "retry",
            _ => "repeat",
        };
        return Err(ProgramError::at(
            Some(block.opener),
            what,
            format!("this {what} has no end: close its block with end = true"),
        ));
    }
    blocks.sort_by_key(|block| block.opener);
    Ok(blocks)
}

/// A mistake in a program, at its entry (counted from 0).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProgramError {
    /// The entry it is in; `None` for the values.
    pub entry: Option<usize>,
    /// The field (`recorded`, `wait.timeout`, `values.total`).
    pub field: String,
    pub message: String,
}

impl ProgramError {
    fn at(entry: Option<usize>, field: &str, message: impl Into<String>) -> ProgramError {
        ProgramError {
            entry,
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// What the entries before the one being checked did.
#[derive(Default)]
struct Seen {
    /// The recorded steps listed, by number.
    steps: BTreeMap<usize, usize>,
    /// The variables read, with the entry that reads each.
    read: Vec<(String, usize)>,
    /// The recording's text parameters: a check's expected text may name
    /// one (the value typed at this replay).
    parameters: Vec<String>,
}

impl Program {
    /// Checks the rules a program keeps against the recording's `facts`:
    /// every recorded step at most once and within the recording; every
    /// wait and repeat bounded; blocks closed; every query naming a role
    /// or a name; a variable read before any use, never read into the name
    /// of a parameter; values only for known text parameters.
    pub fn check(&self, facts: &Facts<'_>) -> Result<(), ProgramError> {
        block_ends(&self.entries)?;
        let mut seen = Seen {
            parameters: facts.parameters.keys().cloned().collect(),
            ..Seen::default()
        };
        for (idx, entry) in self.entries.iter().enumerate() {
            let at = Some(idx);
            match entry {
                Entry::Recorded { step } => check_recorded(at, *step, facts.n_steps, &mut seen)?,
                Entry::Wait(wait) => {
                    if matches!(wait.until, Until::Value { .. }) {
                        return Err(ProgramError::at(
                            at,
                            "wait.value",
                            "a wait waits for the screen; test a value read with if",
                        ));
                    }
                    check_wait(at, "wait", wait, &seen)?;
                }
                Entry::If(condition) => check_wait(at, "if", condition, &seen)?,
                Entry::Repeat(repeat) => check_repeat(at, repeat, facts, &mut seen)?,
                Entry::Retry { times } if !(1..=MAX_TRIES).contains(times) => {
                    return Err(ProgramError::at(
                        at,
                        "retry.times",
                        format!("a retry needs its tries: times from 1 to {MAX_TRIES}"),
                    ));
                }
                Entry::Retry { .. } => {}
                Entry::Else | Entry::End => {}
                Entry::Assert(assertion) => {
                    check_query(at, "assert", &assertion.element)?;
                    check_compare(at, "assert", &assertion.compare, &seen)?;
                }
                Entry::Read(reading) => {
                    check_query(at, "read", &reading.element)?;
                    check_into(at, "read.into", &reading.into, facts)?;
                    seen.read.push((reading.into.clone(), idx));
                }
            }
        }
        for (name, value) in &self.values {
            check_value(name, value, facts, &seen)?;
        }
        Ok(())
    }
}

fn check_repeat(
    at: Option<usize>,
    repeat: &Repeat,
    facts: &Facts<'_>,
    seen: &mut Seen,
) -> Result<(), ProgramError> {
    if !(1..=MAX_REPEAT).contains(&repeat.max) {
        return Err(ProgramError::at(
            at,
            "repeat.max",
            format!("a repeat needs its most rounds: max from 1 to {MAX_REPEAT}"),
        ));
    }
    match &repeat.over {
        Over::Rows(file) => {
            let table = facts.tables.get(file).ok_or_else(|| {
                ProgramError::at(
                    at,
                    "repeat.rows",
                    format!("the rows in {file:?} were not read"),
                )
            })?;
            if table.rows.len() > repeat.max as usize {
                return Err(ProgramError::at(
                    at,
                    "repeat.max",
                    format!(
                        "{file:?} has {} rows, more than max = {}",
                        table.rows.len(),
                        repeat.max
                    ),
                ));
            }
            for column in &table.columns {
                check_into(at, "repeat.rows", column, facts)?;
                seen.read.push((column.clone(), at.unwrap_or(0)));
            }
            Ok(())
        }
        Over::While(until) => check_until(at, "repeat", until, seen),
    }
}
fn check_recorded(
    at: Option<usize>,
    step: usize,
    n_steps: usize,
    seen: &mut Seen,
) -> Result<(), ProgramError> {
    if step == 0 || step > n_steps {
        return Err(ProgramError::at(
            at,
            "recorded",
            format!("the recording has steps 1 to {n_steps}, not {step}"),
        ));
    }
    if seen.steps.insert(step, at.unwrap_or(0)).is_some() {
        return Err(ProgramError::at(
            at,
            "recorded",
            format!(
                "step {step} is listed twice (a step is replayed at most once; record it again to repeat it)"
            ),
        ));
    }
    Ok(())
}

fn check_wait(at: Option<usize>, what: &str, wait: &Wait, seen: &Seen) -> Result<(), ProgramError> {
    // An if may look once (0); a wait needs time to wait.
    let least_ok = if what == "if" {
        wait.timeout_seconds >= 0.0
    } else {
        wait.timeout_seconds > 0.0
    };
    if !(least_ok && wait.timeout_seconds <= MAX_WAIT_SECONDS) {
        return Err(ProgramError::at(
            at,
            &format!("{what}.timeout"),
            format!(
                "a {what} needs a timeout above 0 and at most {MAX_WAIT_SECONDS} seconds, not {}",
                wait.timeout_seconds
            ),
        ));
    }
    check_until(at, what, &wait.until, seen)
}

fn check_until(
    at: Option<usize>,
    what: &str,
    until: &Until,
    seen: &Seen,
) -> Result<(), ProgramError> {
    match until {
        Until::Shows { element } | Until::Gone { element } => check_query(at, what, element),
        Until::Holds { element, compare } => {
            check_query(at, what, element)?;
            check_compare(at, what, compare, seen)
        }
        Until::Value { text, compare } => {
            check_compare(at, what, compare, seen)?;
            check_compare(at, what, &Compare::Equals(text.clone()), seen)
        }
        Until::Window { title } if title.trim().is_empty() => Err(ProgramError::at(
            at,
            &format!("{what}.window"),
            "the window's title is empty",
        )),
        Until::Window { .. } => Ok(()),
    }
}

fn check_into(
    at: Option<usize>,
    field: &str,
    into: &str,
    facts: &Facts<'_>,
) -> Result<(), ProgramError> {
    if !crate::parameter::is_valid_name(into) {
        return Err(ProgramError::at(
            at,
            field,
            format!(
                "{into:?} cannot name a variable: use letters, digits and _, starting with a letter"
            ),
        ));
    }
    if facts.parameters.contains_key(into) || facts.secrets.iter().any(|secret| secret == into) {
        return Err(ProgramError::at(
            at,
            field,
            format!("{{{into}}} is already a parameter of the recording: read into another name"),
        ));
    }
    Ok(())
}

/// A value for a parameter: a known text parameter, not a secret, its
/// variables read before the step that types it.
fn check_value(
    name: &str,
    value: &str,
    facts: &Facts<'_>,
    seen: &Seen,
) -> Result<(), ProgramError> {
    let (parameters, secrets) = (facts.parameters, facts.secrets);
    let field = format!("values.{name}");
    if secrets.iter().any(|secret| secret == name) {
        return Err(ProgramError::at(
            None,
            &field,
            format!(
                "{{{name}}} is a secret: its value comes from outside at replay, never from the steps"
            ),
        ));
    }
    let Some(step) = parameters.get(name) else {
        let known: Vec<String> = parameters
            .keys()
            .map(|name| format!("{{{name}}}"))
            .collect();
        let known = if known.is_empty() {
            "none".into()
        } else {
            known.join(", ")
        };
        return Err(ProgramError::at(
            None,
            &field,
            format!("the recording has no parameter {{{name}}}; it has: {known}"),
        ));
    };
    pieces(value).map_err(|err| ProgramError::at(None, &field, err.to_string()))?;
    let typed_at = seen.steps.get(step).copied();
    for variable in variables_in(value) {
        let read_at = seen
            .read
            .iter()
            .find(|(name, _)| *name == variable)
            .map(|(_, read_at)| *read_at);
        let message = match (read_at, typed_at) {
            (None, _) => format!("{{{variable}}} is not a variable: no step reads into it"),
            (Some(read_at), Some(typed_at)) if read_at > typed_at => {
                format!("{{{variable}}} is typed at step {step}, before the step that reads it")
            }
            _ => continue,
        };
        return Err(ProgramError::at(None, &field, message));
    }
    Ok(())
}

fn check_query(at: Option<usize>, what: &str, query: &Query) -> Result<(), ProgramError> {
    if query.nth == Some(0) {
        return Err(ProgramError::at(
            at,
            &format!("{what}.nth"),
            "nth is which of the elements alike: a whole number from 1",
        ));
    }
    if query.role.is_none()
        && query
            .name
            .as_deref()
            .is_none_or(|name| name.trim().is_empty())
    {
        return Err(ProgramError::at(
            at,
            what,
            format!("the {what} names no element: give its role, its name, or both"),
        ));
    }
    Ok(())
}

fn check_compare(
    at: Option<usize>,
    what: &str,
    compare: &Compare,
    seen: &Seen,
) -> Result<(), ProgramError> {
    if let Compare::Near { within, .. } = compare
        && !(within.is_finite() && *within >= 0.0)
    {
        return Err(ProgramError::at(
            at,
            &format!("{what}.within"),
            "within must be a number 0 or above",
        ));
    }
    let expected = compare.expected();
    pieces(&expected).map_err(|err| ProgramError::at(at, what, err.to_string()))?;
    for variable in variables_in(&expected) {
        if !seen.read.iter().any(|(name, _)| *name == variable)
            && !seen.parameters.contains(&variable)
        {
            return Err(ProgramError::at(
                at,
                what,
                format!("{{{variable}}} is not read by any step before this one"),
            ));
        }
    }
    Ok(())
}
