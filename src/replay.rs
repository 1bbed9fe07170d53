//! `reprise replay`: the live desktop behind the strategies' port, the abort
//! watcher, and the persistence of every step for the report.

mod abort;
mod desktop;
pub mod launch;
pub mod reset;
pub mod secrets;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use reprise_models::{ReduceOptions, reduce, screenshot::content_hash};
use reprise_strategies::llm::SharedLlm;
use reprise_strategies::{
    NaiveStrategy, ReplayOptions, ReplayOutcome, ReplayStrategy, StepRecord, run_replay,
};
use serde_json::json;

use crate::exit::StopKind;
use crate::frames::encode_png;
use crate::store::{RunRecord, Store};
pub use abort::{ABORT_KEYS, AbortWatcher};
pub use desktop::LiveDesktop;

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
}

/// Asked just before the first input.
pub type BeforeInput = Arc<dyn Fn() -> bool + Send + Sync>;
/// Told of every finished step.
pub type OnStep = Arc<dyn Fn(&serde_json::Value) + Send + Sync>;

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
    /// Set from elsewhere to abort at the loop's next check, as the abort
    /// keys do.
    pub stop: Option<Flag>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("before_input", &self.before_input.is_some())
            .field("on_step", &self.on_step.is_some())
            .field("stop", &self.stop)
            .finish()
    }
}

/// The replay was withdrawn just before its first input (its
/// `before_input` hook said no): nothing was injected.
#[derive(Debug, thiserror::Error)]
#[error("the replay was withdrawn before its first input; nothing was injected")]
pub struct Withdrawn;

/// A run's place in a batch: the batch's id, the row's number (from 1) and
/// its values, secrets masked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BatchRow {
    pub id: String,
    pub row: usize,
    pub values: Vec<(String, String)>,
}

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
    let trees = reduce(
        bundle.events.clone(),
        &ReduceOptions {
            double_click: bundle.recording.double_click,
        },
    );
    let trees = reprise_strategies::params::with_names(
        reprise_strategies::plan::plan_steps(trees, &bundle.window_states),
        names,
    );
    reprise_strategies::params::parameters(&trees, names)
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

/// One finished step as `replay --json` prints it.
fn step_json(record: &StepRecord, total: Option<usize>) -> serde_json::Value {
    json!({
        "type": "step",
        "step": record.step_idx,
        "of": total,
        "action": record.step.as_ref().map(|step| step.label.as_str()),
        "status": record.status,
        "found": record.step.as_ref().map(|step| step.reason.as_str()),
        "check": record.check,
        "errors": record.errors,
        "prepared": record.prepared,
        "attempts": record.attempts,
        "seconds": record.duration_seconds,
    })
}

/// One finished step as a line for a person.
pub fn step_line(record: &StepRecord, total: Option<usize>) -> String {
    let place = match total {
        Some(total) => format!("step {}/{total}", record.step_idx + 1),
        None => format!("step {}", record.step_idx + 1),
    };
    let action = record
        .step
        .as_ref()
        .map_or("(no step decided)".to_owned(), |step| step.label.clone());
    let status = record.status.as_str().replace('_', " ");
    let why = record
        .errors
        .last()
        .or(record.check.as_ref())
        .cloned()
        .unwrap_or_default();
    // What was made first (a turn of the wheel), said by what it did.
    let first = record
        .prepared
        .iter()
        .map(|made| format!("; first {}", made.label))
        .collect::<String>();
    crate::present::terminal_safe(&format!(
        "{place} {action} … {status} ({why}{first}; {:.0} ms)",
        record.duration_seconds * 1000.0
    ))
}

/// How a replay went, for the command's output and exit code.
#[derive(Debug)]
pub struct ReplayResult {
    pub run_id: String,
    pub recording_id: String,
    pub outcome: ReplayOutcome,
    pub n_steps: usize,
    pub seconds: f64,
}

