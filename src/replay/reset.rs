//! `--reset-with`: a shell command that puts the desktop back in the state
//! a recording starts from, run before each row of `replay --each` and
//! before each job of `reprise worker`, bounded in time.

use crate::platform::child::without_credentials;

/// How long `--reset-with` may take.
pub const RESET_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Why a `--reset-with` command did not put the desktop back.
#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    #[error("the reset command did not start: {0}")]
    Start(std::io::Error),
    #[error("the reset command failed ({0})")]
    Failed(std::process::ExitStatus),
    #[error("the reset command did not finish within {0} s")]
    Timeout(u64),
    #[error("the reset command: {0}")]
    Wait(std::io::Error),
}

/// Runs `--reset-with` (through `sh -c`), bounded by [`RESET_TIMEOUT`].
pub fn reset(command: Option<&str>) -> Result<(), ResetError> {
    let Some(command) = command else {
        return Ok(());
    };
    let mut child = without_credentials(&mut std::process::Command::new("sh"))
        .args(["-c", command])
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(ResetError::Start)?;
    let deadline = std::time::Instant::now() + RESET_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(ResetError::Failed(status)),
            Ok(None) if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ResetError::Timeout(RESET_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(50)),
            Err(err) => return Err(ResetError::Wait(err)),
        }
    }
}
