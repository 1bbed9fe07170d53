//! Preparation: the target of every recorded pointer action fingerprinted
//! in its own recorded frame (its segment's description, crop and place among
//! look-alikes), and whether each step changed what it acted on when it was
//! recorded. Each recorded frame is decoded once.

use reprise_models::{ActionEvent, EventName, WindowState};

use super::{Area, Fingerprint, PlannedStep, Target, pressed_popup};
use crate::Frame;
use crate::analysis::{AnalysisError, Vision, window_image};
use crate::describe::Description;
use crate::vision::scale::{ImagePoint, WindowMapping, window_crop};
use crate::vision::{PixelRect, Segment, SegmentKind};

/// The segment a press at `point` (window-image pixels) acted on: the
/// smallest element with an identity of its own under the pointer. In turn:
/// a labelled control (a checkbox over its box); a region or box that is not
/// a container (a button over its label); a text (a cell's, read as the name
/// the tree gives it); the list row the press lies in. A panel, or a
/// region or box holding two or more texts of its own (a list, a toolbar),
/// contains what was pressed and is never the target: replayed at its
/// centre, a list's press lands on another row.
fn hit_segment(
    segments: &[Segment],
    descriptions: &[Description],
    point: (u32, u32),
) -> Option<usize> {
    let is_container = |idx: usize| {
        let rect = segments[idx].rect;
        let texts = segments
            .iter()
            .enumerate()
            .filter(|&(other, segment)| {
                other != idx && segment.kind == SegmentKind::Text && rect.contains(&segment.rect)
            })
            .count();
        texts >= 2
    };
    let containing: Vec<usize> = (0..segments.len())
        .filter(|&idx| {
            segments[idx].rect.contains_point(point.0, point.1) && descriptions[idx].role != "panel"
        })
        .collect();
    let smallest = |kinds: &[SegmentKind], also: &dyn Fn(usize) -> bool| {
        containing
            .iter()
            .copied()
            .filter(|&idx| kinds.contains(&segments[idx].kind) && also(idx))
            .min_by_key(|&idx| segments[idx].rect.area())
    };
    smallest(&[SegmentKind::LabelledControl], &|_| true)
        .or_else(|| {
            smallest(&[SegmentKind::Region, SegmentKind::Outline], &|idx| {
                !is_container(idx)
            })
        })
        .or_else(|| smallest(&[SegmentKind::Text], &|_| true))
        .or_else(|| smallest(&[SegmentKind::Row], &|_| true))
}

pub(super) fn is_pointer_target(tree: &ActionEvent) -> bool {
    matches!(
        tree.name,
        EventName::Singleclick | EventName::Doubleclick | EventName::Click
    ) && tree.position().is_some()
}

/// Fingerprints the target of every pointer action in its recorded frame.
/// `frame_of` gives a recorded screenshot by id; `last_frame` is the id of
/// the recording's last screenshot, which shows what the last step did.
pub fn prepare(
    trees: Vec<ActionEvent>,
    windows: &[WindowState],
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    last_frame: Option<u32>,
    vision: &mut Vision,
) -> Result<Vec<PlannedStep>, AnalysisError> {
    // The recorded frames before and after each step (this step's and the
    // next step's, or the last one), to learn whether the step changed what
    // it acted on when it was recorded.
    let frame_pairs: Vec<Option<(u32, u32)>> = (0..trees.len())
        .map(|idx| {
            let after = match trees.get(idx + 1) {
                Some(next) => next.screenshot_id,
                None => last_frame,
            };
            match (trees[idx].screenshot_id, after) {
                (Some(before), Some(after)) if before != after => Some((before, after)),
                _ => None,
            }
        })
        .collect();
    // A step's frame is the one before it and the previous step's after:
    // the last few frames read are kept, so each is decoded once.
    let mut recent: Vec<(u32, Option<Frame>)> = Vec::new();
    let mut read = |id: u32| -> Option<Frame> {
        if let Some((_, frame)) = recent.iter().find(|(seen, _)| *seen == id) {
            return frame.clone();
        }
        let frame = frame_of(id);
        if recent.len() == 3 {
            recent.remove(0);
        }
        recent.push((id, frame.clone()));
        frame
    };
    let frame_of: &mut dyn FnMut(u32) -> Option<Frame> = &mut read;
    let mut planned = Vec::with_capacity(trees.len());
    for (tree, pair) in trees.into_iter().zip(frame_pairs) {
        let window = tree
            .window_state_id
            .and_then(|id| windows.get(id as usize))
            .cloned();
        prepare_one(tree, windows, frame_of, vision, &mut planned)?;
        let step = planned.last_mut().expect("prepare_one adds a step");
        if let (Target::Element { window_rect, .. }, Some((before, after)), Some(window)) =
            (&step.target, pair, &window)
            && let (Some(before), Some(after)) = (frame_of(before), frame_of(after))
            && let Some(target) = target_screen_rect(
                &before,
                &pressed_popup(&step.tree).unwrap_or(window.rect),
                window_rect,
            )
        {
            step.expects_change = !crate::settle::same_region(&before, &after, Some(target));
        } else if step.tree.name.is_key()
            && let (Some((before, after)), Some(window)) = (pair, window)
            && let (Some(before), Some(after)) = (frame_of(before), frame_of(after))
        {
            step.expects_change =
                crate::settle::changed_beyond_caret(&before, &after, Some(window.rect));
        }
    }
    Ok(planned)
}

