//! One replay run from start to end, in the order it happens: the
//! recording's steps planned, the model chain and the strategy chosen, the
//! desktop checked, every step stored as it ends, the run's outcome and cost
//! kept.

use std::sync::atomic::Ordering;

use anyhow::{Context as _, Result};
use image::RgbaImage;
use reprise_models::screenshot::content_hash;
use reprise_models::{
    ActionEvent, RecordingBundle, ReduceOptions, ScreenGeometry, WindowState, reduce,
};
use reprise_strategies::llm::SharedLlm;
use reprise_strategies::replay::Coverage;
use reprise_strategies::{Frame, StepRecord, StepSink, run_replay_into};

use super::desktop::SecretFields;
use super::progress::{StepLine, step_line};
use super::{
    AbortWatcher, DescriberChoice, Flag, LiveDesktop, ReplayRequest, ReplayResult, StrategyChoice,
    Withdrawn, launch, secrets, strategy,
};
use crate::settings::errors::UsageError;
use crate::store::frames::encode_png;
use crate::store::{RunArguments, RunRecord, RunRungs, RunSummary, Store, StoredStep};

/// Replays a stored recording as `request` says, keeping the run and each
/// of its steps in the store.
pub fn replay(store: &mut Store, request: &ReplayRequest) -> Result<ReplayResult> {
    let (recording_id, bundle, version, program) = recording_of(store, request)?;
    let run_id = request.resume.as_ref().map_or_else(
        || uuid::Uuid::new_v4().to_string(),
        |resume| resume.run.id.clone(),
    );
    let mut llm = model_if_needed(store, request, &run_id)?;
    let planned = planned_steps(&bundle, request, program.as_ref())?;
    let replayed = planned.trees.clone();
    let secret_values = secret_values(&planned.trees, planned.variables(), request)?;
    let total = planned.total(request.strategy);
    let to_launch = window_to_launch(request, &planned.trees, &bundle)?;
    let (mut strategy, (mut desktop, watcher)) =
        strategy_and_desktop(store, (&planned, &bundle, &mut llm), request, secret_values)?;
    let secret_fields = desktop.secret_fields();
    if let Some(before_input) = &request.hooks.before_input
        && !before_input()
    {
        return Err(Withdrawn.into());
    }
    // Ctrl-C, SIGTERM and SIGHUP abort the replay like the abort keys, so
    // the loop releases every key and button it holds before Reprise exits
    // (and an application it launched is ended).
    let signalled = Flag::default();
    let _signals = crate::platform::signals::StopSignals::set(&signalled)
        .context("install the signal handlers")?;
    let _launched = match &to_launch {
        Some(window) => launch_for(window, request, &mut desktop, &signalled)?,
        None => None,
    };
    if let Some(banner) = &request.progress.banner {
        eprintln!("{banner}");
    }
    let mut run = run_record(run_id, &recording_id, strategy.name(), request);
    run.arguments.version = Some(version);
    let done = open_run(store, request, &mut run)?;
    let started = std::time::Instant::now();
    let mut keeper = StepKeeper {
        store,
        run_id: &run.id,
        request,
        total,
        secret_fields,
        n_steps: done.len(),
        error: None,
    };
    let aborted = watcher.flag();
    let stop = request.hooks.stop.clone();
    let outcome = run_replay_into(
        strategy.as_mut(),
        &mut desktop,
        &request.options,
        done,
        &|| {
            aborted.load(Ordering::SeqCst)
                || signalled.load(Ordering::SeqCst)
                || stop.as_ref().is_some_and(|stop| stop())
        },
        &mut keeper,
    );
    let seconds = started.elapsed().as_secs_f64() + seconds_before(request);
    drop(watcher);
    let n_steps = keeper.n_steps;
    if let Some(err) = keeper.error {
        return Err(err.context("store a replay step"));
    }
    let summary = summary(store, &run.id, n_steps, seconds)?;
    store.finish_run(&run.id, &now(), &outcome, &summary)?;
    let (heals, coverage) = heals_of(store, &run.id, &replayed)?;
    Ok(ReplayResult {
        run_id: run.id,
        recording_id,
        outcome,
        n_steps,
        seconds,
        version,
        heals,
        coverage,
    })
}

