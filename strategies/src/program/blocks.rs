//! The blocks' decisions: an `if` looks for its condition (bounded) and
//! says which block runs; a `repeat` starts its next round or ends.

use std::time::Duration;

use reprise_models::program::{Entry, Over, Repeat, Wait};

use super::instruct::{condition_words, look_again};
use super::{Instruction, ProgramStrategy};
use crate::{Evidence, EvidenceKind, Observation, StrategyError};

impl ProgramStrategy {
    /// A `retry` at `slot`: its block's next try (the first, or another
    /// after a step in it failed).
    pub(super) fn decide_retry(
        &mut self,
        (step_idx, slot, before): (usize, usize, Option<usize>),
        instruction: &Instruction,
        times: u32,
    ) -> (String, Evidence) {
        let end = instruction.block.map_or(slot, |block| block.end);
        let round = self.flow.next_round(slot, end, step_idx, before);
        self.flow.set_go_on(slot, true);
        let words = if round == 1 {
            "its block runs (a step in it that fails tries the block again)".to_owned()
        } else {
            format!("a step of the block failed: try {round} of {times}")
        };
        (
            format!("retry the block up to {times} times"),
            Evidence::new(EvidenceKind::Program, words),
        )
    }

    /// A failed step in a retry block with tries left: its block again.
    pub(super) fn retry_block(&mut self) -> Option<String> {
        let failed = self.flow.current()?;
        // The innermost retry block around the failed step.
        let (opener, times) = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(idx, slot)| match slot {
                super::Slot::Instruction(Instruction {
                    entry: Entry::Retry { times },
                    block: Some(block),
                    ..
                }) if block.opener < failed && failed < block.end => Some((idx, *times)),
                _ => None,
            })
            .next_back()?;
        let tried = self.flow.round(opener);
        if tried >= times {
            return None;
        }
        self.flow.jump_to(opener);
        Some(format!(
            "failed; its retry block runs again (try {} of {times})",
            tried + 1
        ))
    }

    /// An `if` at `slot`: its block runs when the condition holds within
    /// its timeout; else its `else` block, or nothing.
    pub(super) fn decide_if(
        &mut self,
        slot: usize,
        instruction: &Instruction,
        condition: &Wait,
        observation: &Observation<'_>,
    ) -> Result<(String, Evidence), StrategyError> {
        let label = format!(
            "if {} (looked for up to {} s)",
            condition_words(&condition.until),
            condition.timeout_seconds
        );
        let words = match self.waited(instruction, &condition.until, observation)? {
            Ok(evidence) => {
                self.flow.set_branch(slot, true);
                format!("{}: its block runs", evidence.words)
            }
            Err(why) => {
                let timeout = Duration::from_secs_f64(condition.timeout_seconds);
                look_again(observation, timeout, &format!("{label}: {why}"))?;
                self.flow.set_branch(slot, false);
                let has_else = instruction
                    .block
                    .is_some_and(|block| block.middle.is_some());
                format!(
                    "not so ({why}): {}",
                    if has_else {
                        "its else block runs"
                    } else {
                        "its block is passed over"
                    }
                )
            }
        };
        Ok((label, Evidence::new(EvidenceKind::Program, words)))
    }

    /// A `repeat` at `slot` for step `step_idx` (the step before it at
    /// `before`): its next round, a row's columns set as variables, or its
    /// end; a condition that still holds past `max` rounds halts the run.
    pub(super) fn decide_repeat(
        &mut self,
        (step_idx, slot, before): (usize, usize, Option<usize>),
        instruction: &Instruction,
        repeat: &Repeat,
        observation: &Observation<'_>,
    ) -> Result<(String, Evidence), StrategyError> {
        let end = instruction.block.map_or(slot, |block| block.end);
        let round = self.flow.next_round(slot, end, step_idx, before);
        let (label, words, go_on) = match &repeat.over {
            Over::Rows(file) => {
                let table = instruction.table.clone().unwrap_or_default();
                let n = table.rows.len();
                let label = format!("repeat for each row of {file:?} ({n} rows)");
                match table.rows.get(round as usize - 1) {
                    Some(row) => {
                        let mut set = Vec::new();
                        for (column, value) in table.columns.iter().zip(row) {
                            self.values.insert(column.clone(), value.clone());
                            set.push(format!("{{{column}}} = {value:?}"));
                        }
                        let words = format!("row {round} of {n}: {}", set.join(", "));
                        (label, words, true)
                    }
                    None => (label, format!("all {n} rows done"), false),
                }
            }
            Over::While(until) => {
                let label = format!(
                    "repeat while {} (at most {} rounds)",
                    condition_words(until),
                    repeat.max
                );
                match self.waited(instruction, until, observation)? {
                    Ok(_) if round > repeat.max => {
                        return Err(StrategyError::Fatal(format!(
                            "{label}: it still holds after {} rounds",
                            repeat.max
                        )));
                    }
                    Ok(evidence) => (label, format!("round {round}: {}", evidence.words), true),
                    Err(why) => (
                        label,
                        format!("no longer so ({why}) after {} rounds", round - 1),
                        false,
                    ),
                }
            }
        };
        self.flow.set_go_on(slot, go_on);
        debug_assert!(matches!(instruction.entry, Entry::Repeat(_)));
        Ok((label, Evidence::new(EvidenceKind::Program, words)))
    }
}
