//! `reprise worker`: one desktop of the fleet. It registers, pulls jobs of
//! its pool whose labels it has (one at a time: a desktop has one
//! pointer), keeps a copy of each recording in its own store, and replays
//! each exactly as `reprise replay` does, in this process: the same
//! strategies, the abort keys and corners, nothing left pressed.
//!
//! Around the replay: before its first input the worker asks the server
//! (`begin`), which records that input is about to be injected (so a job
//! whose worker dies after this point is never silently run twice); every
//! step is reported as it ends, in order, by a reporter thread that also
//! heart-beats and that retries a report while the server is away; an
//! answer that says stop (cancelled, expired, taken over) aborts the
//! replay at its next check, within the step.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use reqwest::Method;

use super::client::{Answered, Api, CallError};
use super::{Answer, Assignment, Finish, Job, Register, Report, ReportKind};
use crate::replay::{Flag, Hooks, ReplayRequest};
use crate::store::{Store, StoreError};
use ending::{Ending, Stops, ending};
use fence::Fence;

mod ending;
mod fence;
mod identity;
mod screen;

/// `reprise worker`'s settings.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub server: String,
    pub pool: String,
    pub labels: BTreeMap<String, String>,
    /// This desktop's own store (its copies of recordings, its runs).
    pub store: PathBuf,
    pub config: Option<PathBuf>,
    /// Stop after this many jobs.
    pub max_jobs: Option<usize>,
    /// Stop when the server has not answered for this long.
    pub give_up: Duration,
    /// Run before each job (`--reset-with`).
    pub reset_with: Option<String>,
}

/// How long one report is tried before the worker gives it up.
const REPORT_PATIENCE: Duration = Duration::from_secs(300);
/// How long `begin` is tried: past it the job is given back, untouched.
const BEGIN_PATIENCE: Duration = Duration::from_secs(30);
const CALL: Duration = Duration::from_secs(30);

/// Runs the worker until SIGTERM (or SIGINT, SIGHUP): the job at hand
/// stops at its next check, is reported, and the worker exits.
pub fn run(options: WorkerOptions) -> anyhow::Result<()> {
    let api = Arc::new(Api::new(&options.server)?);
    let stop: Flag = Default::default();
    let _signals =
        crate::platform::signals::StopSignals::set(&stop).context("install the signal handlers")?;
    let mut store = Store::open(&options.store)?;
    let mut identity = identity::Identity::claim(&options.store)?;
    let register = |known: Option<String>| register(&api, &stop, &options, known);
    let mut id = register(identity.known.clone())?;
    identity.keep(&id)?;
    let mut registrations = 1;
    eprintln!(
        "reprise worker {id}: pool {:?} at {}, display {}; waiting for jobs",
        options.pool,
        api.base(),
        std::env::var("DISPLAY").unwrap_or_else(|_| "(none)".into())
    );
    let mut done = 0;
    let mut silent_since: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) && options.max_jobs.is_none_or(|max| done < max) {
        let asked = Instant::now();
        let pulled: Result<Answered<Assignment>, CallError> = api.call(
            Method::POST,
            &format!("/api/workers/{id}/pull?wait=5"),
            None::<&()>,
            Duration::from_secs(20),
        );
        match pulled {
            Ok(Answered {
                body: Some(assignment),
                ..
            }) => {
                silent_since = None;
                let assigned = Assigned { assignment, asked };
                run_job(&api, &mut store, &id, &options, assigned, &stop)?;
                done += 1;
            }
            Ok(_) => silent_since = None,
            // A server that lost its store (or was replaced) no longer
            // knows this worker: register again, a few times at most.
            Err(err) if err.status() == Some(404) && registrations < 3 => {
                tracing::warn!("the server does not know this worker ({err}); registering again");
                id = register(Some(id))?;
                identity.keep(&id)?;
                registrations += 1;
            }
            Err(err) if err.is_transient() => {
                let since = *silent_since.get_or_insert_with(Instant::now);
                if since.elapsed() > options.give_up {
                    return Err(err).context(format!(
                        "the server has not answered for {:.0} s",
                        options.give_up.as_secs_f64()
                    ));
                }
                tracing::warn!("pull: {err}");
                sleep_unless(&stop, Duration::from_secs(1));
            }
            Err(err) => return Err(err).context("pull a job"),
        }
    }
    leave(&api, &id);
    eprintln!("reprise worker {id}: stopped after {done} job(s)");
    Ok(())
}

/// The server's answer to a registration.
#[derive(serde::Deserialize)]
struct Registered {
    id: String,
}

