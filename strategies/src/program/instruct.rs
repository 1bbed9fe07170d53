//! The instructions decided: a wait looks again until its condition holds
//! (bounded), an assertion compares, a read keeps a value; each from the
//! live tree or the active window.

use std::time::Duration;

use reprise_models::program::{Entry, Query, Until, fill};
use reprise_models::{A11yTree, ElementState};

use super::{FIND_WAIT, Instruction, ProgramStrategy};
use crate::{Decision, Evidence, EvidenceKind, Observation, Step, StrategyError, Verification};

impl ProgramStrategy {
    /// The step an instruction is, at `(step_idx, slot, before)`: the
    /// loop's index, the program's slot, and the slot of the step before.
    pub(super) fn decide_instruction(
        &mut self,
        (step_idx, slot, before): (usize, usize, Option<usize>),
        instruction: &Instruction,
        observation: &Observation<'_>,
    ) -> Result<Decision, StrategyError> {
        let (label, evidence) = match &instruction.entry {
            Entry::If(condition) => self.decide_if(slot, instruction, condition, observation)?,
            Entry::Repeat(repeat) => {
                self.decide_repeat((step_idx, slot, before), instruction, repeat, observation)?
            }
            Entry::Retry { times } => {
                self.decide_retry((step_idx, slot, before), instruction, *times)
            }
            Entry::Wait(wait) => {
                let timeout = Duration::from_secs_f64(wait.timeout_seconds);
                let label = wait_label(&wait.until, wait.timeout_seconds);
                match self.waited(instruction, &wait.until, observation)? {
                    Ok(evidence) => (label, evidence),
                    Err(why) => {
                        look_again(observation, timeout, &format!("{label}: {why}"))?;
                        return Err(StrategyError::Fatal(format!(
                            "{label}: it did not come within {} s ({why})",
                            wait.timeout_seconds
                        )));
                    }
                }
            }
            Entry::Assert(assertion) => {
                let expected = self.filled(&assertion.compare.expected())?;
                let label = format!(
                    "check that {} {}",
                    assertion.element.label(),
                    assertion.compare.words(&expected)
                );
                let value = self.value_of(instruction, &assertion.element, observation)?;
                if !assertion.compare.passes(&value, &expected) {
                    return Err(StrategyError::Fatal(format!(
                        "assertion failed: {} holds {value:?}; expected a value that {}",
                        assertion.element.label(),
                        assertion.compare.words(&expected)
                    )));
                }
                let words = format!(
                    "{} holds {value:?}, which {}",
                    assertion.element.label(),
                    assertion.compare.words(&expected)
                );
                (label, Evidence::new(EvidenceKind::State, words))
            }
            Entry::Read(read) => {
                let label = format!("read {} into {{{}}}", read.element.label(), read.into);
                let value = self.value_of(instruction, &read.element, observation)?;
                let words = format!(
                    "{} holds {value:?}, kept as {{{}}}",
                    read.element.label(),
                    read.into
                );
                self.values.insert(read.into.clone(), value);
                (label, Evidence::new(EvidenceKind::State, words))
            }
            Entry::Recorded { .. } | Entry::Else | Entry::End => {
                unreachable!("not an instruction: {:?}", instruction.entry)
            }
        };
        self.checked = Some((step_idx, evidence));
        Ok(Decision::Step(Step {
            label,
            reason: "an instruction of the recording's steps".into(),
            ..Default::default()
        }))
    }

