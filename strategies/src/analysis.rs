//! The analysis pipeline of a window image: segmented, then described,
//! through the segmentation cache when it allows reuse (the rule is the
//! cache's). Preparation and replay both analyse through [`Vision`].

use image::RgbaImage;

use crate::Frame;
use crate::describe::{Describer, Description};
use crate::vision::cache::{Probe, SegmentationCache};
use crate::vision::scale::{WindowMapping, window_crop};
use crate::vision::{PixelRect, Segment, Segmenter};

/// Why a window image could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Segment(#[from] crate::vision::VisionError),
    #[error(transparent)]
    Describe(#[from] crate::describe::DescribeError),
}

/// Counters for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct VisualStats {
    pub segmentations: u64,
    pub cache_hits: u64,
    pub describe_calls: u64,
}

/// The segmenter, describer and cache that both preparation and replay use.
pub struct Vision {
    pub segmenter: Box<dyn Segmenter>,
    pub describer: Box<dyn Describer>,
    pub cache: Option<SegmentationCache>,
    pub stats: VisualStats,
}

reprise_models::debug_showing!(Vision, stats);

impl Vision {
    /// Segments and describes a window image, reusing a cached segmentation
    /// (and its descriptions) when the cache allows.
    pub fn analyse(
        &mut self,
        window: &RgbaImage,
        target_hint: Option<PixelRect>,
    ) -> Result<(Vec<Segment>, Vec<Description>), AnalysisError> {
        // The segmenter and describer name the rows they may reuse: a new
        // version of either never reuses an older one's.
        let name = format!(
            "{}+{}",
            self.segmenter.cache_name(),
            self.describer.cache_name()
        );
        let mut cache = self.cache.as_mut().map(|cache| (cache, Probe::of(window)));
        let cached = cache
            .as_mut()
            .and_then(|(cache, probe)| cache.lookup(&name, probe, target_hint));
        let (segments, cached_id, cached_descriptions) = match cached {
            Some(cached) => {
                self.stats.cache_hits += 1;
                (cached.segments, Some(cached.id), cached.descriptions)
            }
            None => {
                self.stats.segmentations += 1;
                let segments = self.segmenter.segment(window)?;
                let id = cache
                    .as_mut()
                    .and_then(|(cache, probe)| cache.insert(&name, probe, &segments));
                (segments, id, None)
            }
        };
        let descriptions = match cached_descriptions {
            Some(descriptions) if descriptions.len() == segments.len() => descriptions,
            _ => {
                self.stats.describe_calls += 1;
                let descriptions = self.describer.describe(window, &segments)?;
                if let (Some((cache, _)), Some(id)) = (cache.as_mut(), cached_id) {
                    cache.set_descriptions(id, &descriptions);
                }
                descriptions
            }
        };
        Ok((segments, descriptions))
    }
}

/// A window's pixels in a frame (those of its box on the screen), with the
/// mapping back to the screen.
pub(crate) fn window_image(
    frame: &Frame,
    window: &reprise_models::Rect,
) -> Option<(RgbaImage, WindowMapping)> {
    let (crop, mapping) = window_crop(&frame.screen, frame.image.dimensions(), window)?;
    let image =
        image::imageops::crop_imm(&frame.image, crop.x, crop.y, crop.width, crop.height).to_image();
    Some((image, mapping))
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use super::*;
    use crate::describe::DescribeError;
    use crate::vision::cache::memory::Rows;
    use crate::vision::{SegmentKind, VisionError};

    const BUTTON: PixelRect = PixelRect {
        x: 20,
        y: 30,
        width: 60,
        height: 20,
    };

    /// One button, counting its calls; `version` is its cache name's.
    struct OneButton {
        calls: Rc<Cell<u32>>,
        version: u32,
    }

    impl Segmenter for OneButton {
        fn cache_name(&self) -> String {
            format!("one-button-{}", self.version)
        }

        fn segment(&self, _image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
            self.calls.set(self.calls.get() + 1);
            Ok(Segment::full(SegmentKind::Region, BUTTON)
                .into_iter()
                .collect())
        }
    }

    /// Names every segment "button", counting its calls.
    struct Buttons(Rc<Cell<u32>>);

    impl Describer for Buttons {
        fn name(&self) -> &'static str {
            "buttons"
        }

        fn cache_name(&self) -> &'static str {
            "buttons-1"
        }

        fn describe(
            &mut self,
            _window: &RgbaImage,
            segments: &[Segment],
        ) -> Result<Vec<Description>, DescribeError> {
            self.0.set(self.0.get() + 1);
            Ok(segments
                .iter()
                .map(|_| Description {
                    text: "button".into(),
                    role: "button".into(),
                    label: String::new(),
                })
                .collect())
        }
    }

    fn window(shade: u8, corner: u8) -> RgbaImage {
        RgbaImage::from_fn(200, 120, |x, y| {
            let v = if BUTTON.contains_point(x, y) {
                shade
            } else if x > 150 && y > 80 {
                corner
            } else {
                ((x / 10 + y / 10) % 2 * 40 + 180) as u8
            };
            image::Rgba([v, v, v, 255])
        })
    }

    /// The segmenter's and describer's calls after analysing each image
    /// in turn through one cache (the segmenter's version per image).
    fn check(images: &[(RgbaImage, u32)]) -> (u32, u32, VisualStats) {
        let rows = Rc::new(RefCell::new(Rows::default()));
        let (segmentations, descriptions) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let mut stats = VisualStats::default();
        for (image, version) in images {
            let mut vision = Vision {
                segmenter: Box::new(OneButton {
                    calls: Rc::clone(&segmentations),
                    version: *version,
                }),
                describer: Box::new(Buttons(Rc::clone(&descriptions))),
                cache: Some(SegmentationCache::strict(Box::new(Rc::clone(&rows)))),
                stats,
            };
            let (segments, described) = vision.analyse(image, Some(BUTTON)).unwrap();
            assert_eq!((segments.len(), described.len()), (1, 1));
            stats = vision.stats;
        }
        (segmentations.get(), descriptions.get(), stats)
    }

    #[test]
    fn a_window_analysed_before_is_reused_only_when_nothing_but_noise_changed() {
        // The same window again: segmented and described once.
        let (segmented, described, stats) = check(&[(window(100, 60), 1), (window(100, 60), 1)]);
        assert_eq!((segmented, described), (1, 1));
        assert_eq!((stats.segmentations, stats.cache_hits), (1, 1));
        // A new version of the segmenter never reuses the old one's rows.
        let (segmented, ..) = check(&[(window(100, 60), 1), (window(100, 60), 2)]);
        assert_eq!(segmented, 2);
        // The target changed: analysed afresh.
        let (segmented, ..) = check(&[(window(100, 60), 1), (window(160, 60), 1)]);
        assert_eq!(segmented, 2);
        // Something changed outside the target (a replay decision's cache
        // is strict): analysed afresh too.
        let (segmented, ..) = check(&[(window(100, 60), 1), (window(100, 250), 1)]);
        assert_eq!(segmented, 2);
    }
}
