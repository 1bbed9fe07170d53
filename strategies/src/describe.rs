//! Describers name each segment of a window so that a recorded target can be
//! found again by its description.
//!
//! The offline describer needs no model: the text inside the segment (read by
//! a [`TextReader`], Tesseract in the application), the segment's kind and
//! shape, and the text of its nearest label, giving stable descriptions such
//! as `button "Save"` or `text field labelled "User name"`.

mod llm;
mod offline;

use image::RgbaImage;

pub use crate::vision::Description;
use crate::vision::Segment;
pub use llm::LlmDescriber;
pub use offline::OfflineDescriber;

/// Reads the text in an image of one segment.
pub trait TextReader {
    fn read(&mut self, crop: &RgbaImage) -> String;
    /// Whether it can read: a reader that starts in the background is
    /// waited for here, and says why it could not start.
    fn ready(&mut self) -> Result<(), ReaderError> {
        Ok(())
    }
}

/// Why a text reader cannot read (its engine did not start).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReaderError(pub String);

/// Why descriptions could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DescribeError {
    #[error("the model could not describe the segments: {0}")]
    Model(#[from] crate::llm::FeedbackError),
    #[error("render the prompt that describes the segments: {0}")]
    Prompt(crate::vanilla::RenderError),
    #[error(transparent)]
    Reader(#[from] ReaderError),
}

/// Names every segment of a window image, in the segments' order.
pub trait Describer {
    fn name(&self) -> &'static str;
    /// Its name and version in the segmentation cache: descriptions kept
    /// under another name are never reused. Its name by default: a
    /// describer whose descriptions may change gives a version too.
    fn cache_name(&self) -> &'static str {
        self.name()
    }
    /// Whether it describes on this machine, asking no model (the offline
    /// describer): only such a describer cross-checks the structural rung.
    fn runs_here(&self) -> bool {
        true
    }
    /// Whether it can describe: what it starts in the background is
    /// waited for here (the first description waits for it too).
    fn ready(&mut self) -> Result<(), DescribeError> {
        Ok(())
    }
    fn describe(
        &mut self,
        window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError>;
}

/// Letters and digits, lower-cased, single spaces: what text comparison uses.
pub fn normalise(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                ' '
            }
        })
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The glyphs a button may show alone (a calculator's, a keypad's), which
/// [`normalise`] would erase: one of them read alone is the label.
const LONE_GLYPHS: &[char] = &['+', '-', '*', '/', '=', '.', '%', '×', '÷', '−', '±', '√'];

/// The label of a reading that [`normalise`] leaves empty: the reading's one
/// glyph when it is a lone operator (`+`, `=`, `÷`, ...), else nothing.
pub fn glyph_label(read: &str) -> String {
    let mut chars = read.trim().chars();
    match (chars.next(), chars.next()) {
        (Some(glyph), None) if LONE_GLYPHS.contains(&glyph) => glyph.to_string(),
        _ => String::new(),
    }
}

/// The label of what was read in a segment: its words ([`normalise`]), or
/// its one operator glyph ([`glyph_label`]).
pub fn label_of(read: &str) -> String {
    let words = normalise(read);
    if words.is_empty() {
        glyph_label(read)
    } else {
        words
    }
}

/// Whether an image holds anything but its background: at least a few
/// pixels far from its median luminance.
pub fn has_ink(image: &RgbaImage) -> bool {
    let luminance: Vec<u8> = image
        .pixels()
        .map(|pixel| {
            let [r, g, b, _] = pixel.0;
            crate::vision::luma8(r, g, b)
        })
        .collect();
    if luminance.is_empty() {
        return false;
    }
    let mut sorted = luminance.clone();
    sorted.sort_unstable();
    let median = i32::from(sorted[sorted.len() / 2]);
    let inked = luminance
        .iter()
        .filter(|value| (i32::from(**value) - median).abs() > 60)
        .count();
    inked >= 6 && inked * 200 >= luminance.len()
}

/// The offline describer's name and version in the segmentation cache:
/// descriptions cached by an older describer are not reused.
pub const OFFLINE_DESCRIBER_CACHE_NAME: &str = "offline-3";

/// The LLM describer's name and version in the segmentation cache.
pub const LLM_DESCRIBER_CACHE_NAME: &str = "llm-1";

/// A segment of `kind` at `x`, `y`, `width` x `height`, whole (for tests).
#[cfg(test)]
pub(crate) fn segment(
    kind: crate::vision::SegmentKind,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
) -> Segment {
    Segment::full(
        kind,
        crate::vision::PixelRect {
            x,
            y,
            width,
            height,
        },
    )
    .unwrap()
}
