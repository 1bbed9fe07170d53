//! The display test harness: a private Xvfb on a free display number with
//! openbox, applications on it, and the `reprise` binary pointed at a private
//! store. Everything is torn down when the harness is dropped, also when a
//! test fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The committed sample recording (see recordings/README.md).
pub const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/recordings/fixture-demo.reprise"
);

/// How long to wait for a display, a window or a process before failing:
/// generous, because CI machines are slow and loaded.
pub const WAIT: Duration = Duration::from_secs(45);

/// A private X display with a window manager.
#[derive(Debug)]
pub struct Display {
    pub name: String,
    pub dir: tempfile::TempDir,
    children: Vec<Child>,
}

impl Display {
    /// Starts Xvfb (it picks a free display number and tells it through
    /// `-displayfd`) and openbox, and waits until both answer.
    pub fn start(width: u32, height: u32) -> Display {
        let dir = tempfile::tempdir().expect("make a temporary folder");
        Display::start_server(
            dir,
            &format!("Xvfb -displayfd 3 -screen 0 {width}x{height}x24 -nolisten tcp"),
        )
        .with_window_manager()
    }

    /// Two monitors side by side, each `width`x`height` (a mode of the
    /// dummy driver's: 800x600, 1024x768), as a desktop with two screens
    /// has them: one X screen, a RandR monitor on each of two outputs. The
    /// server is Xorg with the dummy video driver: Xvfb takes no second
    /// monitor (it ignores `xrandr --setmonitor`).
    pub fn start_two_monitors(width: u32, height: u32) -> Display {
        let dir = tempfile::tempdir().expect("make a temporary folder");
        let config = dir.path().join("xorg.conf");
        std::fs::write(
            &config,
            format!(
                "Section \"ServerFlags\"\n  Option \"AutoAddDevices\" \"false\"\n  \
                 Option \"DontVTSwitch\" \"true\"\nEndSection\n\
                 Section \"Device\"\n  Identifier \"dummy\"\n  Driver \"dummy\"\n  \
                 VideoRam 65536\nEndSection\n\
                 Section \"Screen\"\n  Identifier \"screen\"\n  Device \"dummy\"\n  \
                 DefaultDepth 24\n  SubSection \"Display\"\n    Depth 24\n    \
                 Virtual {} {height}\n  EndSubSection\nEndSection\n",
                2 * width
            ),
        )
        .expect("write the X server's configuration");
        let command = format!(
            "Xorg -displayfd 3 -noreset -nolisten tcp -logfile '{}' -config '{}'",
            dir.path().join("xorg.log").display(),
            config.display()
        );
        let display = Display::start_server(dir, &command);
        let mode = format!("{width}x{height}");
        run_ok(
            display
                .command("xrandr")
                .args(["--addmode", "DUMMY1", &mode]),
        );
        run_ok(display.command("xrandr").args([
            "--output",
            "DUMMY0",
            "--mode",
            &mode,
            "--pos",
            "0x0",
            "--primary",
            "--output",
            "DUMMY1",
            "--mode",
            &mode,
            "--right-of",
            "DUMMY0",
        ]));
        let monitors = run_ok(display.command("xrandr").arg("--listmonitors"));
        assert!(
            monitors.starts_with("Monitors: 2"),
            "two monitors on {}: {monitors}",
            display.name
        );
        display.with_window_manager()
    }

