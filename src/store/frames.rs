//! Lossless frame encoding. A recording stores a whole PNG now and then (a
//! key frame) and, for the frames in between, only the rectangle that differs
//! from the key frame: most frames of a desktop change in a small area (a
//! typed character, a pressed button), so a patch is a small fraction of a
//! frame. Reading a frame pastes its patch onto its key frame; the result is
//! the captured frame, pixel for pixel.

use image::ImageEncoder as _;
use image::RgbaImage;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};

/// A patch is stored instead of a whole frame only while the changed
/// rectangle covers at most this share of the frame.
pub const MAX_PATCH_SHARE: f64 = 0.25;

/// A rectangle of a frame, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// How a frame's image is handed to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameImage {
    /// The image is already stored under the frame's content hash.
    Stored,
    /// The whole frame as PNG.
    Full(Vec<u8>),
    /// The rectangle at `x`, `y` that differs from the image stored under
    /// `base_hash` (a whole frame), as PNG.
    Patch {
        base_hash: String,
        x: u32,
        y: u32,
        png: Vec<u8>,
    },
}

/// The colour of what a stored frame may not show (a secret field).
pub const MASK: image::Rgba<u8> = image::Rgba([128, 128, 128, 255]);

/// Fills `rect` (logical screen coordinates) in a capture of `screen` with
/// [`MASK`], clipped to the image.
pub fn mask_box(
    image: &mut RgbaImage,
    screen: reprise_models::ScreenGeometry,
    rect: reprise_models::Rect,
) {
    let scale = screen.scale_factor;
    let to_pixels = |value: i32, origin: i32| (f64::from(value - origin) * scale).round();
    let left = to_pixels(rect.left, screen.rect.left).max(0.0);
    let top = to_pixels(rect.top, screen.rect.top).max(0.0);
    let right = (to_pixels(rect.left, screen.rect.left) + f64::from(rect.width) * scale)
        .min(f64::from(image.width()));
    let bottom = (to_pixels(rect.top, screen.rect.top) + f64::from(rect.height) * scale)
        .min(f64::from(image.height()));
    for y in top as u32..bottom.max(top) as u32 {
        for x in left as u32..right.max(left) as u32 {
            image.put_pixel(x, y, MASK);
        }
    }
}

/// `image` scaled down, its proportions kept, to `width` pixels where it is
/// wider; as it is otherwise.
pub fn narrowed(image: &RgbaImage, width: u32) -> std::borrow::Cow<'_, RgbaImage> {
    if image.width() <= width {
        return std::borrow::Cow::Borrowed(image);
    }
    let height = (f64::from(image.height()) * f64::from(width) / f64::from(image.width()))
        .round()
        .max(1.0) as u32;
    std::borrow::Cow::Owned(image::imageops::thumbnail(image, width, height))
}

/// Lossless PNG with fast settings: screenshots compress well with the "up"
/// filter, and the fast deflate keeps a 1080p frame's encoding short.
pub fn encode_png(image: &RgbaImage) -> Vec<u8> {
    encode_png_with(image, CompressionType::Fast)
}

/// Lossless PNG for what is kept long (recorded frames and patches): the
/// default deflate, slower than the fast one but smaller.
pub fn encode_png_compact(image: &RgbaImage) -> Vec<u8> {
    encode_png_with(image, CompressionType::Default)
}

fn encode_png_with(image: &RgbaImage, compression: CompressionType) -> Vec<u8> {
    let mut png = Vec::new();
    PngEncoder::new_with_quality(&mut png, compression, FilterType::Up)
        .write_image(
            image.as_raw(),
            image.width(),
            image.height(),
            image::ExtendedColorType::Rgba8,
        )
        .expect("encoding an RGBA image into memory cannot fail");
    png
}

