//! The naive strategy: the recorded actions at the recorded coordinates, with
//! the recorded timing (scaled by a speed factor).

use reprise_models::{ActionEvent, WindowState};

use crate::tree::{actions_for, end_time, inner_pause};
use crate::{Decision, FoundBy, Observation, ReplayStrategy, Step, StrategyError};

#[derive(Debug)]
pub struct NaiveStrategy {
    trees: Vec<ActionEvent>,
    window_states: Vec<WindowState>,
    speed: f64,
}

impl NaiveStrategy {
    /// `trees` are the recording's reduced events; `speed` scales the pauses
    /// (2.0 replays twice as fast).
    pub fn new(trees: Vec<ActionEvent>, window_states: Vec<WindowState>, speed: f64) -> Self {
        NaiveStrategy {
            trees,
            window_states,
            speed: if speed > 0.0 { speed } else { 1.0 },
        }
    }

    fn scaled(&self, seconds: f64) -> f64 {
        (seconds / self.speed).max(0.0)
    }
}

impl ReplayStrategy for NaiveStrategy {
    fn name(&self) -> &'static str {
        "naive"
    }

    fn sought(&self, step_idx: usize) -> Option<crate::Sought> {
        let tree = self.trees.get(step_idx)?;
        Some(crate::Sought {
            action: Some(tree.label()),
            recorded_frame: tree.screenshot_id,
            recorded_point: tree.position(),
            ..crate::Sought::default()
        })
    }

    fn finished(&self, step_idx: usize) -> bool {
        step_idx >= self.trees.len()
    }

    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        let idx = observation.step_idx;
        let Some(tree) = self.trees.get(idx) else {
            return Ok(Decision::Done);
        };
        let delay = match idx.checked_sub(1).and_then(|prev| self.trees.get(prev)) {
            Some(previous) => self.scaled(tree.timestamp - end_time(previous)),
            None => 0.0,
        };
        let actions = actions_for(tree, |seconds| inner_pause(seconds, self.speed));
        let recorded_window = tree
            .window_state_id
            .and_then(|id| self.window_states.get(id as usize));
        let mut reason = "the recorded action at the recorded coordinates".to_owned();
        if let (Some(recorded), Some(live)) = (recorded_window, observation.window)
            && tree.position().is_some()
            && recorded.rect != live.rect
            && recorded.title == live.title
        {
            let (was, now) = (recorded.rect, live.rect);
            reason = format!(
                "{reason}, although {:?} moved from {},{} {}x{} to {},{} {}x{}",
                live.title,
                was.left,
                was.top,
                was.width,
                was.height,
                now.left,
                now.top,
                now.width,
                now.height
            );
        }
        Ok(Decision::Step(Step {
            source_event: Some(idx),
            label: tree.label(),
            target: tree.position(),
            reason,
            actions,
            delay_before_seconds: delay,
            found_by: Some(FoundBy::AsRecorded),
            ..Default::default()
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests;