    /// Whether a wait's condition holds now: its evidence, else why not.
    pub(super) fn waited(
        &self,
        instruction: &Instruction,
        until: &Until,
        observation: &Observation<'_>,
    ) -> Result<Result<Evidence, String>, StrategyError> {
        Ok(match until {
            Until::Window { title } => match observation.window {
                Some(window) if window.title == *title => Ok(Evidence::new(
                    EvidenceKind::Window,
                    format!("the window {title:?} is active"),
                )),
                Some(window) => Err(format!("{:?} is the active window", window.title)),
                None => Err("no window is active".into()),
            },
            Until::Value { text, compare } => {
                let value = self.filled(text)?;
                let expected = self.filled(&compare.expected())?;
                if compare.passes(&value, &expected) {
                    Ok(Evidence::new(
                        EvidenceKind::State,
                        format!("{text} is {value:?}, which {}", compare.words(&expected)),
                    ))
                } else {
                    Err(format!("{text} is {value:?}"))
                }
            }
            Until::Shows { element } => match find(observation.tree, element)? {
                Some(_) => Ok(Evidence::new(
                    EvidenceKind::State,
                    format!("{} shows", element.label()),
                )),
                None => Err(not_there(instruction, observation)),
            },
            Until::Gone { element } => match find(observation.tree, element)? {
                Some(_) => Err(format!("{} still shows", element.label())),
                None => Ok(Evidence::new(
                    EvidenceKind::State,
                    format!("{} no longer shows", element.label()),
                )),
            },
            Until::Holds { element, compare } => {
                let expected = self.filled(&compare.expected())?;
                match find(observation.tree, element)? {
                    Some(value) if compare.passes(&value, &expected) => Ok(Evidence::new(
                        EvidenceKind::State,
                        format!(
                            "{} holds {value:?}, which {}",
                            element.label(),
                            compare.words(&expected)
                        ),
                    )),
                    Some(value) => Err(format!("it holds {value:?}")),
                    None => Err(not_there(instruction, observation)),
                }
            }
        })
    }

    /// The value of the element a query names, looked for a moment before
    /// it is refused as not there.
    fn value_of(
        &self,
        instruction: &Instruction,
        element: &Query,
        observation: &Observation<'_>,
    ) -> Result<String, StrategyError> {
        match find(observation.tree, element)? {
            Some(value) => Ok(value),
            None => {
                let reason = format!("{} is not there yet", element.label());
                look_again(observation, FIND_WAIT, &reason)?;
                Err(StrategyError::Fatal(format!(
                    "{} is not there: {}{}",
                    element.label(),
                    not_there(instruction, observation),
                    others_shown(observation.tree, element)
                )))
            }
        }
    }

    fn filled(&self, text: &str) -> Result<String, StrategyError> {
        fill(text, &self.values).map_err(|err| StrategyError::Fatal(err.to_string()))
    }
}

/// Looks again (the loop's wait, not an attempt) until `timeout` has
/// passed since the first look; then it is for the caller to end.
pub(super) fn look_again(
    observation: &Observation<'_>,
    timeout: Duration,
    reason: &str,
) -> Result<(), StrategyError> {
    if observation.looked < timeout {
        return Err(StrategyError::NotYet {
            reason: reason.to_owned(),
            // Past the timeout, so that the last look is this side's.
            wait: timeout + Duration::from_secs(2),
        });
    }
    Ok(())
}

/// What shows instead of an element not found by its name, so that a
/// check of a label (whose value is its name: another total is another
/// label) still shows both values: `; labels there: "Total: 41"` (the
/// first 3 of its role, in reading order). Empty where none shows or the
/// query names no role or no name.
fn others_shown(tree: Option<&A11yTree>, element: &Query) -> String {
    let (Some(tree), Some(role), Some(_)) = (tree, element.role, element.name.as_ref()) else {
        return String::new();
    };
    let by_role = Query {
        name: None,
        nth: None,
        ..element.clone()
    };
    let shown = in_reading_order(matching(tree, &by_role));
    let values: Vec<String> = shown
        .iter()
        .filter_map(|node| node.value.clone().or_else(|| node.name.clone()))
        .filter(|value| !value.trim().is_empty())
        .take(3)
        .map(|value| format!("{:?}", value.chars().take(60).collect::<String>()))
        .collect();
    if values.is_empty() {
        return String::new();
    }
    format!(
        "; {}s there: {}{}",
        reprise_models::element::role_name(role),
        values.join(", "),
        if shown.len() > values.len() {
            ", …"
        } else {
            ""
        }
    )
}

