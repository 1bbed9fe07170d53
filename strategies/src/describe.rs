//! Describers name each segment of a window so that a recorded target can be
//! found again by its description.
//!
//! The offline describer needs no model: the text inside the segment (read by
//! a [`TextReader`], Tesseract in the application), the segment's kind and
//! shape, and the text of its nearest label, giving stable descriptions such
//! as `button "Save"` or `text field labelled "User name"`.

use image::RgbaImage;

pub use crate::vision::Description;
use crate::vision::{Segment, SegmentKind};

/// Reads the text in an image of one segment.
pub trait TextReader {
    fn read(&mut self, crop: &RgbaImage) -> String;
}

/// Why descriptions could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DescribeError {
    #[error("the model could not describe the segments: {0}")]
    Model(#[from] crate::llm::FeedbackError),
    #[error("render the prompt that describes the segments: {0}")]
    Prompt(crate::vanilla::RenderError),
}

/// Names every segment of a window image, in the segments' order.
pub trait Describer {
    fn name(&self) -> &'static str;
    /// Its name and version in the segmentation cache: descriptions kept
    /// under another name are never reused.
    fn cache_name(&self) -> &'static str;
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

/// Whether an image holds anything but its background: at least a few
/// pixels far from its median luminance.
pub fn has_ink(image: &RgbaImage) -> bool {
    let luminance: Vec<u8> = image
        .pixels()
        .map(|pixel| {
            let [r, g, b, _] = pixel.0;
            ((u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114) / 1000) as u8
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
pub const OFFLINE_DESCRIBER_CACHE_NAME: &str = "offline-2";

/// The LLM describer's name and version in the segmentation cache.
pub const LLM_DESCRIBER_CACHE_NAME: &str = "llm-1";

/// The offline describer: OCR per segment plus shape and neighbourhood.
pub struct OfflineDescriber<R: TextReader> {
    reader: R,
}

impl<R: TextReader> std::fmt::Debug for OfflineDescriber<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineDescriber").finish_non_exhaustive()
    }
}

impl<R: TextReader> OfflineDescriber<R> {
    pub fn new(reader: R) -> Self {
        OfflineDescriber { reader }
    }
}

fn role_of(segment: &Segment, label: &str) -> &'static str {
    let rect = segment.rect;
    match segment.kind {
        SegmentKind::LabelledControl => "checkbox",
        SegmentKind::Text => "text",
        SegmentKind::Outline => "box",
        SegmentKind::Row => "list row",
        SegmentKind::Slider => "slider",
        SegmentKind::Region if rect.width <= 28 && rect.height <= 28 && label.is_empty() => {
            "small box"
        }
        SegmentKind::Region if label.is_empty() && rect.width >= 3 * rect.height => "text field",
        SegmentKind::Region if rect.height <= 48 => "button",
        SegmentKind::Region => "panel",
    }
}

impl<R: TextReader> Describer for OfflineDescriber<R> {
    fn name(&self) -> &'static str {
        "offline"
    }

