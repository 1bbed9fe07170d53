//! The run: `reprise replay`'s request and result, the live desktop behind
//! the strategies' port ([`desktop`]), the abort watcher, the application it
//! launches and the reset before a row, secrets and `--each` rows, the run
//! itself ([`run`]: every step persisted for the report) and how it stopped
//! ([`stopped`]).

mod abort;
mod desktop;
pub mod heal;
pub mod launch;
mod progress;
pub mod reset;
pub mod resume;
pub mod rows;
mod run;
pub mod secrets;
pub mod stopped;
mod strategy;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context as _, Result};
use reprise_models::{ReduceOptions, reduce};
use reprise_strategies::{ReplayOptions, ReplayOutcome};

pub use crate::store::BatchRow;
use crate::store::Store;
pub use abort::{ABORT_KEYS, AbortWatcher};
pub use desktop::LiveDesktop;
pub use progress::{StepLine, step_line};
pub use run::replay;
pub use stopped::stop_of;
pub use strategy::model_chain;

/// `--strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StrategyChoice {
    Naive,
    Visual,
    Vanilla,
}

/// `--describer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DescriberChoice {
    Offline,
    Llm,
}

/// `--rungs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RungChoice {
    Structural,
    Visual,
}

/// What `reprise replay` was asked to do.
#[derive(Debug, Clone)]
pub struct ReplayRequest {
    pub recording: String,
    pub strategy: StrategyChoice,
    /// The visual strategy's rungs.
    pub rungs: reprise_strategies::visual::Rungs,
    pub speed: f64,
    pub options: ReplayOptions,
    /// `--replace OLD=NEW` substitutions of typed text.
    pub replacements: Vec<(String, String)>,
    /// `--instructions`: a change in plain language (needs a model).
    pub instructions: Option<String>,
    /// The config file with the model settings.
    pub config: Option<std::path::PathBuf>,
    /// How the visual strategy describes elements.
    pub describer: DescriberChoice,
    /// `--release-held-keys`: release modifiers and buttons held down
    /// before the replay instead of refusing to start.
    pub release_held: bool,
    /// `--launch`: start the application the recording begins in when none
    /// of its windows is open, and end it afterwards.
    pub launch: bool,
    /// How each step is reported as it ends.
    pub progress: Progress,
    /// `--secrets-file`: secret values, after the environment's.
    pub secrets_file: Option<std::path::PathBuf>,
    /// `--set NAME=VALUE`: texts typed in place of parameters.
    pub parameters: Vec<(String, String)>,
    /// Secret values given ahead of the environment (a row of `--each`).
    pub secret_overrides: secrets::SecretValues,
    /// The batch (`--each`) this run is a row of.
    pub batch: Option<BatchRow>,
    /// What a caller that embeds the replay (the fleet's worker) is told
    /// and may decide.
    pub hooks: Hooks,
    /// `reprise resume`: the halted run this replay goes on with (its id,
    /// its steps done), instead of a new run.
    pub resume: Option<resume::Resume>,
}

/// Asked just before the first input.
pub type BeforeInput = Arc<dyn Fn() -> bool + Send + Sync>;
/// Told of every finished step.
pub type OnStep = Arc<dyn Fn(&StepLine) + Send + Sync>;
/// Given each finished step's frame as the run keeps it (password fields
/// masked), on the replay's thread: what it keeps of it is its own to
/// scale down (to [`SCREEN_WIDTH`]) and encode, off the replay's path.
pub type OnScreen = Arc<dyn Fn(&image::RgbaImage) + Send + Sync>;
/// The widest a frame sent on from an [`OnScreen`] hook is, in pixels.
pub const SCREEN_WIDTH: u32 = 480;
/// Asked before every input: `true` aborts the replay there.
pub type StopCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// An embedding caller's part in a replay.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Asked once everything is checked, just before the first input:
    /// `false` ends the replay there, having injected nothing
    /// ([`Withdrawn`]). A replay with this hook is unattended: it never
    /// asks for a secret at the terminal.
    pub before_input: Option<BeforeInput>,
    /// Every finished step, as `replay --json` prints it.
    pub on_step: Option<OnStep>,
    /// Every finished step's frame (see [`OnScreen`]).
    pub on_screen: Option<OnScreen>,
    /// Asked at the loop's every check (before each input and in every
    /// wait): `true` aborts there, as the abort keys do.
    pub stop: Option<StopCheck>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("before_input", &self.before_input.is_some())
            .field("on_step", &self.on_step.is_some())
            .field("on_screen", &self.on_screen.is_some())
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

/// The replay was withdrawn just before its first input (its
/// `before_input` hook said no): nothing was injected.
#[derive(Debug, thiserror::Error)]
#[error("the replay was withdrawn before its first input; nothing was injected")]
pub struct Withdrawn;

/// The parameters of a recording: its planned steps' texts and secrets,
/// under the names the person gave them.
pub fn parameters_of(
    store: &Store,
    recording: &str,
) -> Result<Vec<reprise_strategies::params::Parameter>> {
    let recording_id = store.resolve(recording)?;
    let bundle = store
        .load(&recording_id)
        .with_context(|| format!("read recording {recording_id}"))?;
    Ok(parameters_in(&bundle, &bundle.recording.parameter_names))
}

/// The parameters of a loaded recording under `names`.
pub fn parameters_in(
    bundle: &reprise_models::RecordingBundle,
    names: &reprise_strategies::params::Names,
) -> Vec<reprise_strategies::params::Parameter> {
    reprise_strategies::params::parameters(&recorded_steps(bundle, names), names)
}

/// A recording's steps as replay plans them (before any value is put in),
/// its parameters under `names`: the steps a program names by number.
pub fn recorded_steps(
    bundle: &reprise_models::RecordingBundle,
    names: &reprise_strategies::params::Names,
) -> Vec<reprise_models::ActionEvent> {
    let trees = reduce(
        bundle.events.clone(),
        &ReduceOptions {
            double_click: bundle.recording.double_click,
        },
    );
    reprise_strategies::params::with_names(
        reprise_strategies::plan::plan_steps(trees, &bundle.window_states),
        names,
    )
}

/// Where each finished step is reported while the replay runs.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Printed on stderr once everything is checked, just before the
    /// first input (how to abort).
    pub banner: Option<String>,
    /// A line per step on stderr (`step 3/6 click … verified (…, 282 ms)`).
    pub lines: bool,
    /// A JSON object per step on stdout (`--json`).
    pub json: bool,
}

/// How a replay went, for the command's output and exit code.
#[derive(Debug)]
pub struct ReplayResult {
    pub run_id: String,
    pub recording_id: String,
    pub outcome: ReplayOutcome,
    pub n_steps: usize,
    pub seconds: f64,
    /// The recording's version replayed (1: as made).
    pub version: u32,
    /// Steps proven on a target that differs from the version's (a new
    /// version holds them only when asked: `--save-healed`).
    pub heals: Vec<reprise_models::version::TargetChange>,
    /// Its identity coverage and what its steps' proofs rested on (every
    /// session's steps, where it was resumed).
    pub coverage: reprise_strategies::replay::Coverage,
}

/// Shared between the desktop (which writes where it moved the pointer) and
/// the abort watcher (which ignores a corner the replay itself moved to).
pub type LastMove = Arc<std::sync::Mutex<Option<(f64, f64)>>>;

/// A flag set once, from any thread.
pub type Flag = Arc<AtomicBool>;