/// Registers with the fleet server (patiently, up to `give_up`), as the
/// worker `known` where this desktop had one: the worker's id.
fn register(
    api: &Api,
    stop: &Flag,
    options: &WorkerOptions,
    known: Option<String>,
) -> anyhow::Result<String> {
    let register = Register {
        host: host_name(),
        pool: options.pool.clone(),
        labels: options.labels.clone(),
        id: known,
    };
    let registered: Option<Registered> = patiently(stop, options.give_up, || {
        api.call(Method::POST, "/api/workers", Some(&register), CALL)
    })
    .context("register with the fleet server")?
    .body;
    Ok(registered
        .ok_or_else(|| CallError::BadAnswer("no worker id in the answer".into()))?
        .id)
}

/// Gone from the workers' list at once (not silent after a lease).
fn leave(api: &Api, id: &str) {
    let _ = api.call::<serde_json::Value>(
        Method::POST,
        &format!("/api/workers/{id}/leave"),
        None::<&()>,
        Duration::from_secs(5),
    );
}

/// Tries `call` while it fails for want of an answer, for at most
/// `patience` (and not once the worker is stopping).
fn patiently<T>(
    stop: &Flag,
    patience: Duration,
    mut call: impl FnMut() -> Result<T, CallError>,
) -> Result<T, CallError> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(250);
    loop {
        match call() {
            Err(err)
                if err.is_transient()
                    && started.elapsed() < patience
                    && !stop.load(Ordering::SeqCst) =>
            {
                tracing::debug!("{err}; trying again");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(5));
            }
            other => return other,
        }
    }
}

fn sleep_unless(stop: &Flag, duration: Duration) {
    let until = Instant::now() + duration;
    while Instant::now() < until && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "desktop".to_owned())
}

/// The recording in this desktop's store, with the version the job
/// replays: fetched from the server when it lacks either.
fn ensure_recording(
    api: &Api,
    store: &mut Store,
    recording_id: &str,
    version: Option<u32>,
) -> anyhow::Result<()> {
    match store.resolve(recording_id) {
        Ok(_)
            if version.is_none_or(|version| {
                store
                    .latest_version(recording_id)
                    .is_ok_and(|have| have >= version)
            }) =>
        {
            return Ok(());
        }
        Ok(_) | Err(StoreError::NotFound(_)) => {}
        Err(err) => return Err(err.into()),
    }
    let bytes = api
        .get_bytes(
            &format!("/api/recordings/{recording_id}/export"),
            Duration::from_secs(300),
        )
        .with_context(|| format!("fetch recording {recording_id}"))?;
    let archive = crate::store::archive::decode(&bytes)
        .with_context(|| format!("the server's export of recording {recording_id}"))?;
    if archive.bundle.recording.id != recording_id {
        anyhow::bail!(
            "the server sent recording {} for {recording_id}",
            archive.bundle.recording.id
        );
    }
    match store.import(&archive.bundle, &archive.images) {
        Ok(()) | Err(StoreError::AlreadyExists(_)) => {}
        Err(err) => return Err(err.into()),
    }
    store.import_versions(recording_id, &archive.versions)?;
    Ok(())
}

/// A job the server assigned, in answer to a pull sent at `asked`.
struct Assigned {
    assignment: Assignment,
    asked: Instant,
}

/// What the threads of one attempt share.
struct Attempt {
    api: Arc<Api>,
    worker: String,
    job: Job,
    /// The server said stop (cancelled, expired, taken over).
    told_to_stop: Flag,
    stop_reason: Arc<Mutex<Option<String>>>,
    /// Closed when the server has not answered for most of the lease.
    fence: Fence,
}

impl Attempt {
    /// Whether the replay must stop at its check: the server said so, or
    /// the fence closed.
    fn must_stop(&self) -> bool {
        self.told_to_stop.load(Ordering::SeqCst) || self.fence.closed(Instant::now())
    }

    /// Reports `what` on this attempt, tried while the server is away (at
    /// most `patience`, not once `stop` is raised); an answer that says go
    /// moves the fence on from when the answered try was sent.
    fn report(
        &self,
        what: ReportKind,
        stop: &Flag,
        patience: Duration,
        timeout: Duration,
    ) -> Result<Answered<Answer>, CallError> {
        let report = Report {
            worker: self.worker.clone(),
            attempt: self.job.attempt,
            what,
        };
        let path = format!("/api/jobs/{}/progress", self.job.id);
        let sent = std::cell::Cell::new(Instant::now());
        let answer: Result<Answered<Answer>, CallError> = patiently(stop, patience, || {
            sent.set(Instant::now());
            self.api.call(Method::POST, &path, Some(&report), timeout)
        });
        if let Ok(Answered {
            body: Some(Answer { go: true, .. }),
            ..
        }) = &answer
        {
            self.fence.acknowledged(sent.get());
        }
        answer
    }
}

