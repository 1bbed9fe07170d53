//! `reprise jobs dead`, `jobs requeue ID` and `jobs discard ID`.

use super::{Api, path_part};
use crate::fleet::Job;
use crate::present::terminal_safe;

/// `reprise jobs dead`: the dead letters, last ended first.
pub fn list(api: &Api, json: bool) -> anyhow::Result<()> {
    let Some(jobs) = api.listed::<Job>("/api/dead", "list the dead letters", json)? else {
        return Ok(());
    };
    println!(
        "{:<36}  {:<10}  {:<24}  {:<10}  reason",
        "job", "state", "ended", "pool"
    );
    for job in &jobs {
        println!(
            "{:<36}  {:<10}  {:<24}  {:<10}  {}",
            job.id,
            job.state.as_str(),
            job.ended.as_deref().unwrap_or("-"),
            terminal_safe(&job.pool),
            terminal_safe(job.reason.as_deref().unwrap_or(""))
        );
    }
    eprintln!(
        "{} (jobs requeue ID runs one again, jobs discard ID sets it aside)",
        crate::present::plural(jobs.len(), "dead letter")
    );
    Ok(())
}

/// What becomes of a job that ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Run again from its first step, as a new job.
    Requeue,
    /// Gone on with from its halted step (or `from`, counted from 1), as a
    /// new job on its desktop.
    Resume { from: Option<usize> },
    /// Set aside.
    Discard,
}

/// `reprise jobs requeue ID`, `jobs resume ID [--from N]` and `jobs
/// discard ID`.
pub fn settle(api: &Api, id: &str, how: Settle) -> anyhow::Result<()> {
    let (verb, body) = match how {
        Settle::Requeue => ("requeue", None),
        Settle::Resume { from } => ("resume", Some(crate::fleet::ResumeRequest { from })),
        Settle::Discard => ("discard", None),
    };
    let path = format!("/api/jobs/{}/{verb}", path_part(id));
    let doing = format!("{verb} job {id}");
    let job: Job = api.acted(reqwest::Method::POST, &path, body.as_ref(), doing, "job")?;
    match how {
        Settle::Discard => eprintln!("job {} discarded from the dead letters", job.id),
        Settle::Requeue => {
            println!("{}", job.id);
            eprintln!("job {id} requeued as {}", job.id);
        }
        Settle::Resume { .. } => {
            println!("{}", job.id);
            let worker = job
                .spec
                .resume
                .as_ref()
                .map_or("-", |resume| &resume.worker);
            eprintln!(
                "job {id} resumed as {}: it goes on with its run on the desktop of worker {worker}",
                job.id
            );
        }
    }
    Ok(())
}
