//! `replay --launch`: the application the recording begins in, started with
//! the command line the recording kept when none of its windows is open,
//! waited for (bounded), and ended when the replay ends.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reprise_models::{ProcessCommand, WindowState};

use crate::platform::child::without_credentials;

/// The longest a launched application may take to show a window.
pub const LAUNCH_WAIT: Duration = Duration::from_secs(30);
/// How long a launched application is given to end after SIGTERM before
/// it is killed.
const END_WAIT: Duration = Duration::from_secs(5);

/// Why `--launch` could not start the application.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("replay --launch: the recording's first step names no window to start")]
    NoWindow,
    #[error(
        "replay --launch: the recording does not say how {app} was started (it was recorded before Reprise kept command lines, or where the platform does not tell); start {app} yourself, then replay without --launch"
    )]
    NoCommand { app: String },
    #[error("replay --launch starts {app}: not in a dry run, which acts on nothing")]
    DryRun { app: String },
    #[error("replay --launch: could not start {command}: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("replay --launch: {command} ended ({status}) before a window of {app} appeared")]
    Exited {
        command: String,
        app: String,
        status: std::process::ExitStatus,
    },
    #[error(
        "replay --launch: no window of {app} appeared within {} s of starting {command}",
        LAUNCH_WAIT.as_secs()
    )]
    NoWindowAppeared { command: String, app: String },
    #[error("replay --launch: stopped while waiting for {app} to start")]
    Interrupted { app: String },
    #[error("replay --launch: could not list the open windows: {0}")]
    Windows(#[source] crate::platform::PlatformError),
}

/// The window the recording's first step acts in: the application to start.
pub fn first_window<'a>(
    trees: &[reprise_models::ActionEvent],
    windows: &'a [WindowState],
) -> Option<&'a WindowState> {
    trees
        .iter()
        .find_map(|tree| tree.window_state_id)
        .and_then(|id| windows.get(id as usize))
}

/// An application this replay started; ended (SIGTERM, then SIGKILL after
/// [`END_WAIT`]) with everything it started when dropped.
#[derive(Debug)]
pub struct Launched {
    child: Child,
    pub app: String,
    pub command: String,
}

impl Drop for Launched {
    fn drop(&mut self) {
        end(&mut self.child);
    }
}

/// The command as a person reads it: its words joined by spaces.
fn shown(command: &ProcessCommand) -> String {
    crate::present::terminal_safe(&command.argv.join(" "))
}

