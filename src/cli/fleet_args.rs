//! The fleet's commands and flags: `serve`, `worker` and `jobs`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787", value_name = "ADDRESS:PORT")]
    pub listen: std::net::SocketAddr,
    /// The Redis server holding the queue (run it with the append-only
    /// file on). A password belongs in the environment, not on the command
    /// line; it is never printed.
    #[arg(
        long,
        env = "REPRISE_FLEET_REDIS",
        hide_env_values = true,
        default_value = "redis://127.0.0.1:6379",
        value_name = "URL"
    )]
    pub redis: String,
    /// A worker silent for this long loses its job to another.
    #[arg(long, default_value_t = 15.0, value_name = "SECONDS")]
    pub lease: f64,
    /// The largest upload (an export file, a report), in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub max_upload: usize,
    /// Keep jobs that ended (their steps and reports), workers not heard
    /// from and schedules over for this many days; 0 keeps them for ever.
    #[arg(long, default_value_t = 30.0, value_name = "DAYS")]
    pub keep_days: f64,
    /// A file of named tokens, each with its role and the SHA-256 of its
    /// token (`[[token]]` tables of name, role = user|viewer|worker,
    /// sha256): who did what is logged by name, and a worker acts only as
    /// the workers its own token registered.
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The fleet server.
    #[arg(long, env = "REPRISE_FLEET_SERVER", default_value = crate::fleet::DEFAULT_SERVER, value_name = "URL")]
    pub server: String,
    /// The pool of desktops this one serves.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub pool: String,
    /// A label jobs may ask for (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Exit after this many jobs.
    #[arg(long, value_name = "N")]
    pub max_jobs: Option<usize>,
    /// A shell command that puts this desktop back in the state the
    /// recordings start from (restarts the application, say), run before
    /// each job and bounded in time; when it fails, the job fails without
    /// any input.
    #[arg(long, value_name = "COMMAND")]
    pub reset_with: Option<String>,
    /// Exit when the server has not answered for this long.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    pub give_up: f64,
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Submit a recording as one job, or one job per row of --each.
    Submit(Box<JobsSubmitArgs>),
    /// List jobs, newest first.
    List {
        /// Only jobs in this state (queued, assigned, running, retrying,
        /// completed, unverified, failed, aborted, abandoned, cancelled, expired).
        #[arg(long, value_parser = crate::fleet::parse_state)]
        state: Option<crate::fleet::JobState>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Show a job with its events.
    Show {
        /// The job's id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
    /// List the dead letters: jobs that ended failed, aborted, abandoned or
    /// expired and were neither requeued nor discarded.
    Dead {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Run a job that ended (a dead letter, or one cancelled) again: the
    /// same recording version, parameters, pool and options, as a new job
    /// whose id is printed.
    Requeue {
        /// The job's id.
        id: String,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Go on with a job that halted at a step (failed, aborted or
    /// abandoned) from that step, as `reprise resume` does: a new job,
    /// whose id is printed, that only the worker that ran it takes (its
    /// desktop holds the half-done task, its store the run), without
    /// --reset-with. The steps done before are not done again.
    Resume {
        /// The job's id.
        id: String,
        /// Go on from this step (counted from 1; at most the halted step,
        /// or the one after a step its worker was stopped in).
        #[arg(long, value_name = "STEP")]
        from: Option<usize>,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Set a dead letter aside: it leaves `jobs dead`, its record stays
    /// (an admin's token, where the server has one).
    Discard {
        /// The job's id.
        id: String,
        #[command(flatten)]
        server: ServerArg,
    },
    /// The server's audit log, newest first: who (the name of the token)
    /// did what, when, from where, and how the server answered (an admin's
    /// token, where the server has one).
    Audit {
        /// At most this many lines.
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
    /// List the schedules (jobs submitted with --at, --in or --every).
    Schedules {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Take a schedule off: it submits no more jobs (those it made stay).
    Unschedule {
        /// The schedule's id.
        id: String,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Cancel a job: at once when queued, at its next step when running.
    Cancel {
        /// The job's id.
        id: String,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Follow a job's steps and states live until it ends; exits as its
    /// replay would: 0 completed, 12 unverified, 11 aborted or cancelled,
    /// 10 failed, abandoned or expired.
    Watch {
        /// The job's id.
        id: String,
        /// Print each event as a JSON line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerArg,
    },
}

#[derive(Debug, Args)]
pub struct ServerArg {
    /// The fleet server.
    #[arg(long, env = "REPRISE_FLEET_SERVER", default_value = crate::fleet::DEFAULT_SERVER, value_name = "URL")]
    pub server: String,
}

#[derive(Debug, Args)]
pub struct JobsSubmitArgs {
    /// A recording the server has (its id, a unique prefix, or its name),
    /// or with --upload an export file to send first.
    pub recording: String,
    /// RECORDING is a local export file: upload it, then submit it.
    #[arg(long)]
    pub upload: bool,
    /// visual, naive or vanilla (as `reprise replay --strategy`).
    #[arg(long, value_parser = crate::fleet::parse_strategy, default_value = "visual")]
    pub strategy: crate::fleet::Strategy,
    /// Scale the recorded pauses: 2 replays twice as fast; below 1 only
    /// the pauses between steps grow (a double-click stays one).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
    pub speed: f64,
    /// Attempts per step.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_retries: u32,
    /// Decide every step but inject nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// A step whose effect cannot be checked fails the job.
    #[arg(long)]
    pub require_verified: bool,
    /// The pool whose desktops may run it.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub pool: String,
    /// A label the desktop must have (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Type VALUE where the recording typed the parameter NAME (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// One job per row of this CSV or JSON file (columns: parameter names).
    #[arg(long, value_name = "FILE")]
    pub each: Option<PathBuf>,
    /// Replays of a job that fails at a step, at most.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub attempts: u32,
    /// What may happen to a job whose desktop died after input began:
    /// `never` (it ends abandoned) or `restart` (another desktop redoes it).
    #[arg(long, value_parser = crate::fleet::parse_retry, default_value = "never")]
    pub retry: crate::fleet::RetryPolicy,
    /// high, normal or low: a worker of the pool takes every waiting job
    /// of a higher priority first (first in, first out within one).
    #[arg(long, value_parser = crate::fleet::parse_priority, default_value = "normal")]
    pub priority: crate::fleet::Priority,
    /// The job ends `expired` if not done this many seconds after submission.
    #[arg(long, value_name = "SECONDS")]
    pub deadline: Option<f64>,
    /// Submit it once, at this time (RFC 3339 with its offset, as
    /// 2026-12-05T21:00:00+01:00); prints the schedule's id.
    #[arg(long, value_name = "TIME", conflicts_with_all = ["delay", "every"])]
    pub at: Option<String>,
    /// Submit it once, this long from now (90, 90s, 15m, 2h, 1d).
    #[arg(long = "in", value_name = "DURATION", value_parser = crate::fleet::parse_delay, conflicts_with = "every")]
    pub delay: Option<f64>,
    /// Submit it at every slot of this cron expression: minute hour
    /// day-of-month month day-of-week (or six fields, seconds first), or
    /// @hourly, @daily, @weekly, @monthly. A slot missed while the server
    /// was down runs once when it is back (only the latest of several).
    #[arg(long, value_name = "CRON")]
    pub every: Option<String>,
    /// The time zone --every is read in (an IANA name, as Europe/Paris).
    #[arg(long, value_name = "ZONE", requires = "every", default_value = "UTC")]
    pub time_zone: String,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub server: ServerArg,
}
