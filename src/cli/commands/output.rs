//! How a command hands its result over: printed (a reader that stopped
//! reading is not an error) or written to a file whole or not at all.

use std::io::Write as _;

use anyhow::{Context as _, Result, bail};

use crate::settings::errors::UsageError;

/// Writes `bytes` to `path` whole or not at all: through a temporary file
/// of its own (a unique name beside the target, removed on any failure)
/// renamed over the target, so a failed write never leaves a half-written
/// file under the requested name, and two writers never share a temporary
/// file. A symbolic link is followed (the file it names is replaced, not
/// the link); a target that is not a regular file (a device such as
/// `/dev/stdout`, a pipe) is written to directly, never replaced.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    // A stream (`/dev/stdout` into a pipe, whose link names no path, a
    // FIFO, a terminal) is asked of the kernel first.
    if is_stream(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut file| file.write_all(bytes).and_then(|()| file.flush()))
            .with_context(|| format!("write {}", path.display()));
    }
    // The file a chain of links names, which need not exist yet (at most
    // 40 links, as the kernel allows).
    let mut target = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = std::fs::read_link(&target)
                    .with_context(|| format!("follow the link {}", target.display()))?;
                target = match target.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => break,
        }
    }
    if let Ok(meta) = std::fs::metadata(&target)
        && !meta.is_file()
    {
        if meta.is_dir() {
            bail!(UsageError(format!(
                "{} is a folder, not a file",
                path.display()
            )));
        }
        return std::fs::write(&target, bytes).with_context(|| format!("write {}", path.display()));
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let name = target.file_name().map_or_else(
        || "output".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(&dir)
        .with_context(|| format!("make a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("write {}", path.display()))?;
    // The temporary file is removed if the rename fails.
    tmp.persist(&target)
        .map_err(|err| err.error)
        .with_context(|| format!("move the file to {}", path.display()))?;
    Ok(())
}

/// Whether `path` names something that is neither a regular file nor a
/// folder (a pipe, a terminal, a device): a result written there is read as
/// it comes, so the words about it go to stderr.
pub fn is_stream(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir())
}

pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("write JSON")?;
    text.push('\n');
    print_text(&text)
}

/// Writes `value` as pretty JSON to stdout as it is serialized, never
/// whole in memory (a million reduced events would be hundreds of MB of
/// text). A reader that stopped reading is not an error.
pub fn stream_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut stdout, value)
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    match written {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("write output"),
    }
}

/// Writes to stdout. A reader that stopped reading (`reprise list --json |
/// head -1`) is not an error.
pub fn print_text(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("write output"),
    }
}

/// Asks `question` on the terminal (stderr) and reads one line of answer
/// (trimmed); `None` where there is no terminal to ask at.
pub fn ask(question: &str) -> Result<Option<String>> {
    use std::io::{BufRead as _, IsTerminal as _};
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    eprint!("{question} ");
    std::io::stderr().flush().context("ask")?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("read the answer")?;
    Ok(Some(line.trim().to_owned()))
}
