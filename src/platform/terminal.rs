//! A line read from the terminal with its echo off (a secret typed at a
//! prompt), restoring the echo however the read ends.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

/// Whether a person can be asked: stdin and stderr are terminals.
pub fn can_prompt() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Prints `prompt` on stderr and reads one line from stdin without echoing
/// it; the line's end is not part of the answer.
#[cfg(unix)]
pub fn read_hidden(prompt: &str) -> std::io::Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let before = tcgetattr(&stdin)?;
    let mut quiet = before.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    eprint!("{prompt}");
    std::io::stderr().flush()?;
    tcsetattr(&stdin, OptionalActions::Flush, &quiet)?;
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    tcsetattr(&stdin, OptionalActions::Flush, &before)?;
    read?;
    while line.ends_with(['\n', '\r']) {
        line.pop();
    }
    Ok(line)
}

#[cfg(not(unix))]
pub fn read_hidden(_prompt: &str) -> std::io::Result<String> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no hidden prompt on this platform: give the secret in the environment",
    ))
}
