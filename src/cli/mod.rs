//! The command line: every command and flag, with its help. Beside it, what
//! each command does ([`commands`]) and the exit codes and log set-up
//! ([`exit`]).

pub mod commands;
pub mod exit;
mod fleet_args;
mod version_args;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::replay::{DescriberChoice, RungChoice, StrategyChoice};
pub use fleet_args::{JobsCommand, JobsSubmitArgs, ServeArgs, ServerArg, WorkerArgs};
pub use version_args::{DiffArgs, EditArgs, ResumeArgs, StepsArgs, TeachArgs, VersionsArgs};

/// Record a desktop task once, replay it on a screen that has drifted.
#[derive(Debug, Parser)]
#[command(name = "reprise", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The command line as it is parsed and documented: every command's
    /// help ends with the exit codes' table.
    pub fn documented() -> clap::Command {
        fn with_footer(command: clap::Command, footer: &str) -> clap::Command {
            let help = match command.get_name() {
                "steps" => format!("{}\n{footer}", version_args::STEPS_EXAMPLE),
                _ => footer.to_owned(),
            };
            command
                .after_help(help)
                .mut_subcommands(|sub| with_footer(sub, footer))
        }
        with_footer(
            <Cli as clap::CommandFactory>::command(),
            &exit::Code::footer(),
        )
    }

    /// The command line of this process, or clap's usage error (exit 2).
    pub fn parse_documented() -> Cli {
        let matches = Self::documented().get_matches();
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|err| err.exit())
    }
}

/// Options every command takes, shown in a section of their own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The store (an SQLite file); default: reprise/store.sqlite in the per-user data directory.
    #[arg(long, global = true, env = "REPRISE_STORE", value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// The config file; default: reprise/config.toml in the per-user config directory, if present.
    #[arg(long, global = true, env = "REPRISE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// More log lines, with their time and source: -v for info, -vv for
    /// debug (REPRISE_LOG, when set, chooses instead).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Errors only: no warnings, no progress lines.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record what you do on the desktop until you type the stop sequence,
    /// press Ctrl-C, or the duration passes.
    Record(RecordArgs),
    /// Replay a recording on the live desktop.
    Replay(ReplayArgs),
    /// Go on with a halted run (refused, failed, aborted or killed) from the
    /// step it halted at, on the live desktop: the steps done before it are
    /// not done again. It stays one run, its halt and resumption recorded.
    Resume(ResumeArgs),
    /// Write a replay run's report: one self-contained HTML page.
    Report(ReportArgs),
    /// Write a recording as one self-contained HTML page: its event tree,
    /// each action's screenshot with the pointer marked, the window titles.
    Visualize(VisualizeArgs),
    /// List the stored recordings.
    List(ListArgs),
    /// Show a recording as its reduced event tree (`NAME@2`: as its
    /// version 2 has it).
    Show(ShowArgs),
    /// List a recording's versions: 1 is the recording as made; each later
    /// one holds its steps' targets as a run healed them
    /// (`replay --save-healed`). A replay uses the newest unless pinned
    /// (`replay NAME@2`).
    Versions(VersionsArgs),
    /// Show, step by step, what changed between two versions of a
    /// recording (`reprise diff demo@1 demo@2`; a name alone is its newest).
    Diff(DiffArgs),
    /// Print a recording's steps as a text to read and edit (TOML): the
    /// recorded steps in order, the values typed, and the instructions an
    /// edit added (wait, assert, read).
    Steps(StepsArgs),
    /// Edit a recording's steps: in $VISUAL/$EDITOR, or from a file
    /// (`--file`); checked before anything is kept, and kept as a new
    /// version (the recording as made stays).
    Edit(EditArgs),
    /// Say which of the twins a halted run refused (elements nothing in the
    /// tree tells apart) the step meant, by its place among them in
    /// reading order: kept as a new version; the run's resume and later
    /// runs choose it alone.
    Teach(TeachArgs),
    /// List what a replay can change: every text typed into a field (for
    /// `replay --set NAME=VALUE` or `--each`) and every secret (whose value
    /// a replay takes from REPRISE_SECRET_NAME or a secrets file).
    Params(ParamsArgs),
    /// Delete a recording with its screenshots and replay runs.
    Delete(DeleteArgs),
    /// List the replay runs (newest first), show one, or prune old ones.
    /// Runs older than 90 days are pruned after each replay
    /// (REPRISE_RUNS_KEEP_DAYS or `[runs] keep_days` in the config file;
    /// 0 keeps every run).
    Runs(RunsArgs),
    /// Write a recording to one self-contained file.
    Export(ExportArgs),
    /// Read a recording from an export file, checking all of it first.
    Import(ImportArgs),
    /// Segment a window image into elements: print them, and draw them.
    Segment(SegmentArgs),
    /// Take a screenshot of the screen or of the active window.
    Screenshot(ScreenshotArgs),
    /// Check and account the model providers.
    #[command(subcommand)]
    Llm(LlmCommand),
    /// The settings in effect.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print the shell's completion script: for bash,
    /// `reprise completions bash > ~/.local/share/bash-completion/completions/reprise`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of reprise, or with --dir, write one
    /// page per command there (reprise.1, reprise-record.1, …).
    Man {
        /// Where to write the pages (for example /usr/local/share/man/man1).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Measure this machine (see BENCHMARKS.md).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Work on event lists directly.
    #[command(subcommand)]
    Events(EventsCommand),
    /// Run the fleet's server: an HTTP API over this store, with jobs
    /// queued on Redis Streams (tokens from REPRISE_FLEET_USER_TOKEN and
    /// REPRISE_FLEET_WORKER_TOKEN; optionally REPRISE_FLEET_VIEWER_TOKEN and
    /// REPRISE_FLEET_ADMIN_TOKEN, or --tokens FILE).
    Serve(ServeArgs),
    /// Replay the fleet's jobs on this desktop, one at a time (token from
    /// REPRISE_FLEET_TOKEN).
    Worker(WorkerArgs),
    /// Submit, list, show, cancel and watch the fleet's jobs (token from
    /// REPRISE_FLEET_TOKEN).
    #[command(subcommand)]
    Jobs(JobsCommand),
}

