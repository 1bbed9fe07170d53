//! The visual rung: a step's target found in the pixels of its area now
//! (the window, or the popup a press was made in) by its fingerprint, or a
//! step replayed as recorded or at the same place in its window.

use super::*;

impl VisualStrategy {
    /// The visual rung's answer for a step the structural rung did not
    /// decide.
    pub(super) fn pixel_rung(
        &mut self,
        planned: &PlannedStep,
        observation: &Observation<'_>,
    ) -> Result<Found, StrategyError> {
        let tree = &planned.tree;
        if !self.rungs.visual && matches!(planned.target, Target::Element { .. }) {
            return Err(StrategyError::Retryable(format!(
                "the recording names no element for {}, and the visual rung is off",
                tree.label()
            )));
        }
        match &planned.target {
            Target::AsRecorded => Ok(Found {
                point: tree.position(),
                by: FoundBy::AsRecorded,
                reason: "not aimed at an element: replayed as recorded".into(),
            }),
            Target::ScreenPlace { look } => {
                let screen = observation.frame.screen.rect;
                same_look(tree, look.as_ref(), observation.frame, &screen)?;
                Ok(Found {
                    point: tree.position(),
                    by: FoundBy::AsRecorded,
                    reason: "made outside any window the recording knew: at its recorded place \
                             on the screen, which looks as it did"
                        .into(),
                })
            }
            Target::WindowRelative { dx, dy, area, look } => {
                let (rect, name) = area_now(*area, observation)?;
                let looks = if is_pointer_target(tree) {
                    same_look(tree, look.as_ref(), observation.frame, &rect)?;
                    ", which looks as it did"
                } else {
                    ""
                };
                Ok(Found {
                    point: Some((f64::from(rect.left) + dx, f64::from(rect.top) + dy)),
                    by: FoundBy::WindowPlace,
                    reason: format!("the same place in {name} as recorded{looks}"),
                })
            }
            Target::Element { .. } => {
                let sought = planned.target.sought().expect("an element target");
                let found = self.find_in_pixels(tree, &sought, observation)?;
                self.findings.target = Some(found.rect);
                Ok(Found {
                    point: Some(found.point),
                    by: found.by,
                    reason: found.reason,
                })
            }
        }
    }

    /// The recorded target found in the pixels of its area now (the visual
    /// rung): its box on the screen, the point to press, and how it was
    /// found. A failed search leaves its closest candidates in
    /// the findings.
    pub(super) fn find_in_pixels(
        &mut self,
        tree: &ActionEvent,
        &Sought {
            fingerprint,
            window_rect,
            press,
            area,
        }: &Sought<'_>,
        observation: &Observation<'_>,
    ) -> Result<PixelFind, StrategyError> {
        let (rect, place) = area_now(area, observation)?;
        let (image, mapping) = window_image(observation.frame, &rect)
            .ok_or_else(|| StrategyError::Retryable(format!("{place} is off the screen")))?;
        let hint = (window_rect.right() <= image.width() && window_rect.bottom() <= image.height())
            .then_some(*window_rect);
        let (segments, descriptions) = self
            .vision
            .analyse(&image, hint)
            .map_err(|err| StrategyError::Retryable(err.to_string()))?;
        let candidate = |idx: usize, score: f64, measure: &str| crate::Candidate {
            description: descriptions[idx].text.clone(),
            score,
            measure: measure.to_owned(),
            rect: Some(image_rect_on_screen(&mapping, &segments[idx].rect)),
        };
        let found = match find_target(fingerprint, &segments, &descriptions, &image, &self.options)
        {
            Ok(found) => found,
            Err(err) => {
                self.findings.candidates =
                    matching::closest(fingerprint, &segments, &descriptions, &image)
                        .into_iter()
                        .map(|(idx, score, measure)| candidate(idx, score, measure))
                        .collect();
                return Err(match err {
                    matching::MatchError::NotFound(_) => StrategyError::Retryable(err.to_string()),
                    matching::MatchError::Ambiguous(_) => StrategyError::Fatal(err.to_string()),
                });
            }
        };
        // A row member is itself only in its row: the one the pixels found,
        // or among its look-alikes (its namesakes in other rows), the one
        // whose line shows the other cells of its row (its band, as
        // recorded); never the one at its place, nor a namesake alone.
        let found = match pressed_element(tree) {
            Some(element)
                if reprise_models::element::is_row_member(element.role)
                    && !element.band.is_empty() =>
            {
                let text = &descriptions[found.segment_idx].text;
                let alike: Vec<usize> = (0..segments.len())
                    .filter(|&idx| &descriptions[idx].text == text)
                    .collect();
                let in_row: Vec<usize> = alike
                    .iter()
                    .copied()
                    .filter(|&idx| band_on_line(&element.band, idx, &segments, &descriptions))
                    .collect();
                match in_row[..] {
                    [only] => matching::Found {
                        segment_idx: only,
                        how: format!(
                            "its description and its row's other cells ({}) on its line",
                            element.band.join(", ")
                        ),
                        by: FoundBy::Exact,
                    },
                    _ => {
                        return Err(StrategyError::Retryable(format!(
                            "{} of the {} elements in {place} that look like {} show the rest of its row ({}) on their line: a namesake or a place is no identity, refusing to guess",
                            in_row.len(),
                            alike.len(),
                            element.label(),
                            element.band.join(", ")
                        )));
                    }
                }
            }
            _ => found,
        };
        // The recording named the element (its accessibility tree did):
        // what the pixels found must read as that name, or it is something
        // else at a familiar place.
        if let Some(element) = pressed_element(tree)
            && let Some(name) = element.name.as_deref()
            && !crate::identity::reads_as(name, &descriptions[found.segment_idx].label)
        {
            self.findings.candidates = vec![candidate(
                found.segment_idx,
                matching::text_similarity(&descriptions[found.segment_idx].label, name),
                "text",
            )];
            return Err(StrategyError::Retryable(format!(
                "the recording names the target {}, but what the pixels found for it in {place} reads {:?}: refusing to act on something else",
                element.label(),
                descriptions[found.segment_idx].label
            )));
        }
        let segment = &segments[found.segment_idx];
        let point = mapping.to_screen(press_point(segment, press));
        Ok(PixelFind {
            rect: image_rect_on_screen(&mapping, &segment.rect),
            point: (point.x, point.y),
            reason: format!(
                "found {} by {} in {place}",
                descriptions[found.segment_idx].text, found.how
            ),
            by: found.by,
        })
    }
}

