//! The fleet's commands: `serve`, `worker` and `jobs`.

use anyhow::{Result, bail};

use super::replay::parse_set;
use crate::replay::stopped::StopKind;
use crate::settings::errors::UsageError;

/// `reprise serve`.
pub fn serve(store: &std::path::Path, args: &crate::cli::ServeArgs) -> Result<()> {
    let lease = crate::settings::durations::seconds_setting("--lease", args.lease, false)?;
    if lease < std::time::Duration::from_secs(1) {
        bail!(UsageError("--lease must be at least 1 second".into()));
    }
    if args.max_upload == 0 || args.max_upload > 4096 {
        bail!(UsageError("--max-upload must be from 1 to 4096 MiB".into()));
    }
    if !(args.keep_days.is_finite() && (0.0..=36_500.0).contains(&args.keep_days)) {
        bail!(UsageError(
            "--keep-days must be from 0 (for ever) to 36500".into()
        ));
    }
    let keep = (args.keep_days > 0.0)
        .then(|| std::time::Duration::from_secs_f64(args.keep_days * 86_400.0));
    crate::fleet::server::serve(crate::fleet::server::ServeOptions {
        listen: args.listen,
        redis: args.redis.clone(),
        store: store.to_owned(),
        lease,
        max_upload: args.max_upload * 1024 * 1024,
        keep,
        tokens: args.tokens.clone(),
    })
}

/// `reprise worker`.
pub fn worker(
    store: &std::path::Path,
    config: Option<&std::path::Path>,
    args: &crate::cli::WorkerArgs,
) -> Result<()> {
    let labels = crate::fleet::client::pairs(&args.label, crate::fleet::parse_label)?;
    let give_up = crate::settings::durations::seconds_setting("--give-up", args.give_up, false)?;
    crate::fleet::worker::run(crate::fleet::worker::WorkerOptions {
        server: args.server.clone(),
        pool: args.pool.clone(),
        labels,
        store: store.to_owned(),
        config: config.map(std::path::Path::to_path_buf),
        max_jobs: args.max_jobs,
        give_up,
        reset_with: args.reset_with.clone(),
    })
}

/// `reprise jobs submit`.
fn submit(args: &crate::cli::JobsSubmitArgs) -> Result<()> {
    use crate::fleet::client::{self, Api};
    let api = Api::new(&args.server.server)?;
    let labels = client::pairs(&args.label, crate::fleet::parse_label)?;
    let set = client::pairs(&args.set, parse_set)?;
    let rows = match &args.each {
        None => None,
        Some(path) => {
            let table = crate::replay::rows::read_rows(path)?;
            Some(
                table
                    .rows
                    .iter()
                    .map(|row| {
                        table
                            .columns
                            .iter()
                            .cloned()
                            .zip(row.iter().cloned())
                            .collect()
                    })
                    .collect(),
            )
        }
    };
    let request = crate::fleet::SubmitRequest {
        recording: args.recording.clone(),
        options: crate::fleet::JobOptions {
            strategy: args.strategy,
            speed: args.speed,
            max_retries: args.max_retries,
            dry_run: args.dry_run,
            require_verified: args.require_verified,
        },
        pool: args.pool.clone(),
        labels,
        set,
        rows,
        attempts: args.attempts,
        retry: args.retry,
        priority: args.priority,
        deadline_seconds: args.deadline,
        at: args.at.clone(),
        delay_seconds: args.delay,
        every: args.every.clone(),
        time_zone: args.every.is_some().then(|| args.time_zone.clone()),
    };
    client::submit(
        &api,
        client::Submit {
            request,
            upload: args.upload.then(|| args.recording.clone().into()),
            json: args.json,
        },
    )
}

/// `reprise jobs …`.
pub fn jobs(command: crate::cli::JobsCommand) -> Result<()> {
    use crate::cli::JobsCommand;
    use crate::fleet::client::{self, Api, dead::Settle};
    match command {
        JobsCommand::Submit(args) => submit(&args),
        JobsCommand::List {
            state,
            json,
            server,
        } => client::list(&Api::new(&server.server)?, state, json),
        JobsCommand::Show { id, json, server } => {
            client::show(&Api::new(&server.server)?, &id, json)
        }
        JobsCommand::Dead { json, server } => client::dead::list(&Api::new(&server.server)?, json),
        JobsCommand::Requeue { id, server } => {
            client::dead::settle(&Api::new(&server.server)?, &id, Settle::Requeue)
        }
        JobsCommand::Resume { id, from, server } => {
            client::dead::settle(&Api::new(&server.server)?, &id, Settle::Resume { from })
        }
        JobsCommand::Discard { id, server } => {
            client::dead::settle(&Api::new(&server.server)?, &id, Settle::Discard)
        }
        JobsCommand::Audit {
            limit,
            json,
            server,
        } => client::audit::list(&Api::new(&server.server)?, limit, json),
        JobsCommand::Schedules { json, server } => {
            client::schedules::list(&Api::new(&server.server)?, json)
        }
        JobsCommand::Unschedule { id, server } => {
            client::schedules::remove(&Api::new(&server.server)?, &id)
        }
        JobsCommand::Cancel { id, server } => client::cancel(&Api::new(&server.server)?, &id),
        JobsCommand::Watch { id, json, server } => {
            let (state, reason) = client::watch(&Api::new(&server.server)?, &id, json)?;
            use crate::fleet::JobState;
            let kind = match state {
                JobState::Completed => return Ok(()),
                JobState::Unverified => StopKind::Unverified,
                JobState::Aborted | JobState::Cancelled => StopKind::Aborted,
                _ => StopKind::Failed,
            };
            Err(crate::fleet::client::JobEnded {
                id,
                state: state.as_str(),
                reason,
                kind,
            }
            .into())
        }
    }
}