/// A job's replay, reported step by step, and its end.
fn run_job(
    api: &Arc<Api>,
    store: &mut Store,
    worker: &str,
    options: &WorkerOptions,
    assigned: Assigned,
    stop: &Flag,
) -> anyhow::Result<()> {
    let Assigned { assignment, asked } = assigned;
    let job = assignment.job;
    let lease = Duration::from_secs_f64(assignment.lease_seconds.max(0.0));
    eprintln!(
        "job {}: attempt {} of recording {}",
        job.id, job.attempt, job.recording_id
    );
    let beat = Duration::from_secs_f64((assignment.lease_seconds / 4.0).clamp(0.2, 5.0));
    let attempt = Arc::new(Attempt {
        api: Arc::clone(api),
        worker: worker.to_owned(),
        job: job.clone(),
        told_to_stop: Default::default(),
        stop_reason: Default::default(),
        fence: Fence::new(lease, asked),
    });
    let (reports, queue) = mpsc::channel::<ReportKind>();
    let reporter = {
        let attempt = Arc::clone(&attempt);
        std::thread::Builder::new()
            .name("reporter".into())
            .spawn(move || report_loop(&attempt, queue, beat))
            .context("start the reporter thread")?
    };
    // A resumed job goes on with the desktop as its halt left it.
    let reset_with = options
        .reset_with
        .as_deref()
        .filter(|_| job.spec.resume.is_none());
    let result = ensure_recording(api, store, &job.recording_id, job.spec.version)
        .and_then(|()| {
            crate::replay::reset::reset(reset_with).context("put the desktop back (--reset-with)")
        })
        .and_then(|()| replay_job(&attempt, store, options, &reports, stop));
    let stops = Stops {
        worker: worker.to_owned(),
        fenced: attempt.fence.reason(),
        signalled: stop.load(Ordering::SeqCst),
        told: attempt.told_to_stop.load(Ordering::SeqCst),
        told_reason: attempt
            .stop_reason
            .lock()
            .ok()
            .and_then(|reason| reason.clone()),
    };
    let Ending {
        end,
        reason,
        outcome,
        run_id,
    } = ending(result, &stops, job.spec.options.dry_run);
    let report = run_id
        .as_deref()
        .and_then(|run| crate::present::report::run_report(store, run).ok());
    eprintln!("job {}: {}", job.id, crate::present::terminal_safe(&reason));
    let _ = reports.send(ReportKind::Finish {
        end,
        reason,
        outcome,
        run_id,
        report,
    });
    drop(reports);
    if reporter.join().is_err() {
        tracing::error!("the reporter thread panicked");
    }
    Ok(())
}

fn replay_job(
    attempt: &Arc<Attempt>,
    store: &mut Store,
    options: &WorkerOptions,
    reports: &mpsc::Sender<ReportKind>,
    stop: &Flag,
) -> anyhow::Result<crate::replay::ReplayResult> {
    let quiet = {
        let attempt = Arc::clone(attempt);
        Arc::new(move || attempt.must_stop())
    };
    let on_screen = screen::sender(attempt.api.base(), &attempt.worker, quiet)?;
    // Once the request (and the hook in it) is gone, the sender ends.
    replay_request(attempt, store, options, (reports, on_screen), stop)
        .and_then(|request| crate::replay::replay(store, &request))
}

/// The replay a job asks for, its hooks reporting to the server.
fn replay_request(
    attempt: &Arc<Attempt>,
    store: &Store,
    options: &WorkerOptions,
    (reports, on_screen): (&mpsc::Sender<ReportKind>, crate::replay::OnScreen),
    stop: &Flag,
) -> anyhow::Result<ReplayRequest> {
    let job = &attempt.job;
    let spec = &job.spec;
    let before_input = begin_hook(attempt, stop);
    let on_step = {
        let reports = Mutex::new(reports.clone());
        Arc::new(move |step: &crate::replay::StepLine| {
            let report = ReportKind::Step {
                step: step.step as u32,
                seconds: step.seconds,
                record: serde_json::to_value(step).expect("a step line serializes"),
                at: Some(crate::fleet::now()),
            };
            if let Ok(reports) = reports.lock() {
                let _ = reports.send(report);
            }
        }) as crate::replay::OnStep
    };
    let request = ReplayRequest {
        recording: match spec.version {
            Some(version) => format!("{}@{version}", job.recording_id),
            None => job.recording_id.clone(),
        },
        strategy: spec.options.strategy.into(),
        rungs: Default::default(),
        speed: spec.options.speed,
        options: reprise_strategies::ReplayOptions {
            max_retries: spec.options.max_retries,
            dry_run: spec.options.dry_run,
            require_verified: spec.options.require_verified,
            ..Default::default()
        },
        replacements: Vec::new(),
        instructions: None,
        config: options.config.clone(),
        describer: crate::replay::DescriberChoice::Offline,
        release_held: false,
        launch: false,
        progress: crate::replay::Progress {
            banner: Some(format!(
                "job {}: replaying; move the pointer into a screen corner or press {} to abort",
                job.id,
                crate::replay::ABORT_KEYS
            )),
            lines: false,
            json: false,
        },
        secrets_file: None,
        parameters: spec
            .parameters
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        secret_overrides: Default::default(),
        batch: None,
        resume: resumed_run(store, job)?,
        hooks: Hooks {
            before_input: Some(before_input),
            on_step: Some(on_step),
            on_screen: Some(on_screen),
            stop: Some({
                let attempt = Arc::clone(attempt);
                Arc::new(move || attempt.must_stop())
            }),
        },
    };
    Ok(request)
}