    /// Starts an X server (`command`, which is told where to write its
    /// display number: `-displayfd 3`) and waits until it answers.
    fn start_server(dir: tempfile::TempDir, command: &str) -> Display {
        let number_file = dir.path().join("display-number");
        let server = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {command} 3>'{}'", number_file.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the X server (is the xvfb package installed?)");
        let mut display = Display {
            name: String::new(),
            dir,
            children: vec![server],
        };
        let number = wait_for("the X server to report its display number", || {
            let text = std::fs::read_to_string(&number_file).ok()?;
            text.ends_with('\n').then(|| text.trim().to_owned())
        });
        display.name = format!(":{number}");
        display
    }

    /// Starts openbox, and waits until it manages windows.
    fn with_window_manager(mut self) -> Display {
        let display = &mut self;
        let start = |display: &Display| {
            display
                .command("openbox")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start openbox")
        };
        let mut wm = start(display);
        // openbox announces itself (_NET_SUPPORTING_WM_CHECK) early in its
        // start-up; a window mapped before it is ready is never managed and
        // stays unmapped for good (xcalc's, 1 start in 6 here). So wait for
        // its client list, then until it has managed a probe window. Now
        // and then (1 start in 24, with two displays starting at once) it
        // fails to open a display that already answers, and exits: it is
        // started again, at most 4 times.
        let mut starts = 1;
        wait_for("openbox to manage the screen", || {
            let out = display
                .command("xprop")
                .args(["-root", "_NET_CLIENT_LIST"])
                .output()
                .ok()?;
            if String::from_utf8_lossy(&out.stdout).contains("window id") {
                return Some(());
            }
            if starts < 5 && matches!(wm.try_wait(), Ok(Some(_))) {
                starts += 1;
                wm = start(display);
            }
            None
        });
        display.children.push(wm);
        display.wait_until_windows_are_managed();
        self
    }

    /// Maps a probe window (xmessage) until openbox has managed one: a few
    /// attempts of two seconds each.
    fn wait_until_windows_are_managed(&self) {
        for _ in 0..5 {
            let mut probe = self
                .command("xmessage")
                .args(["-name", "reprise-wm-probe", "ready"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start xmessage (is the x11-utils package installed?)");
            let managed = poll_for(Duration::from_secs(2), || {
                self.search_window(&["--onlyvisible", "--classname", "reprise-wm-probe"])
            });
            let _ = probe.kill();
            let _ = probe.wait();
            if managed.is_some() {
                return;
            }
        }
        panic!(
            "openbox on display {} did not manage a probe window",
            self.name
        );
    }

    /// A command that runs on this display.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env("DISPLAY", &self.name)
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE");
        command
    }

    /// Starts an application, kept until the display is dropped.
    pub fn spawn(&mut self, program: &str, args: &[&str]) {
        let child = self
            .command(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("start {program}: {err}"));
        self.children.push(child);
    }

    /// Starts the fixture application with its log in this display's folder,
    /// waits for its window, and returns the log's path.
    pub fn spawn_fixture(&mut self, log_name: &str, args: &[&str]) -> PathBuf {
        let log = self.dir.path().join(log_name);
        let _ = std::fs::remove_file(&log);
        let mut all_args = vec!["--log", log.to_str().expect("UTF-8 path")];
        all_args.extend_from_slice(args);
        self.spawn(fixture_binary().to_str().expect("UTF-8 path"), &all_args);
        wait_for("the fixture to start", || {
            fixture_log(&log).first().cloned()
        });
        self.wait_for_window("reprise-fixture");
        log
    }

    /// Stops every application started so far (not the X server or openbox).
    pub fn stop_apps(&mut self) {
        while self.children.len() > 2 {
            let mut child = self.children.pop().expect("an application");
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Ends the X server at once (SIGKILL), as a display that goes away
    /// mid-session does; the rest is torn down at the drop as usual.
    pub fn kill_server(&mut self) {
        let server = &mut self.children[0];
        let _ = server.kill();
        let _ = server.wait();
    }

    /// Waits until a visible window of this class is mapped; returns its id.
    /// Fails at once if an application started on this display has exited.
    pub fn wait_for_window(&mut self, class: &str) -> u64 {
        try_wait_for(|| {
            self.fail_if_an_app_exited();
            self.visible_window(class)
        })
        .unwrap_or_else(|| self.window_timeout(class))
    }

    /// An application that died will never map its window: say so.
    fn fail_if_an_app_exited(&mut self) {
        for child in self.children.iter_mut().skip(2) {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "an application on display {} exited with {status} before its window appeared",
                    self.name
                );
            }
        }
    }

    /// The id of a visible window of this class that is already mapped (or
    /// is about to be).
    pub fn find_window(&self, class: &str) -> u64 {
        try_wait_for(|| self.visible_window(class)).unwrap_or_else(|| self.window_timeout(class))
    }

    fn visible_window(&self, class: &str) -> Option<u64> {
        self.search_window(&["--onlyvisible", "--class", class])
    }

    /// The first window `xdotool search` finds with these arguments.
    fn search_window(&self, args: &[&str]) -> Option<u64> {
        let out = self
            .command("xdotool")
            .arg("search")
            .args(args)
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    /// Fails a wait for a window, saying what windows of that class exist
    /// and their map state (an unmapped one means the window manager never
    /// managed it).
    fn window_timeout(&self, class: &str) -> ! {
        let states: Vec<String> = self
            .command("xdotool")
            .args(["search", "--class", class])
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_default()
            .lines()
            .map(|id| {
                let info = self
                    .command("xwininfo")
                    .args(["-id", id.trim()])
                    .output()
                    .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                    .unwrap_or_default();
                let state = info
                    .lines()
                    .find(|line| line.contains("Map State"))
                    .unwrap_or("map state unknown")
                    .trim()
                    .to_owned();
                format!("{id}: {state}")
            })
            .collect();
        panic!(
            "timed out waiting for a visible window of class {class} on display {}; windows of that class: {states:?}",
            self.name
        )
    }

    /// Runs xdotool with these arguments and checks that it succeeded.
    pub fn xdotool(&self, args: &[&str]) {
        run_ok(self.command("xdotool").args(args));
    }

    /// A window's client area in root coordinates, as xwininfo reports it.
    pub fn window_rect(&self, window: u64) -> (i32, i32, u32, u32) {
        let out = run_ok(self.command("xwininfo").args(["-id", &window.to_string()]));
        let field = |label: &str| -> i64 {
            let line = out
                .lines()
                .find(|line| line.trim_start().starts_with(label))
                .expect(label);
            line.rsplit(':')
                .next()
                .unwrap()
                .trim()
                .parse()
                .expect(label)
        };
        (
            field("Absolute upper-left X") as i32,
            field("Absolute upper-left Y") as i32,
            field("Width") as u32,
            field("Height") as u32,
        )
    }

    /// The private store of this display's tests.
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("store.sqlite")
    }

    /// The `reprise` binary on this display with the private store.
    pub fn reprise(&self) -> Command {
        let mut command = self.command(env!("CARGO_BIN_EXE_reprise"));
        command
            .env("REPRISE_STORE", self.store())
            .env_remove("REPRISE_LOG");
        command
    }

    /// The active window, taken by `reprise screenshot --active-window` into
    /// `name` in this display's folder; returns its path.
    /// The last run's report, written to `name` in the test's folder: its
    /// path and its HTML.
    pub fn last_report(&self, name: &str) -> (PathBuf, String) {
        let report = self.dir.path().join(name);
        run_ok(self.reprise().args(["report", "last", "-o"]).arg(&report));
        let html = std::fs::read_to_string(&report).unwrap();
        (report, html)
    }

    pub fn active_window_shot(&self, name: &str) -> PathBuf {
        let shot = self.dir.path().join(name);
        run_ok(self.reprise().args([
            "screenshot",
            "--active-window",
            "-o",
            shot.to_str().expect("UTF-8 path"),
        ]));
        shot
    }

    /// `reprise` as [`Display::reprise`], with the OpenAI-format server at
    /// `url` as its only model provider (no key: a local server needs none).
    pub fn reprise_with_model(&self, url: &str) -> Command {
        let mut command = self.reprise();
        command
            .env("OMP_THREAD_LIMIT", "1")
            .env("REPRISE_OPENAI_BASE_URL", url)
            .env("REPRISE_OPENAI_MODEL", "scripted")
            .env("REPRISE_LLM_PROVIDERS", "openai")
            .env_remove("OPENAI_API_KEY");
        command
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        // Applications and the window manager first, the X server last.
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The fixture application, built beside the `reprise` binary.
pub fn fixture_binary() -> PathBuf {
    let reprise = PathBuf::from(env!("CARGO_BIN_EXE_reprise"));
    let fixture = reprise.with_file_name("reprise-fixture");
    assert!(
        fixture.exists(),
        "{} is missing: build it with `cargo build -p reprise-fixture`",
        fixture.display()
    );
    fixture
}

/// The fixture's log: one JSON object per line.
pub fn fixture_log(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Polls `probe` until it returns something, or panics after [`WAIT`].
pub fn wait_for<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    try_wait_for(probe).unwrap_or_else(|| panic!("timed out waiting for {what}"))
}

/// Polls `probe` until it returns something, for at most [`WAIT`].
pub fn try_wait_for<T>(probe: impl FnMut() -> Option<T>) -> Option<T> {
    poll_for(WAIT, probe)
}

/// Polls `probe` every 50 ms until it returns something, for at most `limit`.
fn poll_for<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a command, asserts it succeeded, and returns its stdout.
pub fn run_ok(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("run {command:?}: {err}"));
    assert_success(&out, command);
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Runs `command`, which must succeed: its whole output.
pub fn output_ok(mut command: impl std::borrow::BorrowMut<Command>) -> Output {
    let command = command.borrow_mut();
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("run {command:?}: {err}"));
    assert_success(&out, command);
    out
}

/// Runs a replay that must do every step but leave `unverified` of them
/// unchecked: exit 12 and the count in its message. Returns stderr.
pub fn run_unverified(command: &mut Command, unverified: Option<usize>) -> String {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("run {command:?}: {err}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_unverified(out.status.code(), &stderr, unverified);
    stderr
}

/// Exit 12, and the count of unverified steps (when given) in `stderr`.
pub fn assert_unverified(code: Option<i32>, stderr: &str, unverified: Option<usize>) {
    assert_eq!(code, Some(12), "{stderr}");
    assert!(
        stderr.contains("warning: replay run") && stderr.contains("could not be checked"),
        "{stderr}"
    );
    if let Some(count) = unverified {
        assert!(
            stderr.contains(&format!(", {count} unverified,")),
            "{stderr}"
        );
    }
}

/// Asserts that a replay exited 0, every step proven, and by what: its
/// stderr's `steps by proof: …` line holds `proof` (`state 2, window 3`).
pub fn assert_proven(code: Option<i32>, stderr: &str, proof: &str) {
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|line| line.ends_with(&format!("steps by proof: {proof}"))),
        "{stderr}"
    );
}