/// Starts `window`'s application unless `is_open` says a window of it is
/// open (then nothing is started: `None`), and waits until one is, bounded
/// by [`LAUNCH_WAIT`] and `stop`.
pub fn launch(
    window: &WindowState,
    dry_run: bool,
    is_open: &mut dyn FnMut(&str) -> Result<bool, crate::platform::PlatformError>,
    stop: &dyn Fn() -> bool,
) -> Result<Option<Launched>, LaunchError> {
    let app = window.app_class.clone();
    if is_open(&app).map_err(LaunchError::Windows)? {
        return Ok(None);
    }
    let Some(command) = window.command.as_ref().filter(|c| !c.argv.is_empty()) else {
        return Err(LaunchError::NoCommand { app });
    };
    if dry_run {
        return Err(LaunchError::DryRun { app });
    }
    let mut process = Command::new(&command.argv[0]);
    without_credentials(&mut process)
        .args(&command.argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Where it was started, when that folder is still there (a relative
    // path among its arguments means what it meant then).
    if let Some(dir) = command.dir.as_deref().filter(|dir| Path::new(dir).is_dir()) {
        process.current_dir(dir);
    }
    // Its own process group: the terminal's Ctrl-C is Reprise's to handle,
    // and ending it ends what it started.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut process, 0);
    let child = process.spawn().map_err(|source| LaunchError::Spawn {
        command: shown(command),
        source,
    })?;
    let mut launched = Launched {
        child,
        app: app.clone(),
        command: shown(command),
    };
    let started = Instant::now();
    loop {
        if is_open(&app).map_err(LaunchError::Windows)? {
            return Ok(Some(launched));
        }
        if stop() {
            return Err(LaunchError::Interrupted { app });
        }
        // A program that hands its window to one already running exits at
        // once with success: its window is then looked for until the bound.
        if let Ok(Some(status)) = launched.child.try_wait()
            && !status.success()
        {
            return Err(LaunchError::Exited {
                command: launched.command.clone(),
                app,
                status,
            });
        }
        if started.elapsed() >= LAUNCH_WAIT {
            return Err(LaunchError::NoWindowAppeared {
                command: launched.command.clone(),
                app,
            });
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Ends a launched process and its group: SIGTERM, then SIGKILL if it has
/// not ended within [`END_WAIT`]; reaped either way.
fn end(child: &mut Child) {
    // The group too when the child has ended: what it started may not have.
    signal_group(child, false);
    let asked = Instant::now();
    while asked.elapsed() < END_WAIT {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal_group(child, true);
    let _ = child.kill();
    let _ = child.wait();
}

/// SIGTERM (or SIGKILL) to the child's process group: what it started
/// ends with it.
fn signal_group(child: &Child, kill: bool) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal, kill_process_group};
        if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
            let signal = if kill { Signal::KILL } else { Signal::TERM };
            let _ = kill_process_group(pid, signal);
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (child, kill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(command: Option<ProcessCommand>) -> WindowState {
        WindowState {
            id: 0,
            timestamp: 0.0,
            title: "Sleeper".into(),
            app_class: "Sleeper".into(),
            pid: None,
            window_id: 1,
            rect: reprise_models::Rect::new(0, 0, 10, 10),
            a11y: None,
            command,
        }
    }

    fn sleep_command(seconds: &str) -> ProcessCommand {
        ProcessCommand {
            argv: vec!["sleep".into(), seconds.into()],
            dir: Some("/".into()),
        }
    }

    #[test]
    fn the_command_kept_is_the_one_that_started_the_process() {
        let command = crate::platform::process_command(std::process::id()).unwrap();
        let argv: Vec<String> = std::env::args().collect();
        assert_eq!(command.argv, argv);
        assert_eq!(
            command.dir.map(std::path::PathBuf::from),
            Some(std::env::current_dir().unwrap())
        );
        // A process that is gone has none.
        assert_eq!(crate::platform::process_command(u32::MAX), None);
    }

    #[test]
    fn an_open_application_is_not_started_and_a_missing_command_is_refused() {
        let launched = launch(&window(None), false, &mut |_| Ok(true), &|| false).unwrap();
        assert!(launched.is_none());
        let err = launch(&window(None), false, &mut |_| Ok(false), &|| false).unwrap_err();
        assert!(
            err.to_string()
                .contains("does not say how Sleeper was started"),
            "{err}"
        );
        let err = launch(
            &window(Some(sleep_command("5"))),
            true,
            &mut |_| Ok(false),
            &|| false,
        )
        .unwrap_err();
        assert!(matches!(err, LaunchError::DryRun { .. }), "{err}");
    }

    #[test]
    fn a_launched_process_is_waited_for_then_ended_with_its_group() {
        // Its "window" appears at the third look.
        let mut looks = 0;
        let launched = launch(
            &window(Some(sleep_command("60"))),
            false,
            &mut |_| {
                looks += 1;
                Ok(looks >= 3)
            },
            &|| false,
        )
        .unwrap()
        .expect("started");
        let pid = launched.child.id();
        assert!(Path::new(&format!("/proc/{pid}")).exists());
        let started = Instant::now();
        drop(launched);
        assert!(started.elapsed() < END_WAIT, "sleep ends on SIGTERM");
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn a_program_that_fails_or_is_stopped_is_reported_clearly() {
        let failing = ProcessCommand {
            argv: vec!["false".into()],
            dir: None,
        };
        let err = launch(&window(Some(failing)), false, &mut |_| Ok(false), &|| false).unwrap_err();
        assert!(
            err.to_string()
                .contains("false ended (exit status: 1) before a window of Sleeper appeared"),
            "{err}"
        );
        let missing = ProcessCommand {
            argv: vec!["/nonexistent/program".into()],
            dir: None,
        };
        let err = launch(&window(Some(missing)), false, &mut |_| Ok(false), &|| false).unwrap_err();
        assert!(
            err.to_string()
                .contains("could not start /nonexistent/program"),
            "{err}"
        );
        let err = launch(
            &window(Some(sleep_command("60"))),
            false,
            &mut |_| Ok(false),
            &|| true,
        )
        .unwrap_err();
        assert!(matches!(err, LaunchError::Interrupted { .. }), "{err}");
    }
}