/// The recording `request` names, as the version it pins has it (a
/// resumed run: the version it began with; else the newest), with that
/// version's program.
fn recording_of(
    store: &Store,
    request: &ReplayRequest,
) -> Result<(
    String,
    reprise_models::RecordingBundle,
    u32,
    Option<reprise_models::program::Program>,
)> {
    let (recording_id, pinned) = store.resolve_versioned(&request.recording)?;
    let pinned = pinned.or(request
        .resume
        .as_ref()
        .and_then(|resume| resume.run.arguments.version));
    let (bundle, version, program) = store
        .load_edited(&recording_id, pinned)
        .with_context(|| format!("read recording {}", request.recording))?;
    Ok((recording_id, bundle, version, program))
}

/// The heals a run's steps (all of them, a resumed run's earlier ones too)
/// show against the steps it replayed, and the coverage they give.
fn heals_of(
    store: &Store,
    run_id: &str,
    replayed: &[reprise_models::ActionEvent],
) -> Result<(Vec<reprise_models::version::TargetChange>, Coverage)> {
    let records: Vec<_> = store
        .load_run(run_id)?
        .1
        .into_iter()
        .map(|step| step.step.record)
        .collect();
    Ok((
        super::heal::heals(replayed, &records),
        Coverage::of(&records),
    ))
}

/// The seconds a resumed run took before (a run's time is its sessions'
/// together); 0 for a new run.
fn seconds_before(request: &ReplayRequest) -> f64 {
    request
        .resume
        .as_ref()
        .and_then(|resume| resume.run.summary.as_ref())
        .map_or(0.0, |earlier| earlier.seconds)
}

/// The run as stored: a new one, or the halted run `request` resumes,
/// reopened from its halted step (its first start and every resumption
/// kept); the records of the steps done before it.
fn open_run(
    store: &mut Store,
    request: &ReplayRequest,
    run: &mut RunRecord,
) -> Result<Vec<StepRecord>> {
    Ok(match &request.resume {
        Some(resume) => {
            // The same run, on from its halted step: its first start, its
            // earlier resumptions, and this one.
            run.started = resume.run.started.clone();
            run.arguments.resumptions = resume.run.arguments.resumptions.clone();
            run.arguments.resumptions.push(crate::store::Resumption {
                at: now(),
                halted: resume.halted.clone(),
                from_step: resume.from,
            });
            store.reopen_run(&run.id, resume.from, &run.arguments)?;
            resume.done.clone()
        }
        None => {
            store.insert_run(run)?;
            Vec::new()
        }
    })
}

/// The strategy over the planned steps, and the display: connected (its
/// capture chosen, the abort watcher started) while the strategy prepares
/// the recording. The strategy's error comes first.
fn strategy_and_desktop(
    store: &Store,
    (planned, bundle, llm): (&Planned, &RecordingBundle, &mut Option<SharedLlm>),
    request: &ReplayRequest,
    secret_values: secrets::SecretValues,
) -> Result<(
    Box<dyn reprise_strategies::ReplayStrategy>,
    (LiveDesktop, AbortWatcher),
)> {
    let (strategy, connected) = std::thread::scope(|scope| {
        let connecting = scope.spawn(|| live_desktop(request, secret_values));
        let strategy = planned.strategy(store, bundle, request, llm);
        let connected = connecting
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("connecting to the display panicked")));
        (strategy, connected)
    });
    Ok((strategy?, connected?))
}