/// The smallest rectangle holding every pixel in which two RGBA frames of
/// the same size differ, or `None` when they are identical.
pub fn changed_rect(before: &[u8], after: &[u8], width: u32, height: u32) -> Option<PatchRect> {
    let row_bytes = width as usize * 4;
    assert_eq!(before.len(), row_bytes * height as usize, "frame size");
    assert_eq!(after.len(), before.len(), "frames of one size");
    let (mut left, mut right) = (usize::MAX, 0);
    let (mut top, mut bottom) = (None, 0);
    for (y, (a, b)) in before
        .chunks_exact(row_bytes)
        .zip(after.chunks_exact(row_bytes))
        .enumerate()
    {
        if a == b {
            continue;
        }
        let first = (0..width as usize)
            .find(|&x| a[x * 4..x * 4 + 4] != b[x * 4..x * 4 + 4])
            .unwrap_or(0);
        let last = (0..width as usize)
            .rev()
            .find(|&x| a[x * 4..x * 4 + 4] != b[x * 4..x * 4 + 4])
            .unwrap_or(first);
        left = left.min(first);
        right = right.max(last);
        top.get_or_insert(y);
        bottom = y;
    }
    let top = top?;
    Some(PatchRect {
        x: left as u32,
        y: top as u32,
        width: (right - left + 1) as u32,
        height: (bottom - top + 1) as u32,
    })
}

/// Encodes `frame` against `key` (a whole frame of the same size): a patch
/// when the change is small enough, else `None` (store the whole frame).
/// `Some(None)` means the frames are identical.
pub fn encode_patch(key: &RgbaImage, frame: &RgbaImage) -> Option<Option<(PatchRect, Vec<u8>)>> {
    if key.dimensions() != frame.dimensions() {
        return None;
    }
    let (width, height) = frame.dimensions();
    let Some(rect) = changed_rect(key.as_raw(), frame.as_raw(), width, height) else {
        return Some(None);
    };
    let share =
        f64::from(rect.width) * f64::from(rect.height) / (f64::from(width) * f64::from(height));
    if share > MAX_PATCH_SHARE {
        return None;
    }
    let patch =
        image::imageops::crop_imm(frame, rect.x, rect.y, rect.width, rect.height).to_image();
    Some(Some((rect, encode_png_compact(&patch))))
}

/// The recorder's side of the encoding: it keeps the last key frame and
/// decides, frame by frame, between a patch and a new key frame. A patch
/// grows as changes pile up since the key frame (text typed into a terminal),
/// so once the patches since the key frame have cost as many bytes as the key
/// frame itself, the next frame becomes a key frame: within twice the best
/// choice of key frames, whatever the rate of change.
#[derive(Debug, Default)]
pub struct FrameEncoder {
    key: Option<KeyFrame>,
}

#[derive(Debug)]
struct KeyFrame {
    hash: String,
    image: RgbaImage,
    png_bytes: usize,
    patch_bytes: usize,
}

impl FrameEncoder {
    /// How to store `image`. Nothing changes
    /// until [`FrameEncoder::sent`] says the frame was taken.
    pub fn encode(&self, image: &RgbaImage) -> FrameImage {
        let patch = self
            .key
            .as_ref()
            .filter(|key| key.patch_bytes < key.png_bytes)
            .and_then(|key| Some((key, encode_patch(&key.image, image)?)));
        match patch {
            Some((_, None)) => FrameImage::Stored,
            Some((key, Some((rect, png)))) => FrameImage::Patch {
                base_hash: key.hash.clone(),
                x: rect.x,
                y: rect.y,
                png,
            },
            None => FrameImage::Full(encode_png_compact(image)),
        }
    }

    /// The frame was handed over: a whole one becomes the key frame (the
    /// only case in which its pixels are copied).
    pub fn sent(&mut self, hash: String, image: &RgbaImage, sent: Sent) {
        match (sent, self.key.as_mut()) {
            (Sent::KeyFrame { png_bytes }, _) => {
                self.key = Some(KeyFrame {
                    hash,
                    image: image.clone(),
                    png_bytes,
                    patch_bytes: 0,
                });
            }
            (Sent::Patch { png_bytes }, Some(key)) => key.patch_bytes += png_bytes,
            _ => {}
        }
    }
}

/// What [`FrameEncoder::sent`] needs of an encoded frame, taken before the
/// frame is handed over (so the encoded bytes move, uncopied).
#[derive(Debug, Clone, Copy)]
pub enum Sent {
    KeyFrame { png_bytes: usize },
    Patch { png_bytes: usize },
    Stored,
}

