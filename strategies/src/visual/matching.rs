//! Finding a recorded target again on a changed screen, in order: the exact
//! description; then the same text as OCR may read it (its confusions
//! forgiven, no other difference); then visual similarity of the recorded
//! crop, among candidates that read the same or nothing; among look-alikes,
//! the relative position. When the best two candidates are too close to
//! tell apart, it refuses rather than guess.

use image::RgbaImage;

use super::Fingerprint;
use crate::action::FoundBy;
use crate::describe::Description;
use crate::identity::same_reading;
use crate::vision::Segment;
use crate::vision::ssim::{Gray, ssim};

/// How a target was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub segment_idx: usize,
    pub how: String,
    pub by: FoundBy,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatchError {
    #[error("no element on the screen matches {0}")]
    NotFound(String),
    #[error("refusing to guess: {0}")]
    Ambiguous(String),
}

/// The most look-alikes told apart by their place among each other. More
/// (the cells of a spreadsheet, the rows of a long list, all described as
/// a text-less box) are no identity: the eighth of 456 empty boxes is any
/// of them after a small drift.
pub const MAX_LOOK_ALIKES: usize = 6;

/// Thresholds of the matching.
#[derive(Debug, Clone, Copy)]
pub struct MatchOptions {
    pub min_text_similarity: f64,
    pub min_visual_similarity: f64,
    /// Two candidates scoring within this of each other cannot be told apart.
    pub margin: f64,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            min_text_similarity: 0.75,
            min_visual_similarity: 0.5,
            margin: 0.08,
        }
    }
}

/// Levenshtein similarity of two strings: 1 for equal, 0 for nothing shared.
pub fn text_similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            current[j + 1] = (previous[j] + cost)
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
        }
        previous = current;
    }
    1.0 - previous[b.len()] as f64 / a.len().max(b.len()) as f64
}

/// The visual similarity of a recorded crop and a candidate's crop (scaled to
/// the recorded size), on luminance.
pub fn crop_similarity(recorded: &RgbaImage, candidate: &RgbaImage) -> f64 {
    if recorded.width() < 11 || recorded.height() < 11 {
        return 0.0;
    }
    let scaled = image::imageops::resize(
        candidate,
        recorded.width(),
        recorded.height(),
        image::imageops::FilterType::Triangle,
    );
    ssim(&Gray::luminance(recorded), &Gray::luminance(&scaled)).unwrap_or(0.0)
}

fn reading_order(segments: &[Segment], mut indexes: Vec<usize>) -> Vec<usize> {
    indexes.sort_by_key(|&idx| segments[idx].rect.reading_order());
    indexes
}

/// Whether one of the two segments lies inside the other: then they are one
/// element (a button and its label) and not two look-alikes.
fn nested(a: &Segment, b: &Segment) -> bool {
    a.rect.contains(&b.rect) || b.rect.contains(&a.rect)
}

/// Finds the recorded target among the live segments: by its exact
/// description, else by its text as OCR may read it, else by its look.
pub fn find_target(
    fingerprint: &Fingerprint,
    segments: &[Segment],
    descriptions: &[Description],
    window: &RgbaImage,
    options: &MatchOptions,
) -> Result<Found, MatchError> {
    if let Some(found) = by_exact_description(fingerprint, segments, descriptions)? {
        return Ok(found);
    }
    let wanted = &fingerprint.description;
    // A candidate that reads another text than the target is another
    // element, however similar it reads or looks ("Olson" for "Olsen",
    // invoice 1043 for 1042); only OCR's confusions are forgiven. One that
    // reads nothing may still be it (OCR can miss a label in another theme).
    let may_be_it = |idx: usize| {
        wanted.label.is_empty()
            || descriptions[idx].label.is_empty()
            || same_reading(&wanted.label, &descriptions[idx].label)
    };
    if !wanted.label.is_empty()
        && let Some(found) = by_text(wanted, segments, descriptions, options, &may_be_it)?
    {
        return Ok(found);
    }
    // 3. Visual similarity of the recorded crop, among the same kind.
    let mut scored: Vec<(usize, f64)> = (0..segments.len())
        .filter(|&idx| descriptions[idx].role == wanted.role && may_be_it(idx))
        .map(|idx| {
            let rect = segments[idx].rect;
            let crop = image::imageops::crop_imm(window, rect.x, rect.y, rect.width, rect.height)
                .to_image();
            (idx, crop_similarity(&fingerprint.crop, &crop))
        })
        .filter(|(_, score)| *score >= options.min_visual_similarity)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    match scored.as_slice() {
        [] => Err(MatchError::NotFound(wanted.text.clone())),
        [(best, score), rest @ ..] => {
            if let Some((rival, _)) = rest.iter().find(|(idx, other)| {
                *other > score - options.margin && !nested(&segments[*idx], &segments[*best])
            }) {
                return Err(MatchError::Ambiguous(format!(
                    "elements {best} and {rival} look alike ({score:.2}) and the description {} does not tell them apart",
                    wanted.text
                )));
            }
            Ok(Found {
                segment_idx: *best,
                how: format!("its look ({score:.2})"),
                by: FoundBy::Look,
            })
        }
    }
}