    fn cache_name(&self) -> &'static str {
        OFFLINE_DESCRIBER_CACHE_NAME
    }

    fn describe(
        &mut self,
        window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError> {
        let labels: Vec<String> = segments
            .iter()
            .map(|segment| {
                let rect = segment.rect;
                if rect.right() > window.width()
                    || rect.bottom() > window.height()
                    || rect.height > 64
                {
                    return String::new();
                }
                // Inset past borders and rounded corners, and read only what
                // has ink: an empty field's edges read as stray letters.
                let inset = if rect.width > 12 && rect.height > 12 {
                    3
                } else {
                    0
                };
                let crop = image::imageops::crop_imm(
                    window,
                    rect.x + inset,
                    rect.y + inset,
                    rect.width - 2 * inset,
                    rect.height - 2 * inset,
                )
                .to_image();
                if !has_ink(&crop) {
                    return String::new();
                }
                normalise(&self.reader.read(&crop))
            })
            .collect();
        let descriptions = segments
            .iter()
            .zip(&labels)
            .map(|(segment, label)| {
                let role = role_of(segment, label);
                let text = if role == "text field" {
                    // An empty field is known by the label before it on its row.
                    let rect = segment.rect;
                    let centre = rect.y + rect.height / 2;
                    let nearest = segments
                        .iter()
                        .zip(&labels)
                        .filter(|(other, other_label)| {
                            !other_label.is_empty()
                                && other.rect.right() <= rect.x + 2
                                && other.rect.y <= centre
                                && other.rect.bottom() >= centre
                        })
                        .max_by_key(|(other, _)| other.rect.right());
                    match nearest {
                        Some((_, name)) => format!("text field labelled \"{name}\""),
                        None => "text field".to_owned(),
                    }
                } else if label.is_empty() {
                    role.to_owned()
                } else {
                    format!("{role} \"{label}\"")
                };
                Description {
                    text,
                    role: role.to_owned(),
                    label: label.clone(),
                }
            })
            .collect();
        Ok(descriptions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::PixelRect;

    struct Fixed(Vec<&'static str>);

    impl TextReader for Fixed {
        fn read(&mut self, _: &RgbaImage) -> String {
            self.0.remove(0).to_owned()
        }
    }

    pub(super) fn segment(kind: SegmentKind, x: u32, y: u32, width: u32, height: u32) -> Segment {
        Segment::full(
            kind,
            PixelRect {
                x,
                y,
                width,
                height,
            },
        )
        .unwrap()
    }

    #[test]
    fn buttons_fields_and_checkboxes_get_stable_descriptions() {
        // Every segment has some ink, so each is read.
        let window = RgbaImage::from_fn(300, 100, |x, y| {
            let v = if (x + y) % 9 == 0 { 0 } else { 230 };
            image::Rgba([v, v, v, 255])
        });
        let segments = vec![
            segment(SegmentKind::Text, 2, 10, 70, 16),
            segment(SegmentKind::Region, 80, 8, 200, 20),
            segment(SegmentKind::Region, 8, 50, 43, 20),
            segment(SegmentKind::LabelledControl, 8, 75, 100, 20),
        ];
        let mut describer =
            OfflineDescriber::new(Fixed(vec!["User name:", "", " Save\n", "Remember me"]));
        let texts: Vec<String> = describer
            .describe(&window, &segments)
            .unwrap()
            .into_iter()
            .map(|d| d.text)
            .collect();
        assert_eq!(
            texts,
            [
                "text \"user name\"",
                "text field labelled \"user name\"",
                "button \"save\"",
                "checkbox \"remember me\""
            ]
        );
    }

    #[test]
    fn a_flat_crop_has_no_ink() {
        let flat = RgbaImage::from_pixel(40, 20, image::Rgba([30, 30, 30, 255]));
        assert!(!has_ink(&flat));
        let mut text = flat.clone();
        for x in 5..20 {
            text.put_pixel(x, 10, image::Rgba([220, 220, 220, 255]));
        }
        assert!(has_ink(&text));
    }
}

/// The model describer (OpenAdapt's description step): the window image and
/// the numbered crops of its segments go to the model, batched by its image
/// limit; it answers with exactly one description per segment, and a count
/// mismatch is fed back into the next attempt, with a bound.
pub struct LlmDescriber {
    llm: Box<dyn crate::llm::Llm>,
    render: crate::vanilla::RenderPrompt,
    max_attempts: u32,
    /// Model calls made (not answered from the cache).
    pub calls: u64,
}

impl std::fmt::Debug for LlmDescriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmDescriber")
            .field("calls", &self.calls)
            .finish_non_exhaustive()
    }
}

impl LlmDescriber {
    pub fn new(llm: Box<dyn crate::llm::Llm>, render: crate::vanilla::RenderPrompt) -> Self {
        LlmDescriber {
            llm,
            render,
            max_attempts: 3,
            calls: 0,
        }
    }
}

fn png_of(image: &RgbaImage) -> Vec<u8> {
    let mut png = Vec::new();
    let _ = image.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png);
    png
}

