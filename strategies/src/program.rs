//! A recording's program replayed: its recorded steps in the program's
//! order through any strategy that replays a recording, and its
//! instructions (wait, assert, read) and blocks (if, repeat) decided here
//! from the live tree, the active window or the values read, each with a
//! bound and a clear refusal.
//!
//! [`compile`] turns the planned steps and a program into the steps the
//! inner strategy replays and the program's slots; [`ProgramStrategy`]
//! maps the loop's step indexes onto them.

use std::collections::BTreeMap;
use std::time::Duration;

use reprise_models::program::{Block, Entry, Table};
use reprise_models::{ActionEvent, WindowIdentity};

use crate::desktop::TreeRequest;
use crate::strategy::{Effect, Missed};
use crate::{
    Action, Decision, Evidence, Observation, ReplayStrategy, Step, StrategyError, Verification,
};

/// How long an assertion or a read looks for its element before it is
/// refused as not there (the screen may still be settling into it).
pub const FIND_WAIT: Duration = Duration::from_secs(3);

/// One place of a compiled program.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    /// The inner strategy's step `inner`, the recording's step `step` (from
    /// 1); where it types a value read, the window of the field it types
    /// into (whose tree shows what it typed).
    Recorded {
        inner: usize,
        step: usize,
        types_into: Option<TreeRequest>,
    },
    /// An instruction, its element's application and window resolved.
    Instruction(Instruction),
    /// An `else`, reached when the block before it ran: on after `end`.
    Else { end: usize },
    /// The `end` of the block opened at `opener`.
    End { opener: usize },
}

/// An instruction ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub entry: Entry,
    /// The accessible application and window its element is looked for in.
    pub app: String,
    pub window: Option<String>,
    /// An `if`'s or a `repeat`'s block.
    pub block: Option<Block>,
    /// A repeat's rows, as read.
    pub table: Option<Table>,
}

/// The steps the inner strategy replays, and the program's places.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub trees: Vec<ActionEvent>,
    pub slots: Vec<Slot>,
    /// The variables the program reads (never secrets of the recording).
    pub variables: Vec<String>,
    /// Those read as secrets: typed and compared, never shown.
    pub secrets: Vec<String>,
    /// The value each text parameter is typed with in this run (its
    /// recorded one, else the version's or `--set`'s), which a check's
    /// expected text may name.
    pub parameters: BTreeMap<String, String>,
}

impl Compiled {
    /// Whether it has an `if` or a `repeat`: which steps run is then known
    /// only as it runs.
    pub fn has_blocks(&self) -> bool {
        self.slots
            .iter()
            .any(|slot| matches!(slot, Slot::End { .. }))
    }
}

/// A strategy that replays a compiled program: the recorded steps through
/// `inner`, the instructions itself.
pub struct ProgramStrategy {
    inner: Box<dyn ReplayStrategy>,
    slots: Vec<Slot>,
    variables: Vec<String>,
    secrets: Vec<String>,
    /// What the program read so far.
    values: BTreeMap<String, String>,
    /// The evidence of the instruction decided last.
    checked: Option<(usize, Evidence)>,
    /// The values read that the step decided last types.
    typed: Vec<String>,
    /// Where the program is: its blocks' decisions and the step being
    /// decided.
    flow: flow::Flow,
}

impl std::fmt::Debug for ProgramStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgramStrategy")
            .field("inner", &self.inner.name())
            .field("slots", &self.slots)
            .finish_non_exhaustive()
    }
}

impl ProgramStrategy {
    pub fn new(mut inner: Box<dyn ReplayStrategy>, compiled: &Compiled) -> ProgramStrategy {
        let last_recorded = compiled
            .slots
            .iter()
            .rposition(|slot| matches!(slot, Slot::Recorded { .. }));
        if compiled.has_blocks()
            || last_recorded.is_some_and(|last| last + 1 != compiled.slots.len())
        {
            inner.open_end();
        }
        ProgramStrategy {
            inner,
            slots: compiled.slots.clone(),
            variables: compiled.variables.clone(),
            secrets: compiled.secrets.clone(),
            values: compiled.parameters.clone(),
            checked: None,
            typed: Vec::new(),
            flow: flow::Flow::new(compiled.has_blocks()),
        }
    }