#[derive(Debug, Args)]
// `--duration -1` reaches the check that says why it is refused.
#[command(allow_negative_numbers = true)]
pub struct RecordArgs {
    /// A name to find the recording by.
    #[arg(long, default_value = "recording")]
    pub name: String,
    /// What you are about to do, in your words.
    #[arg(long, default_value = "")]
    pub task: String,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Steady screenshots per second (more are taken at every press).
    #[arg(long, default_value_t = 2.0, value_name = "FPS")]
    pub frame_rate: f64,
    /// Keys that stop the recorder when typed in a row, comma-separated, or `none`.
    #[arg(long, default_value = "ctrl,ctrl,ctrl", value_name = "KEYS")]
    pub stop_sequence: String,
    /// Screenshots that may wait to be written before new ones are dropped.
    #[arg(long, default_value_t = 8, value_name = "FRAMES")]
    pub queue_frames: usize,
    /// A window whose every key is secret (stored as `{secret}`, never as
    /// the key): its class, or a part of its title, ignoring case. Keys typed
    /// into a password field are secret wherever it is. Repeatable.
    #[arg(long, value_name = "CLASS|TITLE")]
    pub secret_window: Vec<String>,
    /// A window no screenshot may show (its box is filled while it is
    /// active): its class, or a part of its title, ignoring case. Repeatable.
    #[arg(long, value_name = "CLASS|TITLE")]
    pub exclude_window: Vec<String>,
    /// The key that turns secret typing on and off while recording, for
    /// fields the accessibility tree does not call password fields, or `none`.
    #[arg(long, default_value = "pause", value_name = "KEY")]
    pub secret_key: String,
    /// The key that marks the element under the pointer as the task's
    /// outcome, which every replay checks shows the same value, or `none`.
    #[arg(long, default_value = "scroll_lock", value_name = "KEY")]
    pub mark_key: String,
    /// Print what was recorded as JSON (its id, counts and why it stopped)
    /// instead of the summary line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct ReplayArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// How to find each action's target: `visual` (the recorded element,
    /// found again by its identity in the accessibility tree, else on the
    /// screen; offline; each effect checked), `naive` (the recorded
    /// coordinates and timing: a baseline for comparison, which proves
    /// nothing), or `vanilla` (a model decides each action; needs a
    /// provider).
    #[arg(long, value_enum, default_value_t = StrategyChoice::Visual)]
    pub strategy: StrategyChoice,
    /// How the visual strategy describes elements: `offline` (OCR, no model)
    /// or `llm` (the configured model provider).
    #[arg(long, value_enum, default_value_t = DescriberChoice::Offline)]
    pub describer: DescriberChoice,
    /// Which rungs of the visual strategy's ladder may find a target, in
    /// order: `structural` (the element's role, name and row in the
    /// accessibility tree) and `visual` (its description and look in the
    /// pixels). `--rungs visual` compares with pixels alone.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "structural,visual"
    )]
    pub rungs: Vec<RungChoice>,
    /// Type VALUE where the recording typed the parameter NAME (see
    /// `reprise params`): `--set user_name=bob` (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Replay once per row of a CSV file (a header row naming parameters)
    /// or a JSON array of objects; a column may name a secret.
    #[arg(long, value_name = "FILE")]
    pub each: Option<std::path::PathBuf>,
    /// With --each: go on with the batch BATCH (its id, or a unique prefix)
    /// that halted: rows done are not replayed, a halted row goes on from
    /// its halted step (no --reset-with for it), the rows after it run. The
    /// rows file must give the rows already run the same values.
    #[arg(long, value_name = "BATCH", requires = "each")]
    pub resume: Option<String>,
    /// With --each: go on after a row that failed (default: stop there).
    #[arg(long, requires = "each")]
    pub keep_going: bool,
    /// With --each: replay at most this many rows.
    #[arg(long, requires = "each", value_name = "N")]
    pub max_iterations: Option<usize>,
    /// With --each: a shell command run before each row (the first
    /// included) that brings the application to the recorded start, such
    /// as starting a fresh instance; it must exit 0 within 60 s.
    #[arg(long, requires = "each", value_name = "COMMAND")]
    pub reset_with: Option<String>,
    /// Replace typed text: `--replace alice=bob` (repeatable; no model needed).
    #[arg(long, value_name = "OLD=NEW")]
    pub replace: Vec<String>,
    /// Change the replay in plain language (needs a model provider).
    #[arg(long, value_name = "TEXT")]
    pub instructions: Option<String>,
    /// Save the steps whose target was found changed (and proven) as a
    /// new version of the recording, to review with `reprise diff`
    /// (default: only list them).
    #[arg(long)]
    pub save_healed: bool,
    /// When the run halts on twins and a person is at the terminal: ask
    /// which one the step meant (by number, or a click on it), keep it as a
    /// new version and go on from that step. Without a terminal the run
    /// halts as usual.
    #[arg(long, conflicts_with_all = ["each", "dry_run", "save_healed"])]
    pub teach: bool,
    /// Scale the recorded pauses: 2 replays twice as fast; below 1 only
    /// the pauses between steps grow (a double-click stays one).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
    pub speed: f64,
    /// Decide every step and report where it would land, but inject nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// How many times a failed step is tried again.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_retries: u32,
    /// Go on after a step that failed every attempt (default: stop there).
    #[arg(long)]
    pub skip_failures: bool,
    /// Print each step as a JSON object on stdout as it ends, then the
    /// outcome as one (instead of the summary line).
    #[arg(long)]
    pub json: bool,
    /// Release modifiers and mouse buttons held down before the replay
    /// (default: refuse to start while any is held).
    #[arg(long)]
    pub release_held_keys: bool,
    /// Start the application the recording begins in, with the command
    /// line the recording kept, when none of its windows is open; wait for
    /// its window (at most 30 s), and end it when the replay ends.
    #[arg(long)]
    pub launch: bool,
    /// Secret values (TOML, or NAME=VALUE lines) for the secrets the
    /// recording types, after `REPRISE_SECRET_<NAME>` in the environment;
    /// only its owner may read it. A secret found in neither is asked for
    /// at the terminal, or the replay is refused before any input.
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<std::path::PathBuf>,
    /// Fail a step whose effect cannot be checked (default: go on, count it
    /// as unverified and exit 12 at the end).
    #[arg(long)]
    pub require_verified: bool,
    /// The most steps to take.
    #[arg(long, default_value_t = reprise_strategies::replay::DEFAULT_MAX_STEPS, value_name = "N")]
    pub max_steps: usize,
    /// The longest wait for the screen to settle before a step.
    #[arg(long, default_value_t = 3.0, value_name = "SECONDS")]
    pub settle_timeout: f64,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run's id, a unique prefix of it, or `last`.
    #[arg(default_value = "last")]
    pub run: String,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct VisualizeArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: Option<RunsCommand>,
    /// Only the runs of this recording (its id, a unique prefix, or its name).
    #[arg(long, value_name = "RECORDING")]
    pub recording: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// One run: its recording, outcome, and each step's action, how its
    /// target was found, outcome and time.
    Show {
        /// A run's id, a unique prefix of it, or `last` (`latest`).
        run: String,
        /// Print the run and its steps as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete old runs with the frames only they use, and give the space
    /// back to the disk. Give --older-than, --keep, or both.
    #[command(allow_negative_numbers = true)]
    Prune {
        /// Delete runs started more than this many days ago.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<f64>,
        /// Keep only the newest N runs.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Say what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Every setting in effect and where it came from (a flag, a variable,
    /// the config file, the default); keys are never shown, only whether
    /// they are set. Exits 2 when the settings are refused.
    Show {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// Print the recording, its reduced events, screenshots and window states as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// Print the parameters as JSON.
    #[arg(long)]
    pub json: bool,
    /// Give a parameter another name, kept with the recording (and its
    /// export): `--rename user_name=login` (repeatable). A secret's name
    /// is its environment variable's: REPRISE_SECRET_LOGIN.
    #[arg(long, value_name = "OLD=NEW")]
    pub rename: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// Print what was deleted as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// The file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Print what was exported as JSON (on stderr when the export itself
    /// goes to stdout).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// An export file written by `reprise export`.
    pub file: PathBuf,
    /// Import it as a copy with a new id and this name (for a recording
    /// that is already in the store).
    #[arg(long = "as", value_name = "NAME")]
    pub as_name: Option<String>,
    /// Print what was imported as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SegmentArgs {
    /// A PNG image of a window (or a screen).
    pub image: PathBuf,
    /// Print the segments as JSON.
    #[arg(long)]
    pub json: bool,
    /// Draw the segments (outlines, ids, click points) into this PNG.
    #[arg(long, value_name = "OUT.png")]
    pub overlay: Option<PathBuf>,
    /// Ask a segmentation server at this URL (masks as a colour-coded PNG
    /// or polygons) instead of the built-in classical segmenter.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Describe each segment offline (Tesseract OCR, kind, nearest label).
    #[arg(long)]
    pub describe: bool,
    /// Reuse a cached segmentation of a similar image from the store, or
    /// cache this one.
    #[arg(long)]
    pub cache: bool,
    /// With --cache: the region (x,y,width,height in image pixels) that must
    /// not have changed for a cached segmentation to be reused.
    #[arg(long, value_name = "X,Y,W,H", requires = "cache")]
    pub target: Option<String>,
}

#[derive(Debug, Args)]
pub struct ScreenshotArgs {
    /// The PNG file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Only the active window's client area.
    #[arg(long)]
    pub active_window: bool,
}

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Send a tiny request to the configured providers and show the answer,
    /// its latency, tokens and cost.
    Ping {
        /// Only this provider: openai, anthropic or gemini.
        #[arg(long)]
        provider: Option<String>,
        /// Do not answer from the response cache (nor store the answer).
        #[arg(long)]
        no_cache: bool,
    },
    /// Calls, cache hits, tokens and estimated cost per provider and model.
    Usage {
        /// Only the calls of this replay run.
        #[arg(long)]
        run: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Delete cached answers older than this many days.
    #[command(allow_negative_numbers = true)]
    Prune {
        /// The age, in days, past which a cached answer is deleted.
        #[arg(long, value_name = "DAYS")]
        older_than_days: f64,
    },
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time segmentation against a plain Canny on the same images, SSIM,
    /// and a cache lookup among 1,000 cached segmentations.
    Segment {
        /// A screenshot (e.g. 1920x1080).
        screen: PathBuf,
        /// A window image (e.g. 800x600).
        window: PathBuf,
    },
    /// Time each part of taking a frame on the live display, against a raw
    /// X11 GetImage in the same run.
    Capture {
        /// Frames to time for each part.
        #[arg(long, default_value_t = 30)]
        frames: usize,
    },
    /// Sample how long an accessible application takes to answer on the
    /// accessibility bus (its root's name, read afresh): what a recording
    /// costs it shows as the difference with the recorder on and off.
    Answers {
        /// The accessible application's name (soffice, zenity, Firefox, ...).
        app: String,
        /// Requests to time.
        #[arg(long, default_value_t = 40)]
        samples: usize,
        /// Milliseconds between requests.
        #[arg(long, default_value_t = 250)]
        interval_ms: u64,
    },
    /// Time reading the active window whole (a step's decision does)
    /// against reading its id alone (done before each key a step types).
    Window {
        /// Reads to time of each kind.
        #[arg(long, default_value_t = 200)]
        reads: usize,
    },
    /// Serve a stand-in model for the robustness benchmark on a loopback
    /// port (printed as its first line) until stopped: the OpenAI wire format,
    /// naming elements by the text Tesseract reads in them and answering the
    /// vanilla strategy with the next recorded action. It is no model.
    /// (Built with the test-support feature only.)
    #[cfg(feature = "test-support")]
    ModelServer,
}

#[derive(Debug, Subcommand)]
pub enum EventsCommand {
    /// Reduce raw events (a JSON array on stdin) into event trees (JSON on stdout).
    Reduce(ReduceArgs),
}

#[derive(Debug, Args)]
pub struct ReduceArgs {
    /// Two presses within this many seconds can make a double-click.
    #[arg(long, default_value_t = 0.5, value_name = "SECONDS")]
    pub double_click_interval: f64,
    /// Two presses within this many pixels on each axis can make a double-click.
    #[arg(long, default_value_t = 5.0, value_name = "PIXELS")]
    pub double_click_distance: f64,
}