pub fn replay(store: &mut Store, request: &ReplayRequest) -> Result<ReplayResult> {
    let recording_id = store.resolve(&request.recording)?;
    let bundle = store
        .load(&recording_id)
        .with_context(|| format!("read recording {recording_id}"))?;
    let run_id = uuid::Uuid::new_v4().to_string();
    let trees = reduce(
        bundle.events.clone(),
        &ReduceOptions {
            double_click: bundle.recording.double_click,
        },
    );
    // Instructions need a model: with none configured, a clear refusal
    // before anything is replayed.
    // One chain of providers for whatever needs a model in this replay.
    let needs_model = request.instructions.is_some()
        || request.strategy == StrategyChoice::Vanilla
        || (request.strategy == StrategyChoice::Visual
            && request.describer == DescriberChoice::Llm);
    let mut llm = if needs_model {
        Some(SharedLlm::new(Box::new(model_chain(
            store,
            request.config.as_deref(),
            &run_id,
        )?)))
    } else {
        None
    };
    let (trees, n_replaced) =
        reprise_strategies::edit::replace_typed_text(trees, &request.replacements);
    if !request.replacements.is_empty() && n_replaced == 0 {
        anyhow::bail!(crate::exit::UsageError(
            "--replace found none of its text in what the recording types".into()
        ));
    }
    // Replay's steps: keys released in the step that pressed them, and
    // typing into one window as one step (see strategies::plan).
    let names = &bundle.recording.parameter_names;
    let trees = reprise_strategies::params::with_names(
        reprise_strategies::plan::plan_steps(trees, &bundle.window_states),
        names,
    );
    let trees = reprise_strategies::params::set_parameters(trees, &request.parameters, names)
        .map_err(|err| crate::exit::UsageError(err.to_string()))?;
    // Every secret it types has its value before anything is injected (a
    // dry run injects nothing and needs none).
    let secret_names = reprise_strategies::params::secret_names(&trees);
    let secret_values = if request.options.dry_run {
        secrets::SecretValues::default()
    } else {
        secrets::SecretValues::resolve(
            &secret_names,
            request.secrets_file.as_deref(),
            &|variable| {
                request
                    .secret_overrides
                    .by_variable(variable)
                    .map(str::to_owned)
                    .or_else(|| std::env::var(variable).ok())
            },
            request.hooks.before_input.is_none(),
        )?
    };
    // Vanilla decides its own steps: their number is not known ahead.
    let total = (request.strategy != StrategyChoice::Vanilla).then_some(trees.len());
    let to_launch = if request.launch {
        Some(
            launch::first_window(&trees, &bundle.window_states)
                .cloned()
                .ok_or(launch::LaunchError::NoWindow)?,
        )
    } else {
        None
    };
    let mut strategy: Box<dyn ReplayStrategy> = match request.strategy {
        StrategyChoice::Naive if request.instructions.is_some() => {
            anyhow::bail!(crate::exit::UsageError(
                "--instructions works with --strategy visual or vanilla".into()
            ))
        }
        StrategyChoice::Naive => Box::new(NaiveStrategy::new(
            trees,
            bundle.window_states.clone(),
            request.speed,
        )),
        StrategyChoice::Visual => {
            let mut visual = visual_strategy(store, &bundle, trees, request, llm.clone())?;
            if let (Some(instructions), Some(llm)) = (&request.instructions, llm.as_mut()) {
                let render = render_prompt();
                let (steps, calls) = reprise_strategies::visual::instructions::apply_instructions(
                    llm,
                    &render,
                    visual.steps(),
                    &bundle.recording.task_description,
                    instructions,
                    3,
                )
                .map_err(|err| {
                    anyhow::anyhow!(crate::exit::LlmFailure(format!(
                        "apply the instructions: {err}"
                    )))
                })?;
                tracing::info!(calls, "instructions applied");
                visual.set_steps(steps);
            }
            Box::new(visual)
        }
        StrategyChoice::Vanilla => Box::new(reprise_strategies::vanilla::VanillaStrategy::new(
            Box::new(llm.expect("vanilla always has a model")),
            render_prompt(),
            &bundle.recording.task_description,
            &trees,
            request.instructions.as_deref(),
        )),
    };
    let mut desktop = LiveDesktop::connect(request.options.dry_run)
        .context("connect to the display (is DISPLAY set?)")?;
    desktop.check_nothing_held(request.release_held)?;
    desktop.set_secrets(secret_values);
    let secret_fields = desktop.secret_fields();
    let watcher = AbortWatcher::start(desktop.screen(), desktop.last_move())
        .context("start the abort watcher")?;
    if let Some(before_input) = &request.hooks.before_input
        && !before_input()
    {
        return Err(Withdrawn.into());
    }
    // Ctrl-C, SIGTERM and SIGHUP abort the replay like the abort keys, so
    // the loop releases every key and button it holds before Reprise exits
    // (and an application it launched is ended).
    let signalled = Flag::default();
    let _signals = SignalFlags::register(&signalled)?;
    let _launched = match &to_launch {
        Some(window) => {
            let launched = launch::launch(
                window,
                request.options.dry_run,
                &mut |class| desktop.has_window_of(class),
                &|| signalled.load(Ordering::SeqCst),
            )?;
            if let Some(launched) = &launched
                && (request.progress.lines || request.progress.banner.is_some())
            {
                eprintln!(
                    "started {} (`{}`) for the replay; it is ended when the replay ends",
                    crate::present::terminal_safe(&launched.app),
                    launched.command
                );
            }
            launched
        }
        None => None,
    };
    if let Some(banner) = &request.progress.banner {
        eprintln!("{banner}");
    }

    let run = RunRecord {
        id: run_id.clone(),
        recording_id: recording_id.clone(),
        strategy: strategy.name().to_owned(),
        arguments: json!({
            "speed": request.speed,
            "dry_run": request.options.dry_run,
            "max_retries": request.options.max_retries,
            "skip_failures": request.options.skip_failures,
            "require_verified": request.options.require_verified,
            "max_steps": request.options.max_steps,
            "replacements": request.replacements,
            "parameters": request.parameters,
            "batch": request.batch,
            "rungs": {"structural": request.rungs.structural, "visual": request.rungs.visual},
        }),
        started: now(),
        ended: None,
        outcome: None,
        summary: None,
    };
    store.insert_run(&run)?;
    let started = std::time::Instant::now();
    let mut store_error: Option<anyhow::Error> = None;
    let mut n_steps = 0;
    let aborted = watcher.flag();
    let outcome = run_replay(
        strategy.as_mut(),
        &mut desktop,
        &request.options,
        &|| {
            aborted.load(Ordering::SeqCst)
                || signalled.load(Ordering::SeqCst)
                || request
                    .hooks
                    .stop
                    .as_ref()
                    .is_some_and(|stop| stop.load(Ordering::SeqCst))
        },
        &mut |record, frame| {
            n_steps += 1;
            if request.progress.json {
                println!("{}", step_json(record, total));
            }
            if let Some(on_step) = &request.hooks.on_step {
                on_step(&step_json(record, total));
            }
            if request.progress.lines {
                eprintln!("{}", step_line(record, total));
            }
            // The frame as stored: the password fields the step's tree
            // showed are masked, as in the recording.
            let png = frame.map(|frame| {
                let fields = secret_fields
                    .lock()
                    .map(|fields| fields.clone())
                    .unwrap_or_default();
                // Copied only when something is to be masked.
                let mut image = std::borrow::Cow::Borrowed(&frame.image);
                for field in &fields {
                    crate::frames::mask_box(image.to_mut(), frame.screen, *field);
                }
                let (width, height) = image.dimensions();
                (
                    content_hash(width, height, image.as_raw()),
                    encode_png(&image),
                )
            });
            let step = crate::store::StoredStep {
                record: record.clone(),
                screen: frame.map(|frame| frame.screen),
            };
            let frame = png
                .as_ref()
                .map(|(hash, png)| (hash.as_str(), png.as_slice()));
            if let Err(err) = store.insert_run_step(&run.id, record.step_idx as u32, &step, frame) {
                store_error.get_or_insert(err.into());
            }
        },
    );
    let seconds = started.elapsed().as_secs_f64();
    drop(watcher);
    if let Some(err) = store_error {
        return Err(err.context("store a replay step"));
    }
    let usage = store.llm_usage(Some(&run.id))?;
    let model_calls: u64 = usage
        .iter()
        .map(|total| total.calls - total.cache_hits)
        .sum();
    let tokens: u64 = usage
        .iter()
        .map(|total| total.input_tokens + total.output_tokens)
        .sum();
    let cost: f64 = usage.iter().map(|total| total.cost_usd).sum();
    let summary = json!({
        "steps": n_steps,
        "seconds": seconds,
        "model_calls": model_calls,
        "model_cache_hits": usage.iter().map(|total| total.cache_hits).sum::<u64>(),
        "tokens": tokens,
        "cost_usd": cost,
    });
    store.finish_run(
        &run.id,
        &now(),
        &serde_json::to_value(&outcome).expect("outcomes serialize"),
        &summary,
    )?;
    Ok(ReplayResult {
        run_id: run.id,
        recording_id,
        outcome,
        n_steps,
        seconds,
    })
}

