//! The global input listeners: rdev's `listen` (it blocks for ever and has
//! no stop call), in a child process for the recorder (whose events it
//! turns into raw action events), or on a thread of its own watching for
//! the abort chord during a replay.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use rdev::{Button, EventType, Key};
use reprise_models::{ActionEvent, EventName, MouseButton};
use serde::{Deserialize, Serialize};

use super::keys::key_info;

/// What the listener thread sends.
#[derive(Debug)]
pub enum InputMessage {
    /// One input event, stamped on the monotonic clock when it arrived.
    Input {
        at: Instant,
        event_type: EventType,
        name: Option<String>,
        /// For a button press: the top-level window that was under the
        /// pointer as of its last move (before the press could open a
        /// popup over it).
        under: Option<super::UnderPointer>,
    },
    /// The listener could not start or stopped; nothing more will come.
    Failed(String),
}

/// Moves closer together than this are not asked which window is under
/// the pointer (a person's moves come 60 to 120 a second).
const MOVE_QUERY_INTERVAL: std::time::Duration = std::time::Duration::from_millis(8);

/// The first argument that makes the binary run [`serve_input`] (in the
/// recorder's child process) instead of a command.
pub const LISTENER_COMMAND: &str = "__listen-input";

/// One line of the child listener's output.
#[derive(Debug, Serialize, Deserialize)]
enum Wire {
    Event {
        event_type: EventType,
        name: Option<String>,
    },
    /// The listener could not start.
    Failed(String),
}

/// An error of the child listener itself.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("set up the input listener: {0}")]
    Setup(#[source] std::io::Error),
}

/// The child side: rdev's listener, its events written to standard output
/// one JSON line each, flushed at once. It runs in a process of its own
/// because, on X11, rdev listens through Xlib, which ends the whole process
/// when the display's connection is lost: the recorder must survive that
/// to keep what it captured. The parent decides when it stops: the signals
/// that stop a recording are ignored here, and it is killed with its
/// parent (and exits when its output is gone).
pub fn serve_input() -> Result<(), ListenError> {
    #[cfg(target_os = "linux")]
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|err| ListenError::Setup(err.into()))?;
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::new(AtomicBool::new(false)))
            .map_err(ListenError::Setup)?;
    }
    let write = |wire: &Wire| {
        let mut out = std::io::stdout().lock();
        let written = serde_json::to_writer(&mut out, wire)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if written.is_err() {
            // The recorder is gone: nobody is listening.
            std::process::exit(0);
        }
    };
    let result = rdev::listen(move |event| {
        write(&Wire::Event {
            event_type: event.event_type,
            name: event.name,
        })
    });
    if let Err(err) = result {
        write(&Wire::Failed(format!(
            "the input listener could not start: {err:?}"
        )));
    }
    Ok(())
}

/// The global input listener of a recording: a child process running
/// [`serve_input`], read on a thread of its own. The child is killed when
/// this is dropped.
#[derive(Debug)]
pub struct InputListener {
    /// The events, in order; [`InputMessage::Failed`] comes last. The
    /// channel is unbounded on purpose: input is never dropped, and the
    /// recorder drains it at least every 250 ms.
    pub messages: mpsc::Receiver<InputMessage>,
    child: Arc<Mutex<Child>>,
}

impl InputListener {
    /// The events, for a reader on another thread; the child still ends
    /// when this is dropped (and the events with it).
    pub fn take_messages(&mut self) -> mpsc::Receiver<InputMessage> {
        std::mem::replace(&mut self.messages, mpsc::channel().1)
    }
}

