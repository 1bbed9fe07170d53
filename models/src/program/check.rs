//! The rules a program keeps, each mistake at its entry and field.

use std::collections::BTreeMap;

use super::{Compare, Entry, MAX_WAIT_SECONDS, Program, Query, Until, Wait, pieces, variables_in};

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
}

impl Program {
    /// Checks the rules a program keeps, given the recording's `n_steps`
    /// steps, which of them type each parameter (`parameters`: name →
    /// planned step, from 1), and which are secrets: every recorded step at
    /// most once and within the recording; every wait bounded; every query
    /// naming a role or a name; a variable read before any use, never read
    /// into the name of a parameter; values only for known text parameters.
    pub fn check(
        &self,
        n_steps: usize,
        parameters: &BTreeMap<String, usize>,
        secrets: &[String],
    ) -> Result<(), ProgramError> {
        let mut seen = Seen::default();
        for (idx, entry) in self.entries.iter().enumerate() {
            let at = Some(idx);
            match entry {
                Entry::Recorded { step } => check_recorded(at, *step, n_steps, &mut seen)?,
                Entry::Wait(wait) => check_wait(at, wait, &seen)?,
                Entry::Assert(assertion) => {
                    check_query(at, "assert", &assertion.element)?;
                    check_compare(at, "assert", &assertion.compare, &seen)?;
                }
                Entry::Read(reading) => {
                    check_query(at, "read", &reading.element)?;
                    check_into(at, &reading.into, parameters, secrets)?;
                    seen.read.push((reading.into.clone(), idx));
                }
            }
        }
        for (name, value) in &self.values {
            check_value(name, value, parameters, secrets, &seen)?;
        }
        Ok(())
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

fn check_wait(at: Option<usize>, wait: &Wait, seen: &Seen) -> Result<(), ProgramError> {
    if !(wait.timeout_seconds > 0.0 && wait.timeout_seconds <= MAX_WAIT_SECONDS) {
        return Err(ProgramError::at(
            at,
            "wait.timeout",
            format!(
                "a wait needs a timeout above 0 and at most {MAX_WAIT_SECONDS} seconds, not {}",
                wait.timeout_seconds
            ),
        ));
    }
    match &wait.until {
        Until::Shows { element } | Until::Gone { element } => check_query(at, "wait", element),
        Until::Holds { element, compare } => {
            check_query(at, "wait", element)?;
            check_compare(at, "wait", compare, seen)
        }
        Until::Window { title } if title.trim().is_empty() => Err(ProgramError::at(
            at,
            "wait.window",
            "the window's title is empty",
        )),
        Until::Window { .. } => Ok(()),
    }
}

fn check_into(
    at: Option<usize>,
    into: &str,
    parameters: &BTreeMap<String, usize>,
    secrets: &[String],
) -> Result<(), ProgramError> {
    if !crate::parameter::is_valid_name(into) {
        return Err(ProgramError::at(
            at,
            "read.into",
            format!(
                "{into:?} cannot name a variable: use letters, digits and _, starting with a letter"
            ),
        ));
    }
    if parameters.contains_key(into) || secrets.iter().any(|secret| secret == into) {
        return Err(ProgramError::at(
            at,
            "read.into",
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
    parameters: &BTreeMap<String, usize>,
    secrets: &[String],
    seen: &Seen,
) -> Result<(), ProgramError> {
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
        if !seen.read.iter().any(|(name, _)| *name == variable) {
            return Err(ProgramError::at(
                at,
                what,
                format!("{{{variable}}} is not read by any step before this one"),
            ));
        }
    }
    Ok(())
}
