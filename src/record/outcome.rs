//! The outcome of a task, marked while recording: the mark key pressed
//! while the pointer rests on the result. Its window's tree (with the text
//! its fields hold) is read at that moment on a thread of its own, never on
//! the input's path; once the recording is written, each mark becomes an
//! assertion of the value the element under the pointer showed, kept as
//! the recording's version 2 (`reprise steps` shows it, `reprise edit`
//! changes it), which replay checks where the mark was made.

use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use anyhow::Result;
use reprise_models::A11yTree;
use reprise_strategies::program::outcome::{assertion_at, naming_parameters, with_outcomes};

use crate::platform::{self, ActiveWindow};
use crate::store::Store;

/// How long the end of a recording waits for its marks' trees, in all
/// (each read is bounded by its own limits well within it).
const READ_WAIT: Duration = Duration::from_secs(5);

/// A mark whose tree is being read.
#[derive(Debug)]
pub(super) struct PendingMark {
    at: f64,
    point: (f64, f64),
    window: String,
    tree: Receiver<Option<A11yTree>>,
}

impl PendingMark {
    /// A mark at `at` seconds into the recording, the pointer at `point`,
    /// in the active `window`: its tree's read started at once.
    pub(super) fn start(at: f64, point: (f64, f64), window: ActiveWindow) -> PendingMark {
        let (sender, tree) = mpsc::channel();
        let title = window.title.clone();
        let spawned = std::thread::Builder::new()
            .name("reprise-mark".into())
            .spawn(move || {
                let _ = sender.send(platform::window_tree_with_values(&window));
            });
        if let Err(err) = spawned {
            tracing::warn!("the mark's tree is not read: no thread: {err}");
        }
        PendingMark {
            at,
            point,
            window: title,
            tree,
        }
    }
}

/// A mark with its window's tree as read at it (`None`: not read).
#[derive(Debug)]
pub struct Marked {
    pub at: f64,
    pub point: (f64, f64),
    pub window: String,
    pub tree: Option<A11yTree>,
}

/// The marks' trees, waited for at most [`READ_WAIT`] in all.
pub(super) fn resolve(marks: Vec<PendingMark>) -> Vec<Marked> {
    let deadline = Instant::now() + READ_WAIT;
    marks
        .into_iter()
        .map(|mark| Marked {
            tree: mark
                .tree
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .ok()
                .flatten(),
            at: mark.at,
            point: mark.point,
            window: mark.window,
        })
        .collect()
}

/// What became of a recording's marks.
#[derive(Debug, Default, serde::Serialize)]
pub struct Outcomes {
    /// The version that holds the checks, where one was kept.
    pub version: Option<u32>,
    /// Each check kept, in words (`text field in "Greeting" equals "hi"`).
    pub kept: Vec<String>,
    /// Each mark not kept, and why.
    pub not_kept: Vec<String>,
}

/// Keeps the `marks` of the recording `recording_id` (just written) as
/// assertions of the values they showed, in a new version whose steps are
/// the recording's with each check after the steps begun before its mark.
/// A mark that names nothing it can check again is not kept, with why,
/// nor a field where the recording typed secrets (`secret_keys`: its text
/// could hold one); nothing is saved where none is kept.
pub fn keep(
    store: &mut Store,
    recording_id: &str,
    marks: &[Marked],
    secret_keys: u64,
) -> Result<Outcomes> {
    let mut outcomes = Outcomes::default();
    let mut checks = Vec::new();
    for mark in marks {
        let at = format!(
            "the mark at {:.1} s, ({:.0}, {:.0})",
            mark.at, mark.point.0, mark.point.1
        );
        let Some(tree) = &mark.tree else {
            outcomes.not_kept.push(format!(
                "{at}: the tree of {:?} could not be read",
                mark.window
            ));
            continue;
        };
        let typed_into =
            |role: Option<accesskit::Role>| role.is_some_and(reprise_models::element::takes_typing);
        match assertion_at(tree, &mark.window, mark.point) {
            Ok(check) if secret_keys > 0 && typed_into(check.element.role) => {
                outcomes.not_kept.push(format!(
                    "{at}: {} could hold the secrets typed in this recording",
                    check.element.label()
                ));
            }
            Ok(check) => checks.push((mark.at, check)),
            Err(why) => outcomes.not_kept.push(format!("{at}: {why}")),
        }
    }
    if checks.is_empty() {
        return Ok(outcomes);
    }
    let (bundle, _, _) = store.load_edited(recording_id, Some(1))?;
    let names = bundle.recording.parameter_names.clone();
    let planned = crate::replay::recorded_steps(&bundle, &names);
    let typed = reprise_strategies::params::recorded_texts(&planned, &names);
    let checks: Vec<_> = checks
        .into_iter()
        .map(|(at, check)| (at, naming_parameters(check, &typed)))
        .collect();
    let program = with_outcomes(&planned, &checks);
    if let Err(err) =
        reprise_strategies::program::compile(planned, &program, &[], &names, &Default::default())
    {
        outcomes.not_kept.push(format!(
            "the checks of the marks do not fit the steps: {err}"
        ));
        return Ok(outcomes);
    }
    outcomes.kept = checks
        .iter()
        .map(|(_, check)| {
            let expected = check.compare.expected();
            format!(
                "{} {}",
                check.element.label(),
                check.compare.words(&expected)
            )
        })
        .collect();
    outcomes.version = Some(store.add_program(
        recording_id,
        1,
        "the outcome marked while recording",
        Some(&program),
    )?);
    Ok(outcomes)
}
