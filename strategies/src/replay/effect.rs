//! A step's effect, checked once the screen settled after it and the
//! window the recording shows after it came (bounded).

use std::time::Duration;

use super::*;

/// Checks the effect of step `step_idx` (decided in `window`, on the screen
/// `before` showed): verified, with its evidence, or unverified; a failed
/// attempt where the strategy saw its effect missed. `None` when aborted.
pub(super) fn check_effect(
    run: &mut Replaying<'_>,
    step_idx: usize,
    step: &Step,
    (window, region): (
        Option<&reprise_models::WindowState>,
        Option<reprise_models::Rect>,
    ),
    before: &Frame,
) -> Result<Option<Verification>, AttemptError> {
    let only_moves = step
        .actions
        .iter()
        .all(|action| matches!(action, Action::MoveTo { .. } | Action::Pause { .. }));
    Ok(Some(
        if let Some(evidence) = run.strategy.checked(step_idx) {
            // An instruction: what it waited for or checked was read in
            // deciding it.
            Verification::Verified(evidence)
        } else if only_moves {
            // What a move does is put the pointer there, and the injector did.
            Verification::Verified(Evidence::new(
                EvidenceKind::Move,
                "a pointer move: the pointer was put where the step aimed (a move has no other effect to check)",
            ))
        } else if run.strategy.verifies() {
            // A press's own element is left out of the wait for the screen
            // where the strategy found it in the tree (its effect is read
            // there): how it looks pressed, hovered or focused, animating
            // back, is the toolkit's answer to any press, not the step's.
            let pressed = step
                .actions
                .iter()
                .any(|action| matches!(action, Action::ButtonDown { .. }));
            let watch = crate::settle::Watch {
                region,
                except: run
                    .strategy
                    .pressed_box(step_idx)
                    .filter(|_| pressed && region.is_some()),
                prior: None,
            };
            let Some(verification) = check_after(run, step_idx, (window, watch), before)? else {
                return Ok(None);
            };
            verification
        } else {
            Verification::Unverified(format!(
                "the {} strategy does not check a step's effect",
                run.strategy.name()
            ))
        },
    ))
}

/// Whether the window a step was decided in, no longer the active one
/// after it, is gone from the window manager's list: one gone that the
/// step was not to close shows, at its target, what was behind it, which
/// proves nothing.
fn gone_after(
    desktop: &mut dyn Desktop,
    window: Option<&reprise_models::WindowState>,
    after: Option<&reprise_models::WindowState>,
) -> bool {
    window.is_some_and(|window| {
        after.is_none_or(|after| after.window_id != window.window_id)
            && unlisted(desktop, window.window_id)
    })
}

/// Whether the window manager no longer lists window `id` (false where it
/// does or cannot say).
fn unlisted(desktop: &mut dyn Desktop, id: u64) -> bool {
    matches!(desktop.window_listed(id), Ok(Some(false)))
}

/// The effect of step `step_idx` (decided in `window`, watched in
/// `region`), checked by the strategy once the screen settled (or the
/// window the step closes is gone) and the window after it came. `None`
/// when aborted.
fn check_after(
    run: &mut Replaying<'_>,
    step_idx: usize,
    (window, watch): (Option<&reprise_models::WindowState>, crate::settle::Watch),
    before: &Frame,
) -> Result<Option<Verification>, AttemptError> {
    let began = run.desktop.now();
    // Where the step's window closing proves it, the screen's
    // settling is not awaited once the window is gone.
    let closes = window
        .filter(|_| run.strategy.proven_by_close(step_idx))
        .map(|window| window.window_id);
    let mut gone = |desktop: &mut dyn Desktop| closes.is_some_and(|id| unlisted(desktop, id));
    let Some(look) = crate::settle::wait_settling(
        run.desktop,
        &run.options.settle,
        watch,
        run.abort,
        &mut gone,
    )
    .map_err(attempt_error)?
    else {
        return Ok(None);
    };
    let after = look.frame;
    run.settled = look.settled;
    let closed = gone(run.desktop);
    let Some(window_after) = wait_for_window_after(
        run.strategy,
        run.desktop,
        (step_idx, window),
        closed,
        run.abort,
    )
    .map_err(attempt_error)?
    else {
        return Ok(None);
    };
    let waited = run.desktop.now().duration_since(began);
    let tree_after = read_tree(run.strategy, run.desktop, step_idx);
    // A popup that opened or closed is a fact of the windows; a platform
    // that cannot list them says none.
    let popups_after = run.desktop.popups().unwrap_or_default();
    // Asked again now where it was not yet gone once the screen settled.
    let window_closed = closed || gone_after(run.desktop, window, window_after.as_ref());
    let effect = crate::strategy::Effect {
        before,
        after: &after,
        window,
        window_after: window_after.as_ref(),
        tree: tree_after.as_ref(),
        popups_after: &popups_after,
        window_closed,
    };
    tracing::debug!(
        step = step_idx,
        settled_and_window_ms = waited.as_millis(),
        checked_ms = run.desktop.now().duration_since(began).as_millis(),
        closed,
        "a step's effect: the screen settled (or the window it closes went) and the window after it came, then its check"
    );
    let verification = run.strategy.verify(step_idx, &effect).map_err(|missed| {
        let error = format!("the step had no visible effect: {}", missed.reason);
        if missed.retry {
            AttemptError::Retry(error)
        } else {
            AttemptError::Fatal(error)
        }
    })?;
    Ok(Some(verification))
}