/// The display, checked to hold nothing down, with the secrets to type,
/// and the abort watcher on it.
fn live_desktop(
    request: &ReplayRequest,
    secret_values: secrets::SecretValues,
) -> Result<(LiveDesktop, AbortWatcher)> {
    let mut desktop = LiveDesktop::connect(request.options.dry_run)
        .context("connect to the display (is DISPLAY set?)")?;
    desktop.check_nothing_held(request.release_held)?;
    desktop.set_secrets(secret_values);
    let watcher = AbortWatcher::start(desktop.screen(), desktop.last_move())
        .context("start the abort watcher")?;
    Ok((desktop, watcher))
}

/// One chain of providers for whatever needs a model in this replay (its
/// instructions, the vanilla strategy, the model describer); with none
/// configured, a clear refusal before anything is replayed.
fn model_if_needed(
    store: &Store,
    request: &ReplayRequest,
    run_id: &str,
) -> Result<Option<SharedLlm>> {
    let needs_model = request.instructions.is_some()
        || request.strategy == StrategyChoice::Vanilla
        || (request.strategy == StrategyChoice::Visual
            && request.describer == DescriberChoice::Llm);
    if !needs_model {
        return Ok(None);
    }
    let chain = strategy::model_chain(
        store,
        request.config.as_deref(),
        run_id,
        "screen images of this replay",
    )?;
    Ok(Some(SharedLlm::new(Box::new(chain))))
}

/// The replay's steps: the recording's events as trees, with `--replace`
/// applied, keys released in the step that pressed them and typing into
/// one window as one step (see strategies::plan), parameters named and
/// `--set` values put in; with a program (an edited version), its values
/// too and its recorded steps in its order, with its places.
fn planned_steps(
    bundle: &RecordingBundle,
    request: &ReplayRequest,
    program: Option<&reprise_models::program::Program>,
) -> Result<Planned> {
    let trees = reduce(
        bundle.events.clone(),
        &ReduceOptions {
            double_click: bundle.recording.double_click,
        },
    );
    let (trees, n_replaced) =
        reprise_strategies::edit::replace_typed_text(trees, &request.replacements);
    if !request.replacements.is_empty() && n_replaced == 0 {
        anyhow::bail!(UsageError(
            "--replace found none of its text in what the recording types".into()
        ));
    }
    let names = &bundle.recording.parameter_names;
    let trees = reprise_strategies::params::with_names(
        reprise_strategies::plan::plan_steps(trees, &bundle.window_states),
        names,
    );
    let Some(program) = program else {
        let trees = reprise_strategies::params::set_parameters(trees, &request.parameters, names)
            .map_err(|err| UsageError(err.to_string()))?;
        return Ok(Planned {
            trees,
            compiled: None,
        });
    };
    if request.strategy == StrategyChoice::Vanilla {
        anyhow::bail!(UsageError(
            "this version of the recording has edited steps, which vanilla does not follow (it decides its own): replay it with --strategy visual or naive, or an unedited version (NAME@1)".into()
        ));
    }
    let tables = super::rows::tables_of(program)?;
    let compiled =
        reprise_strategies::program::compile(trees, program, &request.parameters, names, &tables)
            .map_err(|err| UsageError(format!("the recording's steps: {}: {err}", err.field)))?;
    Ok(Planned {
        trees: compiled.trees.clone(),
        compiled: Some(compiled),
    })
}

/// The steps a replay takes: the planned trees, and where the version has
/// a program, the program compiled over them.
struct Planned {
    trees: Vec<ActionEvent>,
    compiled: Option<reprise_strategies::program::Compiled>,
}

impl Planned {
    /// The program's variables (typed as secrets are, from values read).
    fn variables(&self) -> &[String] {
        self.compiled
            .as_ref()
            .map_or(&[], |compiled| &compiled.variables)
    }

    /// How many steps the loop takes: unknown ahead for vanilla, which
    /// decides its own.
    fn total(&self, strategy: StrategyChoice) -> Option<usize> {
        match &self.compiled {
            _ if strategy == StrategyChoice::Vanilla => None,
            None => Some(self.trees.len()),
            // Blocks decide at replay which steps run.
            Some(compiled) if compiled.has_blocks() => None,
            Some(compiled) => Some(compiled.slots.len()),
        }
    }