impl Drop for InputListener {
    fn drop(&mut self) {
        if let Ok(mut child) = self.child.lock() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts the listener process and the thread that reads it. Call it from
/// the thread that outlives the recording (the child is told to die with
/// the thread that made it). `window_under_pointer` is asked, on the
/// reading thread, at pointer moves (at most one per
/// [`MOVE_QUERY_INTERVAL`]) and at a press that follows an unasked move.
pub fn spawn_listener(
    mut window_under_pointer: impl FnMut() -> Option<super::UnderPointer> + Send + 'static,
) -> std::io::Result<InputListener> {
    let exe = std::env::current_exe()?;
    let mut child = super::child::without_credentials(&mut Command::new(exe))
        .arg(LISTENER_COMMAND)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(std::io::Error::other("the listener's output was not piped"));
    };
    let child = Arc::new(Mutex::new(child));
    // Its last words (Xlib's, when the display went away), for the log:
    // drained at once so that a chatty child never blocks on a full pipe.
    let last_words = Arc::new(Mutex::new(String::new()));
    {
        let last_words = Arc::clone(&last_words);
        std::thread::Builder::new()
            .name("reprise-input-stderr".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Ok(mut words) = last_words.lock() {
                        *words = line;
                    }
                }
            })?;
    }
    let (sender, receiver) = mpsc::channel();
    let waited = Arc::clone(&child);
    std::thread::Builder::new()
        .name("reprise-input".into())
        .spawn(move || {
            let reason =
                read_events(stdout, &sender, &mut window_under_pointer).unwrap_or_else(|| {
                    let status = wait_bounded(&waited);
                    let words = last_words
                        .lock()
                        .map(|words| words.clone())
                        .unwrap_or_default();
                    tracing::debug!(?status, last_words = %words, "the input listener ended");
                    match status {
                        Some(status) => format!("the input listener stopped ({status})"),
                        None => "the input listener stopped".to_owned(),
                    }
                });
            let _ = sender.send(InputMessage::Failed(reason));
        })?;
    Ok(InputListener {
        messages: receiver,
        child,
    })
}

/// Reads the listener's events from `stdout` until it ends, sending each
/// on, stamped, with the window under the pointer for a press: why it
/// stopped where the listener said or sent what cannot be read, else
/// `None` (its output ended).
fn read_events(
    stdout: std::process::ChildStdout,
    sender: &mpsc::Sender<InputMessage>,
    window_under_pointer: &mut dyn FnMut() -> Option<super::UnderPointer>,
) -> Option<String> {
    // The window under the pointer as of its last move, when that move was
    // asked about (moves closer together than MOVE_QUERY_INTERVAL are not):
    // a press then counts from there, since a popup the press itself opens
    // may be up before the press can be asked about.
    let mut after_move: Option<Option<super::UnderPointer>> = None;
    let mut last_query: Option<Instant> = None;
    for line in BufReader::new(stdout).lines() {
        let at = Instant::now();
        let wire = match line.map(|line| serde_json::from_str::<Wire>(&line)) {
            Ok(Ok(wire)) => wire,
            Ok(Err(err)) => {
                return Some(format!(
                    "the input listener sent an unreadable event: {err}"
                ));
            }
            Err(err) => return Some(format!("reading the input listener failed: {err}")),
        };
        let (event_type, name) = match wire {
            Wire::Event { event_type, name } => (event_type, name),
            Wire::Failed(failure) => return Some(failure),
        };
        let under = match event_type {
            EventType::MouseMove { .. } => {
                if last_query.is_none_or(|last| at - last >= MOVE_QUERY_INTERVAL) {
                    after_move = Some(window_under_pointer());
                    last_query = Some(at);
                } else {
                    after_move = None;
                }
                None
            }
            EventType::ButtonPress(_) => {
                let under = after_move.unwrap_or_else(&mut *window_under_pointer);
                tracing::debug!(?under, asked_at_the_move = after_move.is_some(), "a press");
                under
            }
            _ => None,
        };
        let _ = sender.send(InputMessage::Input {
            at,
            event_type,
            name,
            under,
        });
    }
    None
}

