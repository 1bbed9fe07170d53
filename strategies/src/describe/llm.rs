//! The model describer: the window image and the numbered crops of its
//! segments go to the model, batched by its image limit.

use image::RgbaImage;

use super::{DescribeError, Describer, Description, LLM_DESCRIBER_CACHE_NAME, normalise};
use crate::vision::Segment;

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

reprise_models::debug_showing!(LlmDescriber, calls);

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

    fn runs_here(&self) -> bool {
        false
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
    use super::*;
    use crate::describe::segment;
    use crate::llm::Part;
    use crate::scripted::ScriptedLlm;
    use crate::vision::SegmentKind;

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