fn prepare_one(
    tree: ActionEvent,
    windows: &[WindowState],
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    vision: &mut Vision,
    planned: &mut Vec<PlannedStep>,
) -> Result<(), AnalysisError> {
    let window = tree.window_state_id.and_then(|id| windows.get(id as usize));
    let (Some(window), Some((x, y))) = (window, tree.position()) else {
        planned.push(PlannedStep {
            tree,
            target: Target::AsRecorded,
            expects_change: false,
        });
        return Ok(());
    };
    // A press in a popup is placed in the popup, and found in its pixels.
    let (area, area_rect) = match pressed_popup(&tree) {
        Some(popup) => (Area::Popup, popup),
        None => (Area::Window, window.rect),
    };
    let relative = Target::WindowRelative {
        dx: x - f64::from(area_rect.left),
        dy: y - f64::from(area_rect.top),
        area,
    };
    let frame = tree.screenshot_id.and_then(&mut *frame_of);
    let inside = area_rect.contains(x, y);
    let (Some(frame), true, true) = (frame, inside, is_pointer_target(&tree)) else {
        planned.push(PlannedStep {
            tree,
            target: if inside { relative } else { Target::AsRecorded },
            expects_change: false,
        });
        return Ok(());
    };
    let Some((image, mapping)) = window_image(&frame, &area_rect) else {
        planned.push(PlannedStep {
            tree,
            target: relative,
            expects_change: false,
        });
        return Ok(());
    };
    let (segments, descriptions) = vision.analyse(&image, None)?;
    let ImagePoint { x: px, y: py } = mapping.to_image(reprise_models::Point { x, y });
    let Some(hit) = hit_segment(
        &segments,
        &descriptions,
        (px.max(0.0) as u32, py.max(0.0) as u32),
    ) else {
        planned.push(PlannedStep {
            tree,
            target: relative,
            expects_change: false,
        });
        return Ok(());
    };
    let description = descriptions[hit].clone();
    let mut same: Vec<usize> = (0..segments.len())
        .filter(|&idx| descriptions[idx].text == description.text)
        .collect();
    same.sort_by_key(|&idx| segments[idx].rect.reading_order());
    let rect = segments[hit].rect;
    // Where the press was inside the target, as shares of its size.
    let share = |at: f64, origin: u32, length: u32| {
        ((at - f64::from(origin)) / f64::from(length.max(1))).clamp(0.0, 1.0)
    };
    let press = (
        share(px, rect.x, rect.width),
        share(py, rect.y, rect.height),
    );
    let fingerprint = Fingerprint {
        crop: image::imageops::crop_imm(&image, rect.x, rect.y, rect.width, rect.height).to_image(),
        nth: same.iter().position(|&idx| idx == hit).unwrap_or(0),
        n_same: same.len(),
        description,
    };
    planned.push(PlannedStep {
        tree,
        target: Target::Element {
            fingerprint,
            window_rect: rect,
            press,
            area,
        },
        expects_change: false,
    });
    Ok(())
}

