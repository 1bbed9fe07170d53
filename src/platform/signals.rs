//! The signals that stop a long command (a recording, a replay, a worker):
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed), each setting a
//! flag the command polls, so it stops at a point of its choosing with
//! nothing held. The only place that installs signal handlers.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The stop signals' handlers, setting a flag; removed when dropped (a
/// replay inside the fleet's worker leaves none behind).
#[derive(Debug)]
pub struct StopSignals(Vec<signal_hook::SigId>);

impl StopSignals {
    /// SIGINT, SIGTERM and SIGHUP each set `flag` from now on.
    pub fn set(flag: &Arc<AtomicBool>) -> std::io::Result<StopSignals> {
        let mut handlers = StopSignals(Vec::new());
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            handlers
                .0
                .push(signal_hook::flag::register(signal, Arc::clone(flag))?);
        }
        Ok(handlers)
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