/// The longest the loop waits, after a step whose window the recording
/// shows giving way, for it to give way here.
pub const GIVE_WAY_WAIT: Duration = Duration::from_secs(3);

/// The active window after step `step_idx` (decided in `before`): at once,
/// or, where the strategy expects a window after it, once that one is
/// active, or a second has passed with no window active, or
/// [`WINDOW_AFTER_WAIT`](crate::strategy::WINDOW_AFTER_WAIT) passed; where
/// it expects only that the window gives way, once another (or none) is
/// active, within [`GIVE_WAY_WAIT`]; where the step closed its own window
/// (`closed`), at once. `None` when aborted.
fn wait_for_window_after(
    strategy: &dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    (step_idx, before): (usize, Option<&reprise_models::WindowState>),
    closed: bool,
    abort: &dyn Fn() -> bool,
) -> Result<Option<Option<reprise_models::WindowState>>, DesktopError> {
    const SLICE: Duration = Duration::from_millis(100);
    let expected = strategy.window_after(step_idx).cloned();
    if let (None, Some(before)) = (&expected, before)
        && strategy.window_gives_way(step_idx)
    {
        let mut live = desktop.active_window()?;
        for _ in 0..GIVE_WAY_WAIT.as_millis() / SLICE.as_millis() {
            if live
                .as_ref()
                .is_none_or(|live| !crate::strategy::same_instance(before, live))
            {
                break;
            }
            if !wait(desktop, SLICE, abort) {
                return Ok(None);
            }
            live = desktop.active_window()?;
        }
        return Ok(Some(live));
    }
    let n_looks = crate::strategy::WINDOW_AFTER_WAIT.as_millis() / SLICE.as_millis();
    // No active window at all (the application closed) is waited out for
    // a moment only: a window may be between two, but none may come.
    const LOOKS_WITHOUT_WINDOW: u128 = 10;
    // Where the recording saw the step's own window after it, nothing new
    // was awaited: another window, or none, is the step's own doing (the
    // dialog it closed, after which the recorder stopped), and is waited
    // out for a glance only.
    const LOOKS_AWAY_FROM_OWN: u128 = 1;
    let own_window = matches!(
        (&expected, before),
        (Some(expected), Some(before)) if crate::strategy::is_same_window(expected, before)
    );
    let mut live = desktop.active_window()?;
    let (mut looks_away, mut looks_without_window) = (0, 0);
    for _ in 0..n_looks {
        let arrived = match (&expected, &live) {
            (None, _) => true,
            (Some(expected), Some(live)) if crate::strategy::is_same_window(expected, live) => true,
            (Some(_), live) => {
                looks_away += 1;
                looks_without_window += u128::from(live.is_none());
                (own_window && (closed || looks_away > LOOKS_AWAY_FROM_OWN))
                    || looks_without_window > LOOKS_WITHOUT_WINDOW
            }
        };
        if arrived {
            break;
        }
        if !wait(desktop, SLICE, abort) {
            return Ok(None);
        }
        live = desktop.active_window()?;
    }
    Ok(Some(live))
}