/// The halted run a resumed job goes on with, as this worker's store
/// holds it, and the step it goes on from (`reprise resume`'s rules).
fn resumed_run(
    store: &Store,
    job: &crate::fleet::Job,
) -> anyhow::Result<Option<crate::replay::resume::Resume>> {
    let Some(resume) = &job.spec.resume else {
        return Ok(None);
    };
    let (run, steps) = store.load_run(&resume.run).with_context(|| {
        format!(
            "go on with run {}: this worker's store does not hold it",
            resume.run
        )
    })?;
    Ok(Some(crate::replay::resume::plan(
        &run,
        &steps,
        resume.from,
    )?))
}

/// Asked just before the first input: the server records that input is
/// about to be injected, and says go (the fence counts its answer).
fn begin_hook(attempt: &Arc<Attempt>, stop: &Flag) -> crate::replay::BeforeInput {
    let stop = Arc::clone(stop);
    let attempt = Arc::clone(attempt);
    Arc::new(move || {
        if stop.load(Ordering::SeqCst) || attempt.must_stop() {
            return false;
        }
        match attempt.report(ReportKind::Begin, &stop, BEGIN_PATIENCE, CALL) {
            Ok(Answered {
                body: Some(answer), ..
            }) if answer.go => !attempt.must_stop(),
            Ok(_) => {
                attempt.told_to_stop.store(true, Ordering::SeqCst);
                false
            }
            Err(err) => {
                tracing::warn!("begin: {err}");
                false
            }
        }
    }) as crate::replay::BeforeInput
}

/// The reporter thread: sends reports in order (each tried while the
/// server is away, for at most five minutes), heart-beats in between, and
/// raises `told_to_stop` when an answer says stop.
fn report_loop(attempt: &Attempt, queue: mpsc::Receiver<ReportKind>, beat: Duration) {
    let (told_to_stop, stop_reason) = (&attempt.told_to_stop, &attempt.stop_reason);
    let never: Flag = Default::default();
    let mut last_beat = Instant::now();
    let send = |what: ReportKind, patience: Duration| {
        let finish = matches!(what, ReportKind::Finish { .. });
        // A heartbeat lost in a hung connection is given up well within
        // the lease, so that the next one goes on a fresh connection.
        let timeout = match what {
            ReportKind::Heartbeat => {
                (attempt.fence.margin() * 2).clamp(Duration::from_secs(1), CALL)
            }
            _ => CALL,
        };
        match attempt.report(what, &never, patience, timeout) {
            Ok(Answered {
                body: Some(answer), ..
            }) if !answer.go && !finish => {
                if let Ok(mut reason) = stop_reason.lock() {
                    reason.get_or_insert(answer.reason.unwrap_or_else(|| "stopped".into()));
                }
                told_to_stop.store(true, Ordering::SeqCst);
            }
            Ok(_) => {}
            Err(err) if err.status() == Some(409) => {
                // The job is no longer this attempt's: stop acting on it.
                if let Ok(mut reason) = stop_reason.lock() {
                    reason.get_or_insert(err.to_string());
                }
                told_to_stop.store(true, Ordering::SeqCst);
            }
            Err(err) => tracing::warn!("report to the server: {err}"),
        }
    };
    loop {
        match queue.recv_timeout(beat.saturating_sub(last_beat.elapsed())) {
            Ok(what) => send(what, REPORT_PATIENCE),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if last_beat.elapsed() >= beat {
            last_beat = Instant::now();
            send(ReportKind::Heartbeat, Duration::ZERO);
        }
    }
}