    /// The strategy the request asks for over the trees, following the
    /// program where there is one.
    fn strategy(
        &self,
        store: &Store,
        bundle: &RecordingBundle,
        request: &ReplayRequest,
        llm: &mut Option<reprise_strategies::llm::SharedLlm>,
    ) -> Result<Box<dyn reprise_strategies::ReplayStrategy>> {
        let inner = strategy::choose(store, bundle, self.trees.clone(), request, llm)?;
        Ok(match &self.compiled {
            Some(compiled) => Box::new(reprise_strategies::program::ProgramStrategy::new(
                inner, compiled,
            )),
            None => inner,
        })
    }
}

/// Every secret the steps type, with its value, before anything is
/// injected. A dry run injects nothing and holds no value, but checks what
/// a live run would (the file, every name given) and refuses as it would.
fn secret_values(
    trees: &[ActionEvent],
    variables: &[String],
    request: &ReplayRequest,
) -> Result<secrets::SecretValues> {
    // A program's variables are typed as secrets are, from values the
    // replay reads itself.
    let mut secret_names = reprise_strategies::params::secret_names(trees);
    secret_names.retain(|name| !variables.contains(name));
    let environment = |variable: &str| {
        request
            .secret_overrides
            .by_variable(variable)
            .map(str::to_owned)
            .or_else(|| std::env::var(variable).ok())
    };
    let file = request.secrets_file.as_deref();
    let prompt = request.hooks.before_input.is_none();
    if request.options.dry_run {
        secrets::SecretValues::check(&secret_names, file, &environment, prompt)?;
        return Ok(secrets::SecretValues::default());
    }
    secrets::SecretValues::resolve(&secret_names, file, &environment, prompt)
}

/// `--launch`: the window whose application the first step needs.
fn window_to_launch(
    request: &ReplayRequest,
    trees: &[ActionEvent],
    bundle: &RecordingBundle,
) -> Result<Option<WindowState>> {
    if !request.launch {
        return Ok(None);
    }
    let window = launch::first_window(trees, &bundle.window_states)
        .cloned()
        .ok_or(launch::LaunchError::NoWindow)?;
    Ok(Some(window))
}

/// Starts the application of `window` when none of its windows is open,
/// saying so; it is ended when the returned value is dropped.
fn launch_for(
    window: &WindowState,
    request: &ReplayRequest,
    desktop: &mut LiveDesktop,
    signalled: &Flag,
) -> Result<Option<launch::Launched>> {
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
    Ok(launched)
}

/// The run as stored when it starts: what was asked of it.
fn run_record(
    run_id: String,
    recording_id: &str,
    strategy: &str,
    request: &ReplayRequest,
) -> RunRecord {
    RunRecord {
        id: run_id,
        recording_id: recording_id.to_owned(),
        strategy: strategy.to_owned(),
        arguments: RunArguments {
            speed: request.speed,
            dry_run: request.options.dry_run,
            max_retries: request.options.max_retries,
            skip_failures: request.options.skip_failures,
            require_verified: request.options.require_verified,
            max_steps: request.options.max_steps,
            replacements: request.replacements.clone(),
            parameters: request.parameters.clone(),
            batch: request.batch.clone(),
            rungs: RunRungs {
                structural: request.rungs.structural,
                visual: request.rungs.visual,
            },
            instructions: request.instructions.clone(),
            version: None,
            pid: Some(std::process::id()),
            resumptions: Vec::new(),
        },
        started: now(),
        ended: None,
        outcome: None,
        summary: None,
    }
}

