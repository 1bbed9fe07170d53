//! Where a program is: the loop's step indexes run one after another, and
//! the program's blocks decide which slot each one is. A program with no
//! block is its slots in order (so a resumed run finds its place by the
//! index alone); with blocks, each step's slot follows from the step before
//! and what its `if` or `repeat` decided.

use std::collections::BTreeMap;

use reprise_models::program::Entry;

use super::Slot;

/// Where step index `step_idx` is in the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Slot(usize),
    /// Past the last slot.
    Done,
    /// Not known: a step index the program did not come to in order (a run
    /// resumed within a program with blocks).
    Lost,
}

impl Place {
    pub fn slot(self) -> Option<usize> {
        match self {
            Place::Slot(slot) => Some(slot),
            _ => None,
        }
    }
}

/// A repeat's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// The round decided last, from 1.
    pub round: u32,
    /// Whether its block runs again.
    pub go_on: bool,
    /// The step index that decided it (a retry of that step decides the
    /// same round again).
    pub decided_at: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Flow {
    /// Whether the program has blocks (else step index = slot).
    blocks: bool,
    /// The step being decided, and its slot.
    at: Option<(usize, usize)>,
    /// Each `if`'s last decision: whether its first block runs.
    branch: BTreeMap<usize, bool>,
    rounds: BTreeMap<usize, Round>,
    /// Where the step after the one being decided goes instead of on (a
    /// retry block's start, after a step in it failed).
    jump: Option<usize>,
}

impl Flow {
    /// The flow of a program with blocks (`blocks`), or of one without.
    pub fn new(blocks: bool) -> Flow {
        Flow {
            blocks,
            ..Flow::default()
        }
    }

    /// Whether the program has blocks: which steps run is decided as it
    /// runs.
    pub fn blocks(&self) -> bool {
        self.blocks
    }

    /// The place of step `step_idx`: the one being decided, or the one
    /// after it.
    pub fn slot_of(&self, slots: &[Slot], step_idx: usize) -> Place {
        if !self.blocks {
            return if step_idx < slots.len() {
                Place::Slot(step_idx)
            } else {
                Place::Done
            };
        }
        match self.at {
            Some((at, slot)) if at == step_idx => Place::Slot(slot),
            Some((at, _)) if at + 1 == step_idx && self.jump.is_some() => {
                resolve(slots, self.jump.unwrap_or_default())
            }
            Some((at, slot)) if at + 1 == step_idx => resolve(slots, self.next_of(slots, slot)),
            None if step_idx == 0 => resolve(slots, 0),
            _ => Place::Lost,
        }
    }

    /// Step `step_idx` is being decided at `slot`; returns the slot of the
    /// step before it.
    pub fn enter(&mut self, step_idx: usize, slot: usize) -> Option<usize> {
        let before = self.at.map(|(_, slot)| slot);
        if self.at.is_some_and(|(at, _)| at != step_idx) {
            self.jump = None;
        }
        self.at = Some((step_idx, slot));
        before
    }

    /// The step after the one being decided goes to `slot`.
    pub fn jump_to(&mut self, slot: usize) {
        self.jump = Some(slot);
    }

    /// The slot of the step being decided.
    pub fn current(&self) -> Option<usize> {
        self.at.map(|(_, slot)| slot)
    }

    /// The round decided last of the block opened at `slot`.
    pub fn round(&self, slot: usize) -> u32 {
        self.rounds.get(&slot).map_or(0, |state| state.round)
    }

    pub fn set_branch(&mut self, slot: usize, runs: bool) {
        self.branch.insert(slot, runs);
    }

    /// The next round of the repeat at `slot` for step `step_idx`, which
    /// came from the slot `before`: a new loop unless it came from inside
    /// the block (`block_end`: its end); the same round again on a retry.
    pub fn next_round(
        &mut self,
        slot: usize,
        block_end: usize,
        step_idx: usize,
        before: Option<usize>,
    ) -> u32 {
        let again = before.is_some_and(|before| before > slot && before < block_end);
        let round = match self.rounds.get(&slot) {
            Some(state) if state.decided_at == step_idx => state.round,
            Some(state) if again => state.round + 1,
            _ => 1,
        };
        self.rounds.insert(
            slot,
            Round {
                round,
                go_on: false,
                decided_at: step_idx,
            },
        );
        round
    }

    pub fn set_go_on(&mut self, slot: usize, go_on: bool) {
        if let Some(state) = self.rounds.get_mut(&slot) {
            state.go_on = go_on;
        }
    }

    /// The slot after `slot` has run, as its decision says.
    fn next_of(&self, slots: &[Slot], slot: usize) -> usize {
        let Some(Slot::Instruction(instruction)) = slots.get(slot) else {
            return slot + 1;
        };
        let Some(block) = instruction.block else {
            return slot + 1;
        };
        match instruction.entry {
            Entry::Retry { .. } => slot + 1,
            Entry::If(_) if self.branch.get(&slot).copied().unwrap_or(false) => slot + 1,
            Entry::If(_) => block.middle.map_or(block.end + 1, |middle| middle + 1),
            Entry::Repeat(_) if self.rounds.get(&slot).is_some_and(|state| state.go_on) => slot + 1,
            _ => block.end + 1,
        }
    }
}

/// The step slot at or after `pos`: an `else` reached goes on after its
/// `end`, a repeat's `end` goes back to the repeat, an `if`'s goes on.
fn resolve(slots: &[Slot], mut pos: usize) -> Place {
    // Each turn moves forward, or back to a repeat, which is a step: the
    // walk ends within the slots' number of turns.
    for _ in 0..=slots.len() {
        match slots.get(pos) {
            None => return Place::Done,
            Some(Slot::Else { end }) => pos = *end,
            Some(Slot::End { opener }) => match slots.get(*opener) {
                Some(Slot::Instruction(instruction))
                    if matches!(instruction.entry, Entry::Repeat(_)) =>
                {
                    return Place::Slot(*opener);
                }
                _ => pos += 1,
            },
            Some(_) => return Place::Slot(pos),
        }
    }
    Place::Done
}