/// What the visual rung looks for: a [`Target::Element`]'s parts.
pub(super) struct Sought<'a> {
    pub(super) fingerprint: &'a Fingerprint,
    pub(super) window_rect: &'a PixelRect,
    pub(super) press: (f64, f64),
    pub(super) area: Area,
}

impl Target {
    /// What the visual rung looks for, where this is an element.
    pub(super) fn sought(&self) -> Option<Sought<'_>> {
        match self {
            Target::Element {
                fingerprint,
                window_rect,
                press,
                area,
            } => Some(Sought {
                fingerprint,
                window_rect,
                press: *press,
                area: *area,
            }),
            Target::WindowRelative { .. } | Target::ScreenPlace { .. } | Target::AsRecorded => None,
        }
    }
}

/// The longest a press with nothing but its place's look to go by waits
/// for that look (a list still filling after the step before it).
pub const LOOK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether a press with nothing else to find it by may be made at its
/// recorded place in `area` now: only where the place looks as it did
/// when it was made. Else it is not made (after [`LOOK_WAIT`]): pressed
/// blind, another row in its place would be pressed.
fn same_look(
    tree: &ActionEvent,
    look: Option<&Look>,
    frame: &crate::Frame,
    area: &reprise_models::Rect,
) -> Result<(), StrategyError> {
    let what = tree.label();
    let Some(look) = look else {
        return Err(StrategyError::Retryable(format!(
            "{what}: the pixels hold nothing of its own to find it by, and no frame showed its \
             place: not made blind at its recorded place"
        )));
    };
    look.shows_in(frame, area)
        .map_err(|why| StrategyError::NotYet {
            reason: format!(
                "{what}: the pixels hold nothing of its own to find it by but the look of its \
                 place, and {why}: not made blind there"
            ),
            wait: LOOK_WAIT,
        })
}

/// The target as the visual rung found it.
pub(super) struct PixelFind {
    pub(super) rect: reprise_models::Rect,
    pub(super) point: (f64, f64),
    pub(super) reason: String,
    pub(super) by: FoundBy,
}

/// Where to press a found segment: at the recorded share of its box when
/// that lands inside its mask, else at its click point (inside the mask).
fn press_point(segment: &crate::vision::Segment, (fx, fy): (f64, f64)) -> ImagePoint {
    let rect = segment.rect;
    let at = |origin: u32, length: u32, share: f64| {
        let offset = (share.clamp(0.0, 1.0) * f64::from(length)).floor() as u32;
        origin + offset.min(length.saturating_sub(1))
    };
    let (x, y) = (at(rect.x, rect.width, fx), at(rect.y, rect.height, fy));
    if segment.mask.get(x, y) {
        ImagePoint::centre_of(x, y)
    } else {
        let (cx, cy) = segment.click_point;
        ImagePoint::centre_of(cx, cy)
    }
}

#[cfg(test)]
mod press_tests {
    use super::*;
    use crate::vision::{Mask, Segment, SegmentKind};

    #[test]
    fn a_found_target_is_pressed_where_it_was_pressed_inside_its_mask() {
        let rect = PixelRect {
            x: 100,
            y: 40,
            width: 200,
            height: 20,
        };
        let row = Segment::full(SegmentKind::Row, rect).unwrap();
        // Near the right end of a wide row, as recorded; not its centre.
        assert_eq!(press_point(&row, (0.9, 0.5)), ImagePoint::new(280.5, 50.5));
        assert_eq!(press_point(&row, (1.0, 1.0)), ImagePoint::new(299.5, 59.5));
        // A share that falls outside the mask (here it covers only the box's
        // left end) gives the mask's own click point.
        let bits = (0..rect.area())
            .map(|idx| idx % u64::from(rect.width) < 20)
            .collect();
        let left_end = Segment::from_mask(SegmentKind::Region, Mask { rect, bits }).unwrap();
        let (cx, cy) = left_end.click_point;
        assert_eq!(
            press_point(&left_end, (0.9, 0.5)),
            ImagePoint::centre_of(cx, cy)
        );
    }
}