/// Signal handlers that set a flag, removed when dropped (a replay embedded
/// in the fleet's worker leaves none behind).
struct SignalFlags(Vec<signal_hook::SigId>);

impl SignalFlags {
    fn register(flag: &Flag) -> Result<SignalFlags> {
        let mut ids = SignalFlags(Vec::new());
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            ids.0.push(
                signal_hook::flag::register(signal, Arc::clone(flag))
                    .context("install the signal handler")?,
            );
        }
        Ok(ids)
    }
}

impl Drop for SignalFlags {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// How a replay that is not a plain success ended, in words; `None` for
/// one that completed with every step verified.
pub fn stop_of(result: &ReplayResult) -> Option<(String, StopKind)> {
    use reprise_strategies::ReplayOutcome;
    Some(match &result.outcome {
        ReplayOutcome::Completed {
            steps,
            unverified,
            skipped,
        } => {
            let verified = steps - unverified - skipped;
            if *unverified == 0 && *skipped == 0 {
                return None;
            }
            let counts = format!(
                "{verified} verified, {unverified} unverified, {skipped} failed and passed over"
            );
            if *skipped > 0 {
                (
                    format!(
                        "went on past {} that failed ({counts})",
                        crate::present::plural(*skipped, "step")
                    ),
                    StopKind::Failed,
                )
            } else {
                (
                    format!(
                        "did all {} of recording {}, but the effect of {unverified} could not be checked ({counts}; --require-verified makes that a failure)",
                        crate::present::plural(*steps, "step"),
                        result.recording_id
                    ),
                    StopKind::Unverified,
                )
            }
        }
        ReplayOutcome::Failed { step, reason } => (
            format!("failed at step {}: {reason}", step + 1),
            StopKind::Failed,
        ),
        ReplayOutcome::Aborted { step } => (
            format!("was aborted at step {}", step + 1),
            StopKind::Aborted,
        ),
        ReplayOutcome::StepLimit { steps } => (
            format!("reached the step limit ({steps})"),
            StopKind::Failed,
        ),
    })
}

/// The configured model providers, accounting into the store; refused
/// clearly when none is configured.
fn model_chain(
    store: &Store,
    config: Option<&std::path::Path>,
    run_id: &str,
) -> Result<crate::llm::ChainLlm> {
    let file = crate::config::config_file(config)?;
    let settings =
        crate::llm::settings::resolve(&Default::default(), &|var| std::env::var(var).ok(), &file)?;
    if settings.providers.is_empty() {
        anyhow::bail!(reprise_strategies::llm::LlmError::NotConfigured);
    }
    // Said once, before anything is sent: where the screen's images go.
    let receivers: Vec<String> = settings
        .providers
        .iter()
        .map(|provider| {
            let host = reqwest::Url::parse(&provider.base_url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned))
                .unwrap_or_else(|| provider.base_url.clone());
            format!("{} at {host}", provider.kind.name())
        })
        .collect();
    eprintln!(
        "{}",
        crate::present::terminal_safe(&format!(
            "screen images of this replay are sent to the model provider {} (REPRISE_LLM_PROVIDERS sets which)",
            receivers.join(", then if it fails to ")
        ))
    );
    let accounting = Store::open(store.path()).context("open the store for model accounting")?;
    let mut chain = crate::llm::ChainLlm::new(settings, accounting)?;
    chain.run_id = Some(run_id.to_owned());
    Ok(chain)
}