/// Each finished step: told where the request says, and stored with its
/// frame (password fields masked). The first store error is kept and ends
/// the replay's result; the replay itself goes on to release what it holds.
struct StepKeeper<'a> {
    store: &'a mut Store,
    run_id: &'a str,
    request: &'a ReplayRequest,
    total: Option<usize>,
    secret_fields: SecretFields,
    n_steps: usize,
    error: Option<anyhow::Error>,
}

/// A step's marks are stored, not told: a run killed at one leaves the
/// step as [`reprise_strategies::replay::as_begun`] or
/// [`reprise_strategies::replay::as_made`] says, and its end replaces the mark.
impl StepSink for StepKeeper<'_> {
    fn begun(&mut self, record: &StepRecord) {
        self.store_step(&reprise_strategies::replay::as_begun(record), None);
    }

    fn made(&mut self, record: &StepRecord) {
        self.store_step(&reprise_strategies::replay::as_made(record), None);
    }

    fn done(&mut self, record: &StepRecord, frame: Option<&Frame>) {
        self.keep(record, frame);
    }
}

impl StepKeeper<'_> {
    fn keep(&mut self, record: &StepRecord, frame: Option<&Frame>) {
        self.n_steps += 1;
        let progress = &self.request.progress;
        let line = StepLine::of(record, self.total);
        if progress.json {
            println!("{}", line.to_json());
        }
        if let Some(on_step) = &self.request.hooks.on_step {
            on_step(&line);
        }
        if progress.lines {
            eprintln!("{}", step_line(record, self.total));
        }
        // Masked once: for the hook, and as stored.
        let masked = frame.map(|frame| (frame.screen, self.masked(frame)));
        if let (Some(on_screen), Some((_, image))) = (&self.request.hooks.on_screen, &masked) {
            on_screen(image);
        }
        self.store_step(
            record,
            masked
                .as_ref()
                .map(|(screen, image)| (*screen, image.as_ref())),
        );
    }

    /// Stores `record` (in place of its mark, if one was stored), with its
    /// frame (masked) and the screen it shows; the first error is kept.
    fn store_step(&mut self, record: &StepRecord, frame: Option<(ScreenGeometry, &RgbaImage)>) {
        let png = frame.map(|(_, image)| {
            let (width, height) = image.dimensions();
            (
                content_hash(width, height, image.as_raw()),
                encode_png(image),
            )
        });
        let step = StoredStep {
            record: record.clone(),
            screen: frame.map(|(screen, _)| screen),
        };
        let frame = png
            .as_ref()
            .map(|(hash, png)| (hash.as_str(), png.as_slice()));
        if let Err(err) =
            self.store
                .insert_run_step(self.run_id, record.step_idx as u32, &step, frame)
        {
            self.error.get_or_insert(err.into());
        }
    }

    /// The frame with the password fields the step's tree showed masked,
    /// as in the recording (copied only when something is to be masked).
    fn masked<'f>(&self, frame: &'f Frame) -> std::borrow::Cow<'f, image::RgbaImage> {
        let fields = self
            .secret_fields
            .lock()
            .map(|fields| fields.clone())
            .unwrap_or_default();
        let mut image = std::borrow::Cow::Borrowed(&frame.image);
        for field in &fields {
            crate::store::frames::mask_box(image.to_mut(), frame.screen, *field);
        }
        image
    }
}

/// What the run cost: its steps and seconds, and its model calls, cache
/// hits, tokens and dollars from the store's accounting.
fn summary(store: &Store, run_id: &str, n_steps: usize, seconds: f64) -> Result<RunSummary> {
    let usage = store.llm_usage(Some(run_id))?;
    Ok(RunSummary {
        steps: n_steps,
        seconds,
        model_calls: usage
            .iter()
            .map(|total| total.calls - total.cache_hits)
            .sum(),
        model_cache_hits: usage.iter().map(|total| total.cache_hits).sum(),
        tokens: usage
            .iter()
            .map(|total| total.input_tokens + total.output_tokens)
            .sum(),
        cost_usd: usage.iter().map(|total| total.cost_usd).sum(),
    })
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