/// A rectangle of a window's image (the window's box is `window`), in
/// logical screen coordinates.
fn target_screen_rect(
    frame: &Frame,
    window: &reprise_models::Rect,
    rect: &PixelRect,
) -> Option<reprise_models::Rect> {
    let (_, mapping) = window_crop(&frame.screen, frame.image.dimensions(), window)?;
    Some(image_rect_on_screen(&mapping, rect))
}

pub(super) fn image_rect_on_screen(
    mapping: &WindowMapping,
    rect: &PixelRect,
) -> reprise_models::Rect {
    let top_left = mapping.to_screen(ImagePoint::new(f64::from(rect.x), f64::from(rect.y)));
    let bottom_right = mapping.to_screen(ImagePoint::new(
        f64::from(rect.right()),
        f64::from(rect.bottom()),
    ));
    let (left, top, right, bottom) = (top_left.x, top_left.y, bottom_right.x, bottom_right.y);
    reprise_models::Rect::new(
        left.floor() as i32,
        top.floor() as i32,
        (right - left).ceil() as u32,
        (bottom - top).ceil() as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box: x, y, width, height.
    type Box4 = (u32, u32, u32, u32);

    /// What a press at `point` is taken to have acted on, among `segments`
    /// (kind, box, role): the role and box of the target, if any.
    fn check(segments: &[(SegmentKind, Box4, &str)], point: (u32, u32)) -> Option<(String, Box4)> {
        let (segments, descriptions): (Vec<Segment>, Vec<Description>) = segments
            .iter()
            .map(|&(kind, (x, y, width, height), role)| {
                let rect = PixelRect {
                    x,
                    y,
                    width,
                    height,
                };
                let description = Description {
                    text: role.into(),
                    role: role.into(),
                    label: String::new(),
                };
                (Segment::full(kind, rect).expect("a segment"), description)
            })
            .unzip();
        hit_segment(&segments, &descriptions, point).map(|idx| {
            let rect = segments[idx].rect;
            (
                descriptions[idx].role.clone(),
                (rect.x, rect.y, rect.width, rect.height),
            )
        })
    }

    #[test]
    fn a_press_acts_on_the_smallest_element_with_an_identity_never_its_container() {
        use SegmentKind::{LabelledControl, Outline, Region, Row, Text};
        // A list drawn as a box around three rows of text.
        let list = [
            (Outline, (0, 0, 200, 100), "box"),
            (Row, (1, 5, 198, 25), "list row"),
            (Row, (1, 35, 198, 25), "list row"),
            (Row, (1, 65, 198, 25), "list row"),
            (Text, (10, 10, 80, 15), "text"),
            (Text, (10, 40, 80, 15), "text"),
            (Text, (10, 70, 80, 15), "text"),
        ];
        // Right of a row's text: the row, not the list; on its text: the text.
        assert_eq!(
            check(&list, (150, 45)),
            Some(("list row".to_owned(), (1, 35, 198, 25)))
        );
        assert_eq!(
            check(&list, (20, 45)),
            Some(("text".to_owned(), (10, 40, 80, 15)))
        );
        // A list whose rows were not seen: beside a text, only the list
        // holds the point, and it is no target.
        let no_rows = [list[0], list[4], list[5], list[6]];
        assert_eq!(check(&no_rows, (150, 45)), None);
        // A button over its one label; a checkbox over its box and label.
        let button = [
            (Region, (10, 10, 60, 20), "button"),
            (Text, (20, 14, 40, 12), "text"),
        ];
        assert_eq!(
            check(&button, (25, 18)),
            Some(("button".to_owned(), (10, 10, 60, 20)))
        );
        let checkbox = [
            (LabelledControl, (10, 10, 90, 20), "checkbox"),
            (Region, (10, 12, 14, 14), "small box"),
            (Text, (30, 12, 60, 14), "text"),
        ];
        assert_eq!(
            check(&checkbox, (50, 18)).map(|(role, _)| role),
            Some("checkbox".into())
        );
        // A panel is never a target; the text on it is.
        let panel = [
            (Region, (0, 0, 300, 200), "panel"),
            (Text, (10, 10, 80, 15), "text"),
        ];
        assert_eq!(check(&panel, (150, 150)), None);
        assert_eq!(
            check(&panel, (20, 15)).map(|(role, _)| role),
            Some("text".into())
        );
    }
}