/// The first way, the exact description: one segment, or as many look-alikes as the
/// recording had (then its place among them in reading order); `None`
/// where no segment has it.
fn by_exact_description(
    fingerprint: &Fingerprint,
    segments: &[Segment],
    descriptions: &[Description],
) -> Result<Option<Found>, MatchError> {
    let wanted = &fingerprint.description;
    let exact: Vec<usize> = (0..segments.len())
        .filter(|&idx| descriptions[idx].text == wanted.text)
        .collect();
    match exact.len() {
        0 => Ok(None),
        1 => Ok(Some(Found {
            segment_idx: exact[0],
            how: "its exact description".into(),
            by: FoundBy::Exact,
        })),
        n_same if n_same > MAX_LOOK_ALIKES => Err(MatchError::Ambiguous(format!(
            "{n_same} elements look like {}: too many to tell apart by their place",
            wanted.text
        ))),
        n_same if n_same == fingerprint.n_same => {
            let ordered = reading_order(segments, exact);
            Ok(Some(Found {
                segment_idx: ordered[fingerprint.nth],
                how: format!(
                    "its description and its place among {n_same} look-alikes (number {})",
                    fingerprint.nth + 1
                ),
                by: FoundBy::Place,
            }))
        }
        n_same => Err(MatchError::Ambiguous(format!(
            "{n_same} elements look like {} and the recording had {}",
            wanted.text, fingerprint.n_same
        ))),
    }
}

/// The second way, the same text as OCR may read it (the target has
/// text): the best
/// reading above the threshold, unless another not nested in it reads
/// nearly as well; `None` where none reads like it.
fn by_text(
    wanted: &Description,
    segments: &[Segment],
    descriptions: &[Description],
    options: &MatchOptions,
    may_be_it: &dyn Fn(usize) -> bool,
) -> Result<Option<Found>, MatchError> {
    let mut scored: Vec<(usize, f64)> = (0..segments.len())
        .filter(|&idx| !descriptions[idx].label.is_empty() && may_be_it(idx))
        .map(|idx| {
            let mut score = text_similarity(&descriptions[idx].label, &wanted.label);
            if descriptions[idx].role == wanted.role {
                score += 0.05;
            }
            (idx, score)
        })
        .filter(|(_, score)| *score >= options.min_text_similarity)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(best, best_score)) = scored.first() else {
        return Ok(None);
    };
    let rival = scored.iter().skip(1).find(|(idx, score)| {
        *score > best_score - options.margin && !nested(&segments[*idx], &segments[best])
    });
    if let Some((rival, _)) = rival {
        return Err(MatchError::Ambiguous(format!(
            "{} and {} both read like {:?}",
            descriptions[best].text, descriptions[*rival].text, wanted.label
        )));
    }
    Ok(Some(Found {
        segment_idx: best,
        how: format!("text similar to {:?} ({best_score:.2})", wanted.label),
        by: FoundBy::Text,
    }))
}

/// How many candidates a failed search reports.
pub const CLOSEST: usize = 3;