/// The child's exit status once its output has ended: it is gone or about
/// to be (waited for at most a second).
fn wait_bounded(child: &Mutex<Child>) -> Option<std::process::ExitStatus> {
    for _ in 0..50 {
        if let Ok(Some(status)) = child.lock().ok()?.try_wait() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// The documented abort key combination.
pub const ABORT_KEYS: &str = "Ctrl+Alt+Shift+Q";

/// Watches for [`ABORT_KEYS`] until dropped, setting `flag` when the person
/// presses them; a modifier the display reports as held counts, whoever
/// pressed it (a Shift stuck before the watch began sent no press). The
/// keyboard is listened to by a child process, as the recorder's is
/// ([`spawn_listener`]): through Xlib, a listener in this process would end
/// it when the display's connection is lost, leaving the replay's run
/// unfinished.
pub fn watch_abort_chord(flag: Arc<AtomicBool>) -> std::io::Result<AbortChord> {
    let mut listener = spawn_listener(|| None)?;
    let messages = listener.take_messages();
    let thread = std::thread::Builder::new()
        .name("reprise-abort-keys".into())
        .spawn(move || {
            let mut held: Vec<Key> = Vec::new();
            // The display's own record of held modifiers: a modifier that was
            // down before the listener started (a stuck Shift) sent it no
            // press, yet it is held, and the chord must still work.
            let probe = super::WindowProbe::connect().ok();
            for message in messages {
                let event_type = match message {
                    InputMessage::Input { event_type, .. } => event_type,
                    InputMessage::Failed(reason) => {
                        tracing::debug!(
                            "the abort keys are no longer watched ({reason}); the screen corners still abort"
                        );
                        break;
                    }
                };
                match event_type {
                    EventType::KeyPress(key) => {
                        if !held.contains(&key) {
                            held.push(key);
                        }
                        if key != Key::KeyQ {
                            continue;
                        }
                        let on_display = probe
                            .as_ref()
                            .and_then(|probe| probe.held_input().ok())
                            .unwrap_or_default();
                        let has = |keys: &[Key], modifier: super::HeldInput| {
                            keys.iter().any(|key| held.contains(key))
                                || on_display.contains(&modifier)
                        };
                        if has(
                            &[Key::ControlLeft, Key::ControlRight],
                            super::HeldInput::Ctrl,
                        ) && has(&[Key::Alt, Key::AltGr], super::HeldInput::Alt)
                            && has(&[Key::ShiftLeft, Key::ShiftRight], super::HeldInput::Shift)
                        {
                            tracing::warn!("{ABORT_KEYS} pressed: aborting the replay");
                            flag.store(true, Ordering::SeqCst);
                        }
                    }
                    EventType::KeyRelease(key) => held.retain(|held_key| *held_key != key),
                    _ => {}
                }
            }
        })?;
    Ok(AbortChord {
        listener: Some(listener),
        thread: Some(thread),
    })
}

/// The watch of [`watch_abort_chord`]: dropping it ends the listener process
/// and the thread that read it.
#[derive(Debug)]
pub struct AbortChord {
    listener: Option<InputListener>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for AbortChord {
    fn drop(&mut self) {
        // The child first: its output ends, and with it the reading thread.
        drop(self.listener.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Turns rdev events into raw action events. It keeps the pointer position
/// (rdev's button events carry none) and the character each held key typed
/// (so a release names the same character as its press).
#[derive(Debug, Default)]
pub struct EventConverter {
    pointer: Option<(f64, f64)>,
    typed: HashMap<Key, String>,
}

impl EventConverter {
    /// A converter that starts with the pointer at a known position.
    pub fn with_pointer(pointer: Option<(f64, f64)>) -> Self {
        EventConverter {
            pointer,
            typed: HashMap::new(),
        }
    }

    /// The raw action event for one rdev event at `timestamp` seconds, or
    /// `None` for events Reprise does not record (unknown mouse buttons).
    pub fn convert(
        &mut self,
        event_type: &EventType,
        name: Option<&str>,
        timestamp: f64,
    ) -> Option<ActionEvent> {
        match *event_type {
            EventType::MouseMove { x, y } => {
                self.pointer = Some((x, y));
                let mut event = ActionEvent::new(EventName::Move, timestamp);
                self.place(&mut event);
                Some(event)
            }
            EventType::ButtonPress(button) | EventType::ButtonRelease(button) => {
                let button = match button {
                    Button::Left => MouseButton::Left,
                    Button::Right => MouseButton::Right,
                    Button::Middle => MouseButton::Middle,
                    Button::Unknown(code) => {
                        tracing::debug!(code, "mouse button without a name is not recorded");
                        return None;
                    }
                };
                let mut event = ActionEvent::new(EventName::Click, timestamp);
                self.place(&mut event);
                event.mouse_button_name = Some(button);
                event.mouse_pressed = Some(matches!(event_type, EventType::ButtonPress(_)));
                Some(event)
            }
            EventType::Wheel { delta_x, delta_y } => {
                let mut event = ActionEvent::new(EventName::Scroll, timestamp);
                self.place(&mut event);
                event.mouse_dx = Some(delta_x as f64);
                event.mouse_dy = Some(delta_y as f64);
                Some(event)
            }
            EventType::KeyPress(key) => {
                let mut event = self.key_event(EventName::Press, key, timestamp);
                let info = key_info(key);
                let typed = name
                    .filter(|text| !text.is_empty() && !text.chars().any(char::is_control))
                    .map(str::to_owned)
                    .or_else(|| info.canonical_char.map(str::to_owned));
                if info.name.is_none() {
                    if let Some(text) = &typed {
                        self.typed.insert(key, text.clone());
                    }
                    event.key_char = typed;
                }
                Some(event)
            }
            EventType::KeyRelease(key) => {
                let mut event = self.key_event(EventName::Release, key, timestamp);
                if key_info(key).name.is_none() {
                    event.key_char = self
                        .typed
                        .remove(&key)
                        .or_else(|| key_info(key).canonical_char.map(str::to_owned));
                }
                Some(event)
            }
        }
    }

    /// Where the pointer is, as of its last move.
    pub fn pointer(&self) -> Option<(f64, f64)> {
        self.pointer
    }

    fn place(&self, event: &mut ActionEvent) {
        if let Some((x, y)) = self.pointer {
            event.mouse_x = Some(x);
            event.mouse_y = Some(y);
        }
    }

    fn key_event(&self, name: EventName, key: Key, timestamp: f64) -> ActionEvent {
        let info = key_info(key);
        let mut event = ActionEvent::new(name, timestamp);
        event.key_name = info.name.map(str::to_owned);
        event.key_vk = info.vk;
        event.canonical_key_name = info.name.map(str::to_owned);
        event.canonical_key_char = info.canonical_char.map(str::to_owned);
        event.canonical_key_vk = info.vk;
        event
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_take_the_last_pointer_position() {
        let mut converter = EventConverter::default();
        converter.convert(&EventType::MouseMove { x: 10.0, y: 20.0 }, None, 0.0);
        let press = converter
            .convert(&EventType::ButtonPress(Button::Left), None, 0.1)
            .unwrap();
        assert_eq!(press.position(), Some((10.0, 20.0)));
        assert_eq!(press.mouse_pressed, Some(true));
        assert!(
            converter
                .convert(&EventType::ButtonPress(Button::Unknown(8)), None, 0.2)
                .is_none()
        );
    }

    #[test]
    fn a_release_names_the_character_its_press_typed() {
        let mut converter = EventConverter::default();
        let press = converter
            .convert(&EventType::KeyPress(Key::KeyH), Some("H"), 0.0)
            .unwrap();
        assert_eq!(press.key_char.as_deref(), Some("H"));
        assert_eq!(press.canonical_key_char.as_deref(), Some("h"));
        let release = converter
            .convert(&EventType::KeyRelease(Key::KeyH), None, 0.1)
            .unwrap();
        assert_eq!(release.key_char.as_deref(), Some("H"));
        let ctrl = converter
            .convert(&EventType::KeyPress(Key::ControlLeft), Some("\u{0}"), 0.2)
            .unwrap();
        assert_eq!(
            (ctrl.key_name.as_deref(), ctrl.key_char.as_deref()),
            (Some("ctrl"), None)
        );
    }
}
