//! `GET /metrics`: the fleet's counters and histograms, in Prometheus's
//! text format.

use super::rules::{Counter, Measure};
use super::*;

/// A Prometheus histogram.
#[derive(Debug, Clone)]
pub(super) struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

const BUCKETS: [f64; 13] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS.len()],
            sum: 0.0,
            count: 0,
        }
    }
}

impl Histogram {
    fn observe(&mut self, value: f64) {
        if !value.is_finite() || value < 0.0 {
            return;
        }
        for (bound, count) in BUCKETS.iter().zip(&mut self.counts) {
            if value <= *bound {
                *count += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        use std::fmt::Write as _;
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {count}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

/// Counters since the server started.
#[derive(Debug, Default)]
pub(super) struct Metrics {
    submitted: u64,
    retries: u64,
    reclaims: u64,
    step_seconds: Histogram,
    job_seconds: Histogram,
    wait_seconds: Histogram,
}

impl Metrics {
    /// Jobs submitted.
    pub(super) fn submitted(&mut self, n_jobs: usize) {
        self.submitted += n_jobs as u64;
    }

    /// A step's seconds, counted once.
    pub(super) fn step(&mut self, seconds: f64) {
        self.step_seconds.observe(seconds);
    }

    /// What the rules measure.
    pub(super) fn observe(&mut self, measure: Measure, value: f64) {
        match measure {
            Measure::WaitSeconds => self.wait_seconds.observe(value),
            Measure::JobSeconds => self.job_seconds.observe(value),
        }
    }

    /// What the rules count.
    pub(super) fn count(&mut self, counter: Counter) {
        match counter {
            Counter::Retries => self.retries += 1,
            Counter::Reclaims => self.reclaims += 1,
        }
    }
}

/// `GET /metrics`: Prometheus text format.
pub(super) async fn metrics(State(fleet): State<Shared>) -> ApiResult<Response> {
    use std::fmt::Write as _;
    let counts = fleet.store().job_counts()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP reprise_queue_depth Jobs waiting for a worker (queued or retrying), per pool.\n# TYPE reprise_queue_depth gauge"
    );
    let mut depth: BTreeMap<&str, u64> = BTreeMap::new();
    for (pool, state, n) in &counts {
        let entry = depth.entry(pool).or_default();
        if matches!(state, JobState::Queued | JobState::Retrying) {
            *entry += n;
        }
    }
    for (pool, n) in &depth {
        let _ = writeln!(out, "reprise_queue_depth{{pool=\"{pool}\"}} {n}");
    }
    let _ = writeln!(
        out,
        "# HELP reprise_jobs Jobs by state.\n# TYPE reprise_jobs gauge"
    );
    for state in JobState::ALL {
        let n: u64 = counts
            .iter()
            .filter(|(_, s, _)| *s == state)
            .map(|(_, _, n)| n)
            .sum();
        let _ = writeln!(out, "reprise_jobs{{state=\"{}\"}} {n}", state.as_str());
    }
    let metrics = fleet.metrics();
    for (name, help, value) in [
        (
            "reprise_jobs_submitted_total",
            "Jobs submitted since the server started.",
            metrics.submitted,
        ),
        (
            "reprise_job_retries_total",
            "Attempts started again after a failed step.",
            metrics.retries,
        ),
        (
            "reprise_job_reclaims_total",
            "Jobs taken from a worker that stopped heart-beating.",
            metrics.reclaims,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    metrics.step_seconds.write(
        &mut out,
        "reprise_step_seconds",
        "How long a replayed step took.",
    );
    metrics.job_seconds.write(
        &mut out,
        "reprise_job_seconds",
        "From a job's first start to its end.",
    );
    metrics.wait_seconds.write(
        &mut out,
        "reprise_job_wait_seconds",
        "From submission to a worker's start.",
    );
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_counts_each_value_in_every_bucket_above_it() {
        let mut histogram = Histogram::default();
        histogram.observe(0.3);
        histogram.observe(7.0);
        histogram.observe(f64::NAN);
        let mut out = String::new();
        histogram.write(&mut out, "x", "help");
        assert!(out.contains("x_bucket{le=\"0.25\"} 0\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.5\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"10\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 2\n"), "{out}");
        assert!(out.contains("x_count 2\n"), "{out}");
    }
}