    /// The slot step `step_idx` is (see [`flow`]).
    fn slot(&self, step_idx: usize) -> Option<&Slot> {
        self.slots
            .get(self.flow.slot_of(&self.slots, step_idx).slot()?)
    }

    fn inner_of(&self, step_idx: usize) -> Option<usize> {
        match self.slot(step_idx)? {
            Slot::Recorded { inner, .. } => Some(*inner),
            _ => None,
        }
    }

    /// Where blocks decide what runs after a step (so the recording's next
    /// window is no expectation), the window the step was made in giving
    /// way (another window, or none, active) is its effect: what shows
    /// next, the program's next steps check.
    fn window_closed(&self, inner: usize, effect: &Effect<'_>) -> Option<Verification> {
        let (before, after) = (effect.window?, effect.window_after);
        if !self.flow.blocks()
            || !self.inner.window_gives_way(inner)
            || after.is_some_and(|after| crate::strategy::same_instance(before, after))
        {
            return None;
        }
        Some(Verification::Verified(Evidence::new(
            crate::EvidenceKind::Window,
            format!(
                "the window {:?} it was made in gave way to {}, as the recording's did; what shows next, the steps after it check",
                before.title,
                after.map_or_else(
                    || "no window".into(),
                    |after| format!("another {:?}", after.title)
                )
            ),
        )))
    }

    /// The recorded step's decision, a variable's keys typed as its value.
    fn decide_recorded(
        &mut self,
        inner: usize,
        observation: &Observation<'_>,
    ) -> Result<Decision, StrategyError> {
        let inner_observation = Observation {
            step_idx: inner,
            ..*observation
        };
        let decision = self.inner.decide(&inner_observation)?;
        self.typed.clear();
        let typed = &mut self.typed;
        let mut fill = |step: Step| -> Result<Step, StrategyError> {
            let mut step = step;
            for action in &mut step.actions {
                if let Action::TypeSecret { name } = action
                    && self.variables.contains(name)
                {
                    let value = self.values.get(name).ok_or_else(|| {
                        StrategyError::Fatal(format!(
                            "{{{name}}} has no value in this run: the step that reads it did not run (a resumed run: resume from that step with --from)"
                        ))
                    })?;
                    typed.push(value.clone());
                    *action = if self.secrets.contains(name) {
                        Action::TypeHidden {
                            name: name.clone(),
                            value: crate::Hidden::new(value.clone()),
                        }
                    } else {
                        Action::TypeText {
                            text: value.clone(),
                        }
                    };
                }
            }
            Ok(step)
        };
        Ok(match decision {
            Decision::Step(step) => Decision::Step(fill(step)?),
            Decision::Prepare(step) => Decision::Prepare(step),
            Decision::Done => Decision::Done,
        })
    }

    /// The step at `observation`, secrets' values as they are.
    fn decide_unhidden(
        &mut self,
        observation: &Observation<'_>,
    ) -> Result<Decision, StrategyError> {
        let step_idx = observation.step_idx;
        let slot = match self.flow.slot_of(&self.slots, step_idx) {
            flow::Place::Done => return Ok(Decision::Done),
            flow::Place::Lost => {
                return Err(StrategyError::Fatal(
                    "this version's steps have if or repeat blocks, so a run of it cannot go on midway: replay it again".into(),
                ));
            }
            flow::Place::Slot(slot) => slot,
        };
        let before = self.flow.enter(step_idx, slot);
        match self.slots[slot].clone() {
            Slot::Recorded { inner, .. } => self.decide_recorded(inner, observation),
            Slot::Instruction(instruction) => {
                self.decide_instruction((step_idx, slot, before), &instruction, observation)
            }
            Slot::Else { .. } | Slot::End { .. } => Err(StrategyError::Fatal(
                "the program's flow stopped at an else or end (a fault of Reprise's)".into(),
            )),
        }
    }

    /// What hides the secrets read so far.
    fn hider(&self) -> hide::Hider {
        hide::Hider::new(
            self.values
                .iter()
                .filter(|(name, _)| self.secrets.contains(name)),
        )
    }
}

