//! A worker's fence: it stops injecting before the server may give its job
//! to another desktop. The server holds a job for its worker for a lease
//! counted from the last report it received; a report's receipt is never
//! earlier than its sending, so a lease runs at least until the sending of
//! the latest report the server acknowledged, plus the lease. The worker
//! closes its fence a margin before that: cut off from the server (a
//! network that black-holes its packets), it stops at its next check, and
//! no input of a job reaches a desktop once another may have it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// When the latest acknowledged report was sent, and whether the fence
/// has closed (and why).
#[derive(Debug)]
pub(super) struct Fence {
    lease: Duration,
    acked: Mutex<Instant>,
    closed: Mutex<Option<String>>,
}

impl Fence {
    /// A fence for a job assigned in answer to a request sent at `asked`
    /// (the server delivered the job, and began its lease, after that).
    pub fn new(lease: Duration, asked: Instant) -> Fence {
        Fence {
            lease,
            acked: Mutex::new(asked),
            closed: Mutex::new(None),
        }
    }

    /// How long before the server's earliest give-up the fence closes:
    /// a quarter of the lease (at least 250 ms, at most half of it),
    /// room for the check's slice and an input in flight.
    pub fn margin(&self) -> Duration {
        (self.lease / 4)
            .max(Duration::from_millis(250))
            .min(self.lease / 2)
    }

    /// The server answered a report sent at `sent`: the lease runs on from
    /// there (an answer to an older report moves nothing back).
    pub fn acknowledged(&self, sent: Instant) {
        if let Ok(mut acked) = self.acked.lock()
            && sent > *acked
        {
            *acked = sent;
        }
    }

    /// Whether the worker must stop acting on the job at `now`: the
    /// latest acknowledged report is older than the lease less the margin.
    /// Once closed it stays closed (a late answer does not reopen it: the
    /// server may have given the job up meanwhile).
    pub fn closed(&self, now: Instant) -> bool {
        let Ok(mut closed) = self.closed.lock() else {
            return true;
        };
        if closed.is_some() {
            return true;
        }
        let acked = *self.acked.lock().unwrap_or_else(|err| err.into_inner());
        let silent = now.saturating_duration_since(acked);
        if silent < self.lease.saturating_sub(self.margin()) {
            return false;
        }
        *closed = Some(format!(
            "no answer from the server for {:.1} s of its {:.1} s lease, so the worker stopped itself before the server could give the job to another",
            silent.as_secs_f64(),
            self.lease.as_secs_f64()
        ));
        true
    }

    /// Why the fence closed, if it has.
    pub fn reason(&self) -> Option<String> {
        self.closed.lock().ok().and_then(|closed| closed.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(8);

    #[test]
    fn the_fence_closes_a_margin_before_the_lease_from_the_last_acknowledged_sending() {
        let start = Instant::now();
        let fence = Fence::new(LEASE, start);
        assert_eq!(fence.margin(), Duration::from_secs(2));
        assert!(!fence.closed(start + Duration::from_millis(5_999)));
        fence.acknowledged(start + Duration::from_secs(3));
        // An older report's late answer moves nothing back.
        fence.acknowledged(start + Duration::from_secs(1));
        assert!(!fence.closed(start + Duration::from_millis(8_999)));
        assert_eq!(fence.reason(), None);
        assert!(fence.closed(start + Duration::from_secs(9)));
        let reason = fence.reason().unwrap();
        assert!(reason.contains("6.0 s of its 8.0 s lease"), "{reason}");
    }

    #[test]
    fn a_closed_fence_stays_closed_whatever_answers_later() {
        let start = Instant::now();
        let fence = Fence::new(LEASE, start);
        assert!(fence.closed(start + Duration::from_secs(7)));
        fence.acknowledged(start + Duration::from_secs(7));
        assert!(fence.closed(start + Duration::from_secs(7)));
    }

    #[test]
    fn the_margin_is_bounded_for_short_and_long_leases() {
        let now = Instant::now();
        let margin = |lease: f64| Fence::new(Duration::from_secs_f64(lease), now).margin();
        assert_eq!(margin(0.4), Duration::from_millis(200));
        assert_eq!(margin(2.0), Duration::from_millis(500));
        assert_eq!(margin(30.0), Duration::from_millis(7_500));
    }
}
