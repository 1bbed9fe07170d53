//! The rules for a worker's reports: a heartbeat, the start of its input,
//! a step, the end of its attempt; and a report of an attempt that is no
//! longer current.

use super::*;

impl Rule<'_> {
    /// A worker's heartbeat, the start of its input, a step, or the end of
    /// its attempt.
    pub(super) fn reported(&mut self, report: &Report) -> Reply {
        let current = self.job.worker.as_deref() == Some(report.worker.as_str())
            && self.job.attempt == report.attempt
            && matches!(self.job.state, JobState::Assigned | JobState::Running);
        if !current {
            // A report of an attempt that is no longer current: the job was
            // taken over, or ended. It changes nothing, but a step that
            // worker did (late: it was cut off) is kept in that attempt's
            // history, so the record shows what its desktop received.
            if let ReportKind::Step {
                step, record, at, ..
            } = &report.what
                && self.is_earlier_attempt_of(report)
            {
                self.push(Effect::Save {
                    note: Some(Note::LateStep {
                        attempt: report.attempt,
                        worker: report.worker.clone(),
                        step: *step,
                        record: record.clone(),
                        at: clock::step_time(at.as_deref(), None, self.now),
                    }),
                    step_seconds: None,
                });
            }
            return Reply::NotCurrent(Answer {
                go: false,
                reason: Some(format!(
                    "job {} is no longer this worker's attempt (it is {})",
                    self.job.id,
                    self.job.state.as_str()
                )),
                state: Some(self.job.state),
            });
        }
        // Any report is a sign of life.
        self.push(Effect::Touch(report.worker.clone()));
        let stop_reason = if self.job.cancel_requested {
            Some("cancelled".to_owned())
        } else if past(self.job.spec.deadline.as_deref(), self.now) {
            Some("its deadline passed".to_owned())
        } else {
            None
        };
        self.report_of_current_attempt(report, stop_reason)
    }

    /// Whether a report that is not current is of an attempt the job had:
    /// an earlier one, or this one ended (its worker's).
    fn is_earlier_attempt_of(&self, report: &Report) -> bool {
        (1..self.job.attempt).contains(&report.attempt)
            || (report.attempt == self.job.attempt
                && self.job.state.is_final()
                && self.job.worker.as_deref() == Some(report.worker.as_str()))
    }

    /// A report of the current attempt, told to go on or to stop (because
    /// of `stop_reason`).
    fn report_of_current_attempt(&mut self, report: &Report, stop_reason: Option<String>) -> Reply {
        let state = self.job.state;
        let answer = |go: bool| Answer {
            go,
            reason: if go { None } else { stop_reason.clone() },
            state: Some(state),
        };
        match &report.what {
            ReportKind::Heartbeat => {
                if let Some(entry) = self.job.entry.clone() {
                    self.push(Effect::Refresh {
                        owner: report.worker.clone(),
                        entry,
                    });
                }
                Reply::Go(answer(stop_reason.is_none()))
            }
            ReportKind::Begin if stop_reason.is_some() => Reply::Go(answer(false)),
            ReportKind::Begin => {
                self.job.injected = true;
                self.job.state = JobState::Running;
                self.save_state(JobState::Running, None, Some(report.worker.clone()));
                Reply::Go(Answer {
                    go: true,
                    reason: None,
                    state: Some(JobState::Running),
                })
            }
            ReportKind::Step {
                step,
                record,
                seconds,
                at,
            } => {
                let at = clock::step_time(at.as_deref(), self.job.started.as_deref(), self.now);
                self.push(Effect::Save {
                    note: Some(Note::Step {
                        step: *step,
                        record: record.clone(),
                        at,
                    }),
                    step_seconds: Some(*seconds),
                });
                Reply::Go(answer(stop_reason.is_none()))
            }
            ReportKind::Finish {
                end,
                reason,
                outcome,
                run_id,
                report: html,
            } => {
                self.job.outcome = outcome.clone();
                self.job.run_id = run_id.clone().or(self.job.run_id.take());
                if let Some(html) = html {
                    self.push(Effect::KeepReport(html.clone()));
                }
                self.finish(*end, reason.clone(), stop_reason);
                Reply::Go(Answer {
                    go: false,
                    reason: self.job.reason.clone(),
                    state: Some(self.job.state),
                })
            }
        }
    }

    /// An attempt's end: the job's next state.
    fn finish(&mut self, end: Finish, reason: String, stop_reason: Option<String>) {
        let worker = self.job.worker.clone();
        let old_entry = self.job.entry.clone();
        match end {
            Finish::Completed => self.end(JobState::Completed, reason),
            Finish::Unverified => self.end(JobState::Unverified, reason),
            Finish::Failed if self.job.attempt < self.job.spec.attempts => {
                // Backoff: 1 s, 2 s, 4 s … at most a minute.
                let backoff = 2f64
                    .powi(self.job.attempt as i32 - 1)
                    .min(MAX_BACKOFF_SECONDS);
                self.job.state = JobState::Retrying;
                self.job.retry_at = Some(stamp(
                    self.now + chrono::Duration::milliseconds((backoff * 1000.0) as i64),
                ));
                self.job.reason = Some(reason.clone());
                self.push(Effect::Count(Counter::Retries));
                let next = self.job.attempt + 1;
                self.save_state(
                    JobState::Retrying,
                    Some(format!("{reason}; attempt {next} in {backoff:.0} s")),
                    worker.clone(),
                );
                self.free(worker);
                if let Some(entry) = &old_entry {
                    self.push(Effect::Ack(entry.clone()));
                }
            }
            Finish::Failed => {
                self.end(JobState::Failed, reason.clone());
                self.push(Effect::DeadLetter(reason));
            }
            Finish::Aborted | Finish::Stopped => {
                let state = match (&stop_reason, self.job.cancel_requested) {
                    (_, true) => JobState::Cancelled,
                    (Some(_), false) => JobState::Expired,
                    (None, false) => JobState::Aborted,
                };
                self.end(state, stop_reason.unwrap_or(reason));
            }
            Finish::Released if self.job.injected && self.job.spec.retry == RetryPolicy::Never => {
                self.end(
                    JobState::Aborted,
                    format!("{reason} (after input was injected: not run again)"),
                );
            }
            Finish::Interrupted if !self.may_run_again() => {
                self.abandon(reason);
                self.push(Effect::DeadLetter(
                    self.job.reason.clone().unwrap_or_default(),
                ));
            }
            Finish::Released | Finish::Interrupted => {
                // Back in the queue for another worker: a new entry first,
                // then the job points at it, then the old one is acknowledged.
                self.push(Effect::Enqueue);
                if !self.job.injected {
                    self.job.attempt = self.job.attempt.saturating_sub(1);
                }
                self.job.state = JobState::Queued;
                self.job.worker = None;
                self.job.injected = false;
                self.save_state(JobState::Queued, Some(reason), worker.clone());
                self.free(worker);
                if let Some(entry) = &old_entry {
                    self.push(Effect::Ack(entry.clone()));
                }
            }
        }
        // Acknowledged only now that the result is stored (a job put back or
        // retried has acknowledged its entry above).
        if self.job.state.is_final()
            && let Some(entry) = old_entry
        {
            self.push(Effect::Ack(entry));
        }
    }
}
