//! An attempt's decision: the step the strategy decides on a settled
//! screen, after the preparations it asks for first.

use std::time::Duration;

use super::*;

/// What deciding an attempt's step came to: the step, with the window it
/// was decided in and that window's box, or the attempt's end (aborted, or
/// the strategy is done).
#[expect(
    clippy::large_enum_variant,
    reason = "one a step's attempt, moved once"
)]
pub(super) enum Decided {
    Step(
        Option<reprise_models::WindowState>,
        Option<reprise_models::Rect>,
        Step,
    ),
    Ended(AttemptResult),
}

/// Decides step `step_idx` on a settled screen, making what the strategy
/// asks first (a bounded number of preparations: turns of the wheel that
/// bring the target into view), and deciding again after each on a fresh
/// look.
pub(super) fn decide(
    run: &mut Replaying<'_>,
    (step_idx, looked): (usize, Duration),
    history: &[StepRecord],
    record: &mut StepRecord,
    last_frame: &mut Option<Frame>,
) -> Result<Decided, AttemptError> {
    let mut preparations = 0;
    loop {
        let looking = run.desktop.now();
        let window = run.desktop.active_window().map_err(attempt_error)?;
        record.window_title = window.as_ref().map(|window| window.title.clone());
        record.window_rect = window.as_ref().map(|window| window.rect);
        let region = window.as_ref().map(|window| window.rect);
        let Some(look) = settled_look(run, region)? else {
            return Ok(Decided::Ended(AttemptResult::Aborted));
        };
        let frame = look.frame;
        record.settled = look.quiet;
        // Deciding includes reading the tree the strategy asked for.
        let decide_started = run.desktop.now();
        let tree = read_tree(run.strategy, run.desktop, step_idx);
        let tree_read = run.desktop.now();
        let wants_popups = run.strategy.wants_popups(step_idx);
        let popups = wants_popups.then(|| run.desktop.popups()).transpose();
        let popups = popups.map_err(attempt_error)?.unwrap_or_default();
        let observation = Observation {
            tree: tree.as_ref(),
            popups: &popups,
            frame: &frame,
            window: window.as_ref(),
            step_idx,
            attempt: record.attempts,
            looked,
            history,
        };
        let decision = run.strategy.decide(&observation);
        record.decide_seconds = run
            .desktop
            .now()
            .duration_since(decide_started)
            .as_secs_f64();
        tracing::debug!(
            step = step_idx,
            settled_ms = decide_started.duration_since(looking).as_millis(),
            tree_ms = tree_read.duration_since(decide_started).as_millis(),
            decided_ms = (record.decide_seconds * 1000.0) as u64,
            "a step's decision: the screen settled, the tree read, the step decided"
        );
        *last_frame = Some(frame);
        match decision {
            Ok(Decision::Done) => return Ok(Decided::Ended(AttemptResult::Finished)),
            Ok(Decision::Step(step)) => return Ok(Decided::Step(window, region, step)),
            // A dry run makes nothing: what it would make first is the step.
            Ok(Decision::Prepare(step)) if run.options.dry_run => {
                return Ok(Decided::Step(window, region, step));
            }
            Ok(Decision::Prepare(step)) => {
                if preparations == MAX_PREPARATIONS {
                    return Err(AttemptError::Retry(format!(
                        "the step was still not within reach after {MAX_PREPARATIONS} preparations (the last: {})",
                        step.reason
                    )));
                }
                preparations += 1;
                if !make(run.desktop, &step.actions, run.abort).map_err(input_error)? {
                    return Ok(Decided::Ended(AttemptResult::Aborted));
                }
                record.prepared.push(Prepared {
                    label: step.label,
                    reason: step.reason,
                });
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// The screen once `region` settled (bounded), going on from the last
/// step's effect check where it found the same window settled a moment
/// ago (and leaving out what that check left out); `None` if aborted.
fn settled_look(
    run: &mut Replaying<'_>,
    region: Option<reprise_models::Rect>,
) -> Result<Option<crate::settle::Look>, AttemptError> {
    // The box the last step's effect check left out (its pressed element,
    // animating back) is left out here too, going on from that check.
    let prior = run.settled.take();
    let watch = crate::settle::Watch {
        region,
        except: prior
            .as_ref()
            .filter(|prior| prior.region == region)
            .and_then(|prior| prior.except),
        prior,
    };
    crate::settle::wait_settling(
        run.desktop,
        &run.options.settle,
        watch,
        run.abort,
        &mut |_| false,
    )
    .map_err(attempt_error)
}