impl ReplayStrategy for ProgramStrategy {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        let decided = self.decide_unhidden(observation);
        let hider = self.hider();
        decided
            .map(|decision| hider.decision(decision))
            .map_err(|err| hider.error(err))
    }

    fn finished(&self, step_idx: usize) -> bool {
        matches!(self.flow.slot_of(&self.slots, step_idx), flow::Place::Done)
    }

    fn wants_tree(&self, step_idx: usize) -> Option<TreeRequest> {
        match self.slot(step_idx)? {
            Slot::Recorded {
                inner, types_into, ..
            } => self.inner.wants_tree(*inner).or_else(|| types_into.clone()),
            Slot::Instruction(instruction) => Some(TreeRequest {
                app: instruction.app.clone(),
                window: WindowIdentity {
                    role: accesskit::Role::Window,
                    name: Some(instruction.window.clone()?),
                },
                whole_lists: false,
            }),
            Slot::Else { .. } | Slot::End { .. } => None,
        }
    }

    fn wants_popups(&self, step_idx: usize) -> bool {
        self.inner_of(step_idx)
            .is_some_and(|inner| self.inner.wants_popups(inner))
    }

    fn sought(&self, step_idx: usize) -> Option<crate::Sought> {
        self.inner.sought(self.inner_of(step_idx)?)
    }

    fn verifies(&self) -> bool {
        self.inner.verifies()
    }

    fn recover(&mut self, step_idx: usize) -> Option<String> {
        let _ = step_idx;
        self.retry_block()
    }

    fn window_gives_way(&self, step_idx: usize) -> bool {
        self.inner_of(step_idx)
            .is_some_and(|inner| self.inner.window_gives_way(inner))
    }

    fn proven_by_close(&self, step_idx: usize) -> bool {
        self.inner_of(step_idx)
            .is_some_and(|inner| self.inner.proven_by_close(inner))
    }

    fn pressed_box(&self, step_idx: usize) -> Option<reprise_models::Rect> {
        self.inner.pressed_box(self.inner_of(step_idx)?)
    }

    fn window_after(&self, step_idx: usize) -> Option<&reprise_models::WindowState> {
        self.inner.window_after(self.inner_of(step_idx)?)
    }

    fn verify(&mut self, step_idx: usize, effect: &Effect<'_>) -> Result<Verification, Missed> {
        let hider = self.hider();
        match self.verify_unhidden(step_idx, effect) {
            Ok(verdict) => Ok(hider.verification(verdict)),
            Err(missed) => Err(Missed {
                reason: hider.text(missed.reason),
                ..missed
            }),
        }
    }

    fn checked(&self, step_idx: usize) -> Option<Evidence> {
        let evidence = self.checked_unhidden(step_idx)?;
        Some(self.hider().evidence(evidence))
    }
}

impl ProgramStrategy {
    fn verify_unhidden(
        &mut self,
        step_idx: usize,
        effect: &Effect<'_>,
    ) -> Result<Verification, Missed> {
        match self.inner_of(step_idx) {
            Some(inner) => {
                let verdict = self.inner.verify(inner, effect)?;
                // The inner strategy never compares what a variable typed
                // (it types it as a secret): the focused field holding the
                // values read proves the step.
                if let Some(verified) = holds_typed(effect.tree, &self.typed) {
                    return Ok(verified);
                }
                Ok(match verdict {
                    Verification::Verified(evidence) if evidence.kind.proves() => {
                        Verification::Verified(evidence)
                    }
                    verdict => self.window_closed(inner, effect).unwrap_or(verdict),
                })
            }
            None => Ok(self.checked_unhidden(step_idx).map_or_else(
                || Verification::Unverified("the instruction was not decided".into()),
                Verification::Verified,
            )),
        }
    }

    fn checked_unhidden(&self, step_idx: usize) -> Option<Evidence> {
        match &self.checked {
            Some((idx, evidence)) if *idx == step_idx && self.inner_of(step_idx).is_none() => {
                Some(evidence.clone())
            }
            _ => None,
        }
    }
}

mod blocks;
mod compile;
mod flow;
mod hide;
mod instruct;
pub mod outcome;
pub use compile::compile;
use instruct::holds_typed;
pub use instruct::{find, in_reading_order, matching};

#[cfg(test)]
mod tests;
