//! The job events' stream as the client reads it: server-sent events,
//! split into whole blocks and read as [`JobEvent`]s.

use super::{CallError, JobEvent};

/// The longest an SSE block may grow before its end.
pub(super) const MAX_SSE_BLOCK: usize = 1024 * 1024;

/// The whole blocks at the start of the stream's bytes, taken out of it.
/// Bytes are joined before they are read as text, so a character split
/// across two network chunks arrives whole.
pub(super) fn sse_blocks(buffer: &mut Vec<u8>) -> Result<Vec<String>, CallError> {
    let mut blocks = Vec::new();
    while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
        let block: Vec<u8> = buffer.drain(..end + 2).collect();
        blocks.push(String::from_utf8_lossy(&block).into_owned());
    }
    if buffer.len() > MAX_SSE_BLOCK {
        return Err(CallError::BadAnswer(format!(
            "an event of the stream passed {} kB without ending",
            MAX_SSE_BLOCK / 1024
        )));
    }
    Ok(blocks)
}

/// One SSE block's event (`data:` lines joined), if it is one of ours.
pub(super) fn parse_sse(block: &str) -> Option<JobEvent> {
    let data: Vec<&str> = block
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(&data.join("\n")).ok()
}