impl Describer for LlmDescriber {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn cache_name(&self) -> &'static str {
        LLM_DESCRIBER_CACHE_NAME
    }

    fn describe(
        &mut self,
        window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError> {
        use crate::llm::{LlmRequest, Message, Part, Role, Unusable, complete_json};
        // One image slot is the window's; the rest carry crops.
        let per_batch = self.llm.max_images_per_request().saturating_sub(1).max(1);
        let window_png = png_of(window);
        let mut descriptions = Vec::with_capacity(segments.len());
        for (batch_idx, batch) in segments.chunks(per_batch).enumerate() {
            let first_index = batch_idx * per_batch;
            let values = std::collections::HashMap::from([
                ("n_segments", batch.len().to_string()),
                ("first_index", first_index.to_string()),
            ]);
            let prompt =
                (self.render)("describe_segments", &values).map_err(DescribeError::Prompt)?;
            let mut parts = vec![Part::Text(prompt), Part::Png(window_png.clone())];
            for segment in batch {
                parts.push(Part::Png(png_of(&segment.masked_crop(window))));
            }
            let request = LlmRequest {
                purpose: "describe".into(),
                system: "You describe the elements of desktop application windows.".into(),
                messages: vec![Message {
                    role: Role::User,
                    parts,
                }],
                max_output_tokens: 40 * batch.len() as u32 + 100,
            };
            let expected = batch.len();
            let (texts, replies) =
                complete_json(self.llm.as_mut(), &request, self.max_attempts, |answer| {
                    let items = answer
                        .as_array()
                        .ok_or("the answer must be a JSON array of strings")?;
                    if items.len() != expected {
                        return Err(Unusable(format!(
                            "expected exactly {expected} descriptions, one per element, but got {}",
                            items.len()
                        )));
                    }
                    items
                        .iter()
                        .map(|item| {
                            item.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| Unusable::from("every description must be a string"))
                        })
                        .collect::<Result<Vec<String>, Unusable>>()
                })?;
            self.calls += replies.iter().filter(|reply| !reply.cached).count() as u64;
            descriptions.extend(texts.into_iter().map(|text| {
                let label = normalise(&text);
                Description {
                    text: label.clone(),
                    role: String::new(),
                    label,
                }
            }));
        }
        Ok(descriptions)
    }
}

#[cfg(test)]
mod llm_tests {
    use super::tests::segment;
    use super::*;
    use crate::llm::Part;
    use crate::scripted::ScriptedLlm;

    #[test]
    fn batches_by_the_image_limit_and_feeds_a_count_mismatch_back() {
        let window = RgbaImage::new(100, 40);
        let segments: Vec<Segment> = (0..3)
            .map(|idx| segment(SegmentKind::Region, idx * 30, 5, 20, 10))
            .collect();
        let llm = ScriptedLlm::new(
            &[
                r#"["Save button"]"#,
                r#"["Save button", "Cancel button"]"#,
                r#"["Help"]"#,
            ],
            3,
        );
        let mut describer = LlmDescriber::new(
            Box::new(llm),
            Box::new(|_, values| Ok(format!("describe {}", values["n_segments"]))),
        );
        let texts: Vec<String> = describer
            .describe(&window, &segments)
            .unwrap()
            .into_iter()
            .map(|d| d.text)
            .collect();
        assert_eq!(texts, ["save button", "cancel button", "help"]);
        assert_eq!(describer.calls, 3, "two batches (2 + 1 crops), one retried");
    }

    #[test]
    fn a_persistently_wrong_count_is_an_error() {
        let window = RgbaImage::new(100, 40);
        let segments = vec![segment(SegmentKind::Region, 0, 0, 20, 10)];
        let llm = ScriptedLlm::new(&["[]", "[]", "[]"], 3);
        let mut describer =
            LlmDescriber::new(Box::new(llm), Box::new(|_, _| Ok("describe".into())));
        let err = describer.describe(&window, &segments).unwrap_err();
        assert!(
            err.to_string().contains("expected exactly 1 descriptions"),
            "{err}"
        );
        let _ = Part::Text(String::new());
    }
}