/// The segments closest to the recorded target, best first (at most
/// [`CLOSEST`], none that shares nothing with it): by reading when the
/// target has text and the segment reads something, else by look among the
/// segments of its kind. What a failed search shows a person, so that "not
/// found" says what was there instead.
pub fn closest(
    fingerprint: &Fingerprint,
    segments: &[Segment],
    descriptions: &[Description],
    window: &RgbaImage,
) -> Vec<(usize, f64, &'static str)> {
    let wanted = &fingerprint.description;
    let mut scored: Vec<(usize, f64, &'static str)> = (0..segments.len())
        .filter_map(|idx| {
            let label = &descriptions[idx].label;
            if !wanted.label.is_empty() && !label.is_empty() {
                return Some((idx, text_similarity(label, &wanted.label), "text"));
            }
            (descriptions[idx].role == wanted.role).then(|| {
                let rect = segments[idx].rect;
                let crop =
                    image::imageops::crop_imm(window, rect.x, rect.y, rect.width, rect.height)
                        .to_image();
                (idx, crop_similarity(&fingerprint.crop, &crop), "look")
            })
        })
        .filter(|(_, score, _)| *score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    // A label inside a button is the button, once.
    let mut kept: Vec<(usize, f64, &'static str)> = Vec::with_capacity(CLOSEST);
    for candidate in scored {
        if kept.len() == CLOSEST {
            break;
        }
        if !kept
            .iter()
            .any(|(taken, _, _)| nested(&segments[*taken], &segments[candidate.0]))
        {
            kept.push(candidate);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::{PixelRect, SegmentKind};

    fn segment(x: u32, y: u32) -> Segment {
        Segment::full(
            SegmentKind::Region,
            PixelRect {
                x,
                y,
                width: 40,
                height: 20,
            },
        )
        .unwrap()
    }

    fn description(text: &str, label: &str) -> Description {
        Description {
            text: text.into(),
            role: "button".into(),
            label: label.into(),
        }
    }

    fn fingerprint(text: &str, label: &str, nth: usize, n_same: usize) -> Fingerprint {
        Fingerprint {
            description: description(text, label),
            crop: RgbaImage::new(40, 20),
            nth,
            n_same,
        }
    }

    /// A button labelled `label`, the `nth` of `n_same` that look alike.
    fn button(label: &str, nth: usize, n_same: usize) -> Fingerprint {
        fingerprint(&format!("button \"{label}\""), label, nth, n_same)
    }

    /// [`find_target`] with the default options, in a blank window that
    /// holds every segment.
    fn find(
        wanted: Fingerprint,
        segments: &[Segment],
        descriptions: &[Description],
    ) -> Result<Found, MatchError> {
        let width = segments.iter().map(|s| s.rect.x + s.rect.width).max();
        let window = RgbaImage::new(width.unwrap_or(1), 40);
        find_target(
            &wanted,
            segments,
            descriptions,
            &window,
            &MatchOptions::default(),
        )
    }

    #[test]
    fn the_closest_candidates_are_best_first_each_element_once() {
        let label_inside = Segment::full(
            SegmentKind::Region,
            PixelRect {
                x: 55,
                y: 5,
                width: 20,
                height: 10,
            },
        )
        .unwrap();
        let segments = vec![
            segment(0, 0),
            segment(50, 0),
            label_inside,
            segment(100, 0),
            segment(150, 0),
        ];
        let descriptions = vec![
            description("button \"cancel\"", "cancel"),
            description("button \"sav\"", "sav"),
            Description {
                role: "text".into(),
                ..description("text \"sav\"", "sav")
            },
            description("button \"seve\"", "seve"),
            description("button \"\"", ""),
        ];
        let window = RgbaImage::new(200, 40);
        let wanted = button("save", 0, 1);
        let closest = closest(&wanted, &segments, &descriptions, &window);
        let found: Vec<(usize, String, &str)> = closest
            .iter()
            .map(|(idx, score, measure)| (*idx, format!("{score:.2}"), *measure))
            .collect();
        // The text-less button compared by look (its black crop is the
        // recorded one's), then "sav" (its label inside it not again) and
        // "seve" by their readings; "cancel", further, is left out.
        assert_eq!(
            found,
            [
                (4, "1.00".to_owned(), "look"),
                (1, "0.75".to_owned(), "text"),
                (3, "0.75".to_owned(), "text")
            ]
        );
    }

    #[test]
    fn exact_then_similar_text_then_refusal() {
        let segments = vec![segment(0, 0), segment(50, 0), segment(100, 0)];
        let descriptions = vec![
            description("button \"save\"", "save"),
            description("button \"cancel\"", "cancel"),
            description("button \"sav3\"", "sav3"),
        ];
        let found = find(button("cancel", 0, 1), &segments, &descriptions).unwrap();
        assert_eq!(found.segment_idx, 1);
        // OCR read "cancel" as "cance1": similar text still finds it.
        let found = find(button("cance1", 0, 1), &segments, &descriptions).unwrap();
        assert_eq!(found.segment_idx, 1);
        // Neither "save" nor "sav3" is "savs", however close they read: not
        // found (their crops are blank here, so no look can find them).
        let err = find(button("savs", 0, 1), &segments, &descriptions).unwrap_err();
        assert!(matches!(err, MatchError::NotFound(_)), "{err}");
        // Two readings OCR may make of one label, both on the screen, and
        // neither exactly as recorded: refuse.
        let twins = vec![
            description("button \"cance1\"", "cance1"),
            description("button \"canceI\"", "cancei"),
            description("button \"ok\"", "ok"),
        ];
        let err = find(button("cancel", 0, 1), &segments, &twins).unwrap_err();
        assert!(matches!(err, MatchError::Ambiguous(_)), "{err}");
    }

    #[test]
    fn look_alikes_are_told_apart_by_place_only_when_their_number_is_unchanged() {
        let segments = vec![segment(0, 0), segment(50, 0)];
        let descriptions = vec![
            description("button \"ok\"", "ok"),
            description("button \"ok\"", "ok"),
        ];
        let found = find(button("ok", 1, 2), &segments, &descriptions).unwrap();
        assert_eq!(found.segment_idx, 1, "the second of two");
        let err = find(button("ok", 0, 1), &segments, &descriptions).unwrap_err();
        assert!(
            err.to_string()
                .contains("2 elements look like button \"ok\" and the recording had 1"),
            "{err}"
        );
        assert!((text_similarity("kitten", "sitting") - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
    }

    #[test]
    fn many_look_alikes_are_refused_even_when_their_number_is_unchanged() {
        let n_boxes = MAX_LOOK_ALIKES + 1;
        let segments: Vec<Segment> = (0..n_boxes as u32).map(|k| segment(50 * k, 0)).collect();
        let descriptions = vec![description("box", ""); n_boxes];
        let err = find(fingerprint("box", "", 3, n_boxes), &segments, &descriptions).unwrap_err();
        assert!(
            err.to_string()
                .contains("7 elements look like box: too many to tell apart by their place"),
            "{err}"
        );
    }
}