impl FrameImage {
    /// What the encoder keeps of this frame once it is taken.
    pub fn sent(&self) -> Sent {
        match self {
            FrameImage::Full(png) => Sent::KeyFrame {
                png_bytes: png.len(),
            },
            FrameImage::Patch { png, .. } => Sent::Patch {
                png_bytes: png.len(),
            },
            FrameImage::Stored => Sent::Stored,
        }
    }
}

/// Why a patch cannot be pasted onto its key frame.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("the {what} cannot be decoded: {source}")]
    Decode {
        what: &'static str,
        source: image::ImageError,
    },
    #[error(
        "a {patch_width}x{patch_height} patch at {x},{y} does not fit in a {width}x{height} key frame"
    )]
    DoesNotFit {
        patch_width: u32,
        patch_height: u32,
        x: u32,
        y: u32,
        width: u32,
        height: u32,
    },
}

/// Decodes PNG bytes into RGBA pixels.
pub fn decode_png(png: &[u8]) -> Result<RgbaImage, image::ImageError> {
    Ok(image::load_from_memory_with_format(png, image::ImageFormat::Png)?.into_rgba8())
}

/// Pastes a patch (PNG) onto its key frame (PNG) at `x`, `y` and returns the
/// frame as PNG. Fails when either image cannot be decoded or the patch does
/// not fit inside the key frame.
pub fn apply_patch(
    key_png: &[u8],
    x: u32,
    y: u32,
    patch_png: &[u8],
) -> Result<Vec<u8>, PatchError> {
    Ok(encode_png(&patched(key_png, x, y, patch_png)?))
}

/// The frame a patch (PNG) at `x`, `y` makes of its key frame (PNG), as
/// pixels: what [`apply_patch`] gives, without encoding it again.
pub fn patched(key_png: &[u8], x: u32, y: u32, patch_png: &[u8]) -> Result<RgbaImage, PatchError> {
    let frame = decode_png(key_png).map_err(|source| PatchError::Decode {
        what: "key frame",
        source,
    })?;
    patched_onto(frame, x, y, patch_png)
}

