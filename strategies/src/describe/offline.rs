//! The offline describer: the text inside each segment (read by a
//! [`TextReader`]), the segment's kind and shape, and the text of its nearest
//! label, giving stable descriptions such as `button "Save"` or
//! `text field labelled "User name"`. No model is asked.

use image::RgbaImage;

use super::{
    DescribeError, Describer, Description, OFFLINE_DESCRIBER_CACHE_NAME, TextReader, has_ink,
    label_of,
};
use crate::vision::{Segment, SegmentKind};

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

    fn ready(&mut self) -> Result<(), DescribeError> {
        Ok(self.reader.ready()?)
    }

    fn describe(
        &mut self,
        window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError> {
        // Nothing is described (and cached) by a reader that cannot read.
        self.reader.ready()?;
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
                label_of(&self.reader.read(&crop))
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
    use crate::describe::{has_ink, segment};

    struct Fixed(Vec<&'static str>);

    impl TextReader for Fixed {
        fn read(&mut self, _: &RgbaImage) -> String {
            self.0.remove(0).to_owned()
        }
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
            segment(SegmentKind::Region, 120, 50, 24, 24),
            segment(SegmentKind::Region, 150, 50, 24, 24),
        ];
        let mut describer = OfflineDescriber::new(Fixed(vec![
            "User name:",
            "",
            " Save\n",
            "Remember me",
            "+",
            "|",
        ]));
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
                "checkbox \"remember me\"",
                // A calculator's operator keeps its glyph; a border read as
                // a bar is nothing.
                "button \"+\"",
                "small box"
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