/// Asserts that `out` failed with exit code `code` and that its stderr says
/// every one of `says`; returns the stderr for further checks. `case` names
/// the case in a failure's message.
pub fn assert_fails(out: &Output, code: i32, says: &[&str], case: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{case}: {stderr}");
    for said in says {
        assert!(stderr.contains(said), "{case}: {said:?} in {stderr}");
    }
    stderr
}

pub fn assert_success(out: &Output, command: &Command) {
    assert!(
        out.status.success(),
        "{command:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `reprise` binary with a store at `store` and no display.
pub fn reprise_with_store(store: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reprise"));
    command
        .env("REPRISE_STORE", store)
        .env_remove("DISPLAY")
        .env_remove("REPRISE_LOG");
    command
}

/// Waits for a child to exit, killing it after `limit`; returns its output.
pub fn wait_with_limit(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("poll child").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect output");
            panic!(
                "process did not exit within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collect output")
}

/// Opens a page in headless Chromium (Debian's `chromium`); returns the DOM
/// after it loaded and a screenshot of it.
pub fn chromium_render(page: &Path, width: u32, height: u32) -> (String, image::RgbaImage) {
    let profile = tempfile::tempdir().expect("a Chromium profile folder");
    let common = |command: &mut Command| {
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
            ])
            .args([
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .env_remove("DISPLAY")
            .stderr(Stdio::null());
    };
    let url = format!("file://{}", page.display());
    let mut dump = Command::new("chromium");
    common(&mut dump);
    let dom = run_ok(dump.arg("--dump-dom").arg(&url));
    let shot = profile.path().join("shot.png");
    let mut screenshot = Command::new("chromium");
    common(&mut screenshot);
    run_ok(
        screenshot
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("--window-size={width},{height}"))
            .arg(&url),
    );
    let image = image::open(&shot)
        .expect("Chromium wrote a screenshot")
        .into_rgba8();
    (dom, image)
}

/// How many pixels of an image are the report's marker red (#e53935).
/// The `viewBox` of every marked image in an HTML page, in order: the
/// pixel size each one shows (`0 0 468 448`).
pub fn view_boxes(html: &str) -> Vec<&str> {
    html.split("viewBox=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

pub fn marker_pixels(image: &image::RgbaImage) -> usize {
    image
        .pixels()
        .filter(|pixel| {
            let [r, g, b, _] = pixel.0;
            r > 200 && (40..=90).contains(&g) && (30..=80).contains(&b)
        })
        .count()
}
