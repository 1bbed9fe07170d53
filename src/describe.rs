//! The offline describer's text reader: Tesseract through leptess, one crop
//! at a time, as a single line of text, upscaled when small (whole-screen OCR
//! reads boxed single glyphs such as xcalc's buttons as garbage). Set
//! `OMP_THREAD_LIMIT=1`: on two cores it is several times faster.

use image::{GrayImage, RgbaImage};
use leptess::{LepTess, Variable};
use reprise_strategies::describe::TextReader;

/// Crops are scaled up to at least this height before reading.
const MIN_HEIGHT: u32 = 40;
/// White margin around the text, which Tesseract reads better with.
const MARGIN: u32 = 10;

pub struct TesseractReader {
    tess: LepTess,
}

impl std::fmt::Debug for TesseractReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TesseractReader").finish_non_exhaustive()
    }
}

impl TesseractReader {
    pub fn new() -> anyhow::Result<TesseractReader> {
        let tess = LepTess::new(None, "eng").map_err(|err| {
            anyhow::anyhow!(
                "start Tesseract (are tesseract-ocr and tesseract-ocr-eng installed?): {err}"
            )
        })?;
        Ok(TesseractReader { tess })
    }
}

/// The crop as dark text on white, scaled up and with a margin.
pub fn prepare(crop: &RgbaImage) -> GrayImage {
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
        image::Luma([if mean < 128 { 255 - value } else { value }])
    })
}

impl TextReader for TesseractReader {
    fn read(&mut self, crop: &RgbaImage) -> String {
        let prepared = prepare(crop);
        let mut png = Vec::new();
        if prepared
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .is_err()
        {
            return String::new();
        }
        if self.tess.set_image_from_mem(&png).is_err() {
            return String::new();
        }
        // A single line of text (page segmentation mode 7).
        let _ = self.tess.set_variable(Variable::TesseditPagesegMode, "7");
        self.tess.set_source_resolution(300);
        self.tess
            .get_utf8_text()
            .unwrap_or_default()
            .trim()
            .to_owned()
    }
}