/// A frame stored as a patch, composed: `patch_png` pasted at `x`, `y` onto
/// its key frame's pixels (for callers that decoded the key frame once).
pub fn patched_onto(
    mut frame: RgbaImage,
    x: u32,
    y: u32,
    patch_png: &[u8],
) -> Result<RgbaImage, PatchError> {
    let patch = decode_png(patch_png).map_err(|source| PatchError::Decode {
        what: "patch",
        source,
    })?;
    let fits = u64::from(x) + u64::from(patch.width()) <= u64::from(frame.width())
        && u64::from(y) + u64::from(patch.height()) <= u64::from(frame.height());
    if !fits {
        return Err(PatchError::DoesNotFit {
            patch_width: patch.width(),
            patch_height: patch.height(),
            x,
            y,
            width: frame.width(),
            height: frame.height(),
        });
    }
    image::imageops::replace(&mut frame, &patch, i64::from(x), i64::from(y));
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    fn desktop() -> RgbaImage {
        RgbaImage::from_fn(200, 120, |x, y| {
            Rgba([(x / 10) as u8 * 9, (y / 10) as u8 * 17, 80, 255])
        })
    }

    fn decode(png: &[u8]) -> RgbaImage {
        image::load_from_memory(png).unwrap().into_rgba8()
    }

    #[test]
    fn the_changed_rect_is_the_tightest_box_around_every_change() {
        let key = desktop();
        assert_eq!(changed_rect(key.as_raw(), key.as_raw(), 200, 120), None);
        let mut frame = key.clone();
        frame.put_pixel(17, 30, Rgba([0, 0, 0, 255]));
        frame.put_pixel(150, 31, Rgba([0, 0, 0, 255]));
        frame.put_pixel(90, 99, Rgba([0, 0, 0, 255]));
        let rect = changed_rect(key.as_raw(), frame.as_raw(), 200, 120).unwrap();
        assert_eq!(
            rect,
            PatchRect {
                x: 17,
                y: 30,
                width: 134,
                height: 70
            }
        );
        // A change in the alpha channel alone is a change; the corners count.
        let mut corner = key.clone();
        corner.put_pixel(199, 119, Rgba([0, 0, 80, 254]));
        let rect = changed_rect(key.as_raw(), corner.as_raw(), 200, 120).unwrap();
        assert_eq!((rect.x, rect.y, rect.width, rect.height), (199, 119, 1, 1));
    }

    #[test]
    fn a_patch_applied_to_its_key_frame_gives_the_frame_back_exactly() {
        let key = desktop();
        let mut frame = key.clone();
        for x in 40..70 {
            for y in 50..60 {
                frame.put_pixel(x, y, Rgba([255, x as u8, y as u8, 255]));
            }
        }
        let (rect, patch) = encode_patch(&key, &frame).unwrap().unwrap();
        assert_eq!((rect.x, rect.y, rect.width, rect.height), (40, 50, 30, 10));
        assert!(
            patch.len() < encode_png(&frame).len() / 3,
            "a patch is small"
        );
        let rebuilt = apply_patch(&encode_png(&key), rect.x, rect.y, &patch).unwrap();
        assert_eq!(decode(&rebuilt), frame);
    }

    #[test]
    fn a_large_change_or_another_size_is_stored_whole() {
        let key = desktop();
        let inverted = RgbaImage::from_fn(200, 120, |x, y| {
            let Rgba([r, g, b, a]) = *key.get_pixel(x, y);
            Rgba([255 - r, 255 - g, 255 - b, a])
        });
        assert_eq!(encode_patch(&key, &inverted), None);
        assert_eq!(encode_patch(&key, &RgbaImage::new(100, 60)), None);
        assert_eq!(encode_patch(&key, &key.clone()), Some(None));
    }

    #[test]
    fn a_patch_that_does_not_fit_or_does_not_decode_is_an_error() {
        let key = encode_png(&desktop());
        let patch = encode_png(&RgbaImage::new(20, 20));
        let err = apply_patch(&key, 190, 0, &patch).unwrap_err();
        assert!(
            matches!(err, PatchError::DoesNotFit { x: 190, .. }),
            "{err}"
        );
        let err = apply_patch(&key, 0, 0, b"not a png").unwrap_err();
        assert!(
            matches!(err, PatchError::Decode { what: "patch", .. }),
            "{err}"
        );
    }

    #[test]
    fn the_encoder_takes_a_new_key_frame_once_patches_cost_as_much_as_the_key() {
        let mut encoder = FrameEncoder::default();
        let key = desktop();
        let first = encoder.encode(&key);
        let FrameImage::Full(key_png) = &first else {
            panic!("the first frame is whole: {first:?}")
        };
        let key_bytes = key_png.len();
        encoder.sent("key".into(), &key, first.sent());
        assert_eq!(encoder.encode(&key), FrameImage::Stored);
        // Frames that each add a noisy stripe: patches until their bytes add
        // up to the key frame's, then a whole frame.
        let mut frame = key.clone();
        let (mut patches, mut patch_bytes) = (0, 0);
        for step in 0..40u32 {
            for x in 0..30 {
                for y in 0..4 {
                    let noise = (x * 37 + y * 101 + step * 53) as u8;
                    frame.put_pixel(
                        10 + x,
                        4 * step % 112 + y,
                        Rgba([noise, !noise, noise / 3, 255]),
                    );
                }
            }
            let encoded = encoder.encode(&frame);
            match &encoded {
                FrameImage::Patch { base_hash, png, .. } => {
                    assert_eq!(base_hash, "key");
                    assert!(
                        patch_bytes < key_bytes,
                        "a patch only while patches cost less"
                    );
                    patches += 1;
                    patch_bytes += png.len();
                }
                FrameImage::Full(_) => {
                    assert!(
                        patch_bytes >= key_bytes,
                        "a new key only once patches cost as much"
                    );
                    assert!(patches > 1);
                    encoder.sent(format!("key{step}"), &frame, encoded.sent());
                    assert!(matches!(encoder.encode(&frame), FrameImage::Stored));
                    return;
                }
                FrameImage::Stored => panic!("every frame changed"),
            }
            encoder.sent(format!("frame{step}"), &frame, encoded.sent());
        }
        panic!(
            "no new key frame after {patches} patches of {patch_bytes} bytes (key: {key_bytes})"
        );
    }
}
