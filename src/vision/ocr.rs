//! The offline describer's text reader: Tesseract through leptess, one crop
//! at a time, as a single line of text, upscaled when small (whole-screen OCR
//! reads boxed single glyphs such as xcalc's buttons as garbage); a compact
//! crop that reads as nothing is read again as one character, either way
//! round. Set `OMP_THREAD_LIMIT=1`: on two cores it is several times faster.

use image::{GrayImage, RgbaImage};
use leptess::{LepTess, Variable};
use reprise_strategies::describe::{ReaderError, TextReader};

/// Crops are scaled up to at least this height before reading.
const MIN_HEIGHT: u32 = 40;
/// White margin around the text, which Tesseract reads better with.
const MARGIN: u32 = 10;

/// Tesseract, started on a thread of its own (loading its model takes
/// longer than anything else at a replay's start) and waited for where it
/// is first needed.
pub struct TesseractReader {
    tess: Option<LepTess>,
    starting: Option<std::thread::JoinHandle<Result<LepTess, String>>>,
    failed: Option<String>,
}

reprise_models::debug_showing!(TesseractReader);

impl TesseractReader {
    /// Tesseract, started and waited for.
    pub fn new() -> anyhow::Result<TesseractReader> {
        let mut reader = TesseractReader::start();
        reader.ready()?;
        Ok(reader)
    }

    /// Tesseract, starting in the background: [`TextReader::ready`] waits
    /// for it and says why it could not start.
    pub fn start() -> TesseractReader {
        let starting = std::thread::Builder::new()
            .name("tesseract-start".into())
            .spawn(|| {
                LepTess::new(None, "eng").map_err(|err| {
                    format!(
                        "start Tesseract (are tesseract-ocr and tesseract-ocr-eng installed?): {err}"
                    )
                })
            });
        match starting {
            Ok(starting) => TesseractReader {
                tess: None,
                starting: Some(starting),
                failed: None,
            },
            Err(err) => TesseractReader {
                tess: None,
                starting: None,
                failed: Some(format!("start Tesseract: no thread to start it on: {err}")),
            },
        }
    }
}

/// The crop as dark text on white, scaled up and with a margin.
pub fn prepare(crop: &RgbaImage) -> GrayImage {
    prepare_as(crop, Polarity::AsItLooks)
}

/// Which way round a crop's text is taken to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    /// Light text on a dark ground when the crop is mostly dark.
    AsItLooks,
    /// The other way round (a glyph on a button whose border darkens it).
    Opposite,
}

/// The crop prepared for reading, with its text taken as `polarity` says.
pub fn prepare_as(crop: &RgbaImage, polarity: Polarity) -> GrayImage {
    // The vision engine's luminance, so OCR sees what the segmenter saw.
    let gray = GrayImage::from_fn(crop.width(), crop.height(), |x, y| {
        let [r, g, b, _] = crop.get_pixel(x, y).0;
        image::Luma([reprise_strategies::vision::luma8(r, g, b)])
    });
    let mean = gray
        .pixels()
        .map(|pixel| u64::from(pixel.0[0]))
        .sum::<u64>()
        / u64::from((gray.width() * gray.height()).max(1));
    let factor = MIN_HEIGHT.div_ceil(gray.height().max(1)).clamp(1, 4);
    let scaled = image::imageops::resize(
        &gray,
        gray.width() * factor,
        gray.height() * factor,
        image::imageops::FilterType::Triangle,
    );
    let (width, height) = scaled.dimensions();
    GrayImage::from_fn(width + 2 * MARGIN, height + 2 * MARGIN, |x, y| {
        if x < MARGIN || y < MARGIN || x >= width + MARGIN || y >= height + MARGIN {
            return image::Luma([255]);
        }
        let value = scaled.get_pixel(x - MARGIN, y - MARGIN).0[0];
        // Light text on a dark theme is inverted to dark on light.
        let invert = (mean < 128) == (polarity == Polarity::AsItLooks);
        image::Luma([if invert { 255 - value } else { value }])
    })
}

impl TesseractReader {
    /// What Tesseract reads in the prepared crop, in page segmentation mode
    /// `mode` (7: a single line; 10: a single character).
    fn read_as(&mut self, prepared: &GrayImage, mode: &str) -> String {
        if self.ready().is_err() {
            return String::new();
        }
        let Some(tess) = self.tess.as_mut() else {
            return String::new();
        };
        let mut png = Vec::new();
        if prepared
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .is_err()
        {
            return String::new();
        }
        if tess.set_image_from_mem(&png).is_err() {
            return String::new();
        }
        let _ = tess.set_variable(Variable::TesseditPagesegMode, mode);
        tess.set_source_resolution(300);
        tess.get_utf8_text().unwrap_or_default().trim().to_owned()
    }
}

/// Whether a reading names something: a letter or digit, or a lone
/// operator glyph (a calculator's `+`).
fn names_something(read: &str) -> bool {
    read.chars().any(char::is_alphanumeric)
        || !reprise_strategies::describe::glyph_label(read).is_empty()
}

impl TextReader for TesseractReader {
    fn ready(&mut self) -> Result<(), ReaderError> {
        if let Some(starting) = self.starting.take() {
            match starting.join() {
                Ok(Ok(tess)) => self.tess = Some(tess),
                Ok(Err(err)) => self.failed = Some(err),
                Err(_) => self.failed = Some("start Tesseract: its start panicked".into()),
            }
        }
        match &self.failed {
            Some(err) => Err(ReaderError(err.clone())),
            None => Ok(()),
        }
    }

    /// A single line of text; a line that reads as nothing is read again
    /// the other way round (white text on a mid-tone highlight, a hovered
    /// menu item's, looks like dark text to the mean). A compact crop that
    /// still reads as nothing (a button's one glyph) is read again as a
    /// single character, in the polarity its look suggests and then the
    /// other.
    fn read(&mut self, crop: &RgbaImage) -> String {
        let line = self.read_as(&prepare(crop), "7");
        if names_something(&line) {
            return line;
        }
        let other = self.read_as(&prepare_as(crop, Polarity::Opposite), "7");
        if names_something(&other) {
            return other;
        }
        let compact = crop.width() <= 2 * crop.height() && crop.height() <= 2 * crop.width();
        if !compact {
            return line;
        }
        for polarity in [Polarity::AsItLooks, Polarity::Opposite] {
            let glyph = self.read_as(&prepare_as(crop, polarity), "10");
            if names_something(&glyph) {
                return glyph;
            }
        }
        line
    }
}