/// The strategies' prompt renderer: the templates in prompts/.
fn render_prompt() -> reprise_strategies::vanilla::RenderPrompt {
    Box::new(|name, values| crate::llm::prompt::render(name, values).map_err(Into::into))
}

/// The visual strategy: the classical segmenter, the Tesseract describer (or
/// the model, through the replay's one chain), and the segmentation cache in
/// the store.
fn visual_strategy(
    store: &Store,
    bundle: &reprise_models::RecordingBundle,
    trees: Vec<reprise_models::ActionEvent>,
    request: &ReplayRequest,
    llm: Option<SharedLlm>,
) -> Result<reprise_strategies::visual::VisualStrategy> {
    use reprise_strategies::analysis::Vision;
    use reprise_strategies::visual::prepare;
    let cache_store =
        Store::open(store.path()).context("open the store for the segmentation cache")?;
    let describer: Box<dyn reprise_strategies::describe::Describer> = match request.describer {
        DescriberChoice::Offline => Box::new(reprise_strategies::describe::OfflineDescriber::new(
            crate::describe::TesseractReader::new()?,
        )),
        DescriberChoice::Llm => Box::new(reprise_strategies::describe::LlmDescriber::new(
            Box::new(llm.expect("the model describer has a model")),
            render_prompt(),
        )),
    };
    let mut vision = Vision {
        segmenter: Box::new(reprise_strategies::vision::classical::ClassicalSegmenter::default()),
        describer,
        cache: Some(
            reprise_strategies::vision::cache::SegmentationCache::strict(Box::new(
                crate::vision_cache::StoreRows::new(cache_store),
            )),
        ),
        stats: Default::default(),
    };
    let mut frame_of = |id: u32| -> Option<reprise_strategies::Frame> {
        let shot = bundle.screenshots.get(id as usize)?;
        let image = store.image(&shot.content_hash).ok()?;
        Some(reprise_strategies::Frame {
            image,
            screen: shot.screen,
        })
    };
    let frame_times: Vec<f64> = bundle
        .screenshots
        .iter()
        .map(|shot| shot.timestamp)
        .collect();
    let steps = prepare(
        trees,
        &bundle.window_states,
        &mut frame_of,
        &frame_times,
        &mut vision,
    )
    .map_err(|err| {
        let text = format!("prepare the recording for visual replay: {err}");
        match err {
            // The model's answers could not be used, or it did not answer:
            // the providers failed (exit 5).
            reprise_strategies::analysis::AnalysisError::Describe(
                reprise_strategies::describe::DescribeError::Model(_),
            ) => anyhow::Error::new(crate::exit::LlmFailure(text)),
            _ => anyhow::anyhow!(text),
        }
    })?;
    Ok(
        reprise_strategies::visual::VisualStrategy::new(steps, vision, request.speed)
            .with_rungs(request.rungs)
            .with_windows(&bundle.window_states),
    )
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Shared between the desktop (which writes where it moved the pointer) and
/// the abort watcher (which ignores a corner the replay itself moved to).
pub type LastMove = Arc<std::sync::Mutex<Option<(f64, f64)>>>;

/// A flag set once, from any thread.
pub type Flag = Arc<AtomicBool>;