fn not_there(instruction: &Instruction, observation: &Observation<'_>) -> String {
    match (&instruction.window, observation.tree) {
        (Some(window), None) => format!("no window {window:?} of {} shows", instruction.app),
        (Some(window), Some(_)) => format!("nothing in {window:?} is it"),
        (None, _) => "no window to look in".into(),
    }
}

fn wait_label(until: &Until, timeout: f64) -> String {
    format!(
        "wait until {} (at most {timeout} s)",
        condition_words(until)
    )
}

/// A condition in words: `the window "Saved" is active`.
pub(super) fn condition_words(until: &Until) -> String {
    match until {
        Until::Window { title } => format!("the window {title:?} is active"),
        Until::Shows { element } => format!("{} shows", element.label()),
        Until::Gone { element } => format!("{} is gone", element.label()),
        Until::Holds { element, compare } => {
            format!("{} {}", element.label(), compare.words(&compare.expected()))
        }
        Until::Value { text, compare } => format!("{text} {}", compare.words(&compare.expected())),
    }
}

/// Where the focused field of `tree` holds every value of `typed`: that,
/// as the application's own state.
pub(super) fn holds_typed(tree: Option<&A11yTree>, typed: &[String]) -> Option<Verification> {
    if typed.is_empty() {
        return None;
    }
    let focused = tree?.nodes.iter().find(|node| {
        node.states.contains(&ElementState::Focused)
            && reprise_models::element::takes_typing(node.role)
    })?;
    let value = focused.value.as_deref()?;
    typed
        .iter()
        .all(|text| value.contains(text.as_str()))
        .then(|| {
            Verification::Verified(Evidence::new(
                EvidenceKind::State,
                format!(
                    "the focused {} holds {value:?}, with the value{} read",
                    reprise_models::element::role_name(focused.role),
                    if typed.len() == 1 { "" } else { "s" }
                ),
            ))
        })
}

/// The value of the one element of `tree` that `query` names (a field's
/// text, else its name); `None` when none shows; refused when several do,
/// since a wrong one is worse than none.
pub fn find(tree: Option<&A11yTree>, query: &Query) -> Result<Option<String>, StrategyError> {
    let Some(tree) = tree else {
        return Ok(None);
    };
    let matches = matching(tree, query);
    let value = |node: &reprise_models::A11yNode| {
        node.value
            .clone()
            .or_else(|| node.name.clone())
            .unwrap_or_default()
    };
    if let Some(nth) = query.nth {
        let sorted = in_reading_order(matches);
        return Ok(nth
            .checked_sub(1)
            .and_then(|idx| sorted.get(idx as usize))
            .map(|node| value(node)));
    }
    match matches[..] {
        [] => Ok(None),
        [node] => Ok(Some(value(node))),
        _ => Err(StrategyError::Fatal(format!(
            "{} names {} elements here: give its name, its window or nth = N (which of them, in reading order) to tell them apart",
            query.label(),
            matches.len()
        ))),
    }
}

/// The showing elements of `tree` that `query`'s role and name name (its
/// `nth` aside).
pub fn matching<'a>(tree: &'a A11yTree, query: &Query) -> Vec<&'a reprise_models::A11yNode> {
    tree.nodes
        .iter()
        .filter(|node| {
            !node.states.contains(&ElementState::Offscreen)
                && query.role.is_none_or(|role| {
                    use reprise_models::element::role_name;
                    role == node.role
                        || (role_name(role) != "element" && role_name(role) == role_name(node.role))
                })
                && query
                    .name
                    .as_deref()
                    .is_none_or(|name| crate::identity::same_name(Some(name), node.name.as_deref()))
        })
        .collect()
}

/// `nodes` in reading order: top to bottom, then left to right (those
/// without a box last).
pub fn in_reading_order(
    mut nodes: Vec<&reprise_models::A11yNode>,
) -> Vec<&reprise_models::A11yNode> {
    nodes.sort_by_key(|node| {
        node.rect
            .map_or((i32::MAX, i32::MAX), |rect| (rect.top, rect.left))
    });
    nodes
}
