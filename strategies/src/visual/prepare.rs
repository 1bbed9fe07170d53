//! Preparation: the target of every recorded pointer action fingerprinted
//! in its own recorded frame (its segment's description, crop and place among
//! look-alikes), as it looked at rest where the pointer's hover changed its
//! look before the press, and whether each step changed what it acted on
//! when it was recorded. Each recorded frame is decoded once.

use reprise_models::{ActionEvent, EventName, WindowState};

use super::{Area, Fingerprint, Look, PlannedStep, Target, pressed_popup};
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
/// `frame_of` gives a recorded screenshot by id; `frame_times` holds each
/// screenshot's time (seconds into the recording, the events' clock) by
/// id: the last one shows what the last step did, and the times tell which
/// frame showed a target before the pointer reached it.
pub fn prepare(
    mut trees: Vec<ActionEvent>,
    windows: &[WindowState],
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    frame_times: &[f64],
    vision: &mut Vision,
) -> Result<Vec<PlannedStep>, AnalysisError> {
    typed_after_presses(&mut trees);
    let last_frame = u32::try_from(frame_times.len())
        .ok()
        .and_then(|count| count.checked_sub(1));
    let track = pointer_track(&trees);
    let recorded = Recorded {
        windows,
        track: &track,
        frame_times,
    };
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
        prepare_one(tree, &recorded, frame_of, vision, &mut planned)?;
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
            // A caret that showed at the press (and blinks) is no change a
            // replay can count on: it may be off in the frame read after.
            step.expects_change =
                crate::settle::changed_beyond_caret(&before, &after, Some(target));
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

/// Characters typed right after a press on a text area (one that
/// [stands alone](reprise_models::element::stands_alone)), in the same
/// window, went where the press put the focus; the recorder, told so by the
/// press, read no focus for them. They are given the pressed element, so
/// the field they were typed into is found again, holds the focus before
/// they are typed, and is read after: its text proves them, where the
/// pixels alone could only suggest it.
fn typed_after_presses(trees: &mut [ActionEvent]) {
    for idx in 1..trees.len() {
        let (before, after) = trees.split_at_mut(idx);
        let (press, keys) = (&before[idx - 1], &mut after[0]);
        if !keys.name.is_key()
            || super::typed_element(keys).is_some()
            || press.window_state_id != keys.window_state_id
            || super::verify::typed_characters(keys).is_none()
        {
            continue;
        }
        if let Some(element) = super::pressed_element(press)
            .filter(|element| reprise_models::element::stands_alone(element.role))
        {
            keys.element = Some(Box::new(element.clone()));
        }
    }
}

impl PlannedStep {
    /// A step whose recording shows no change after it (until it is seen).
    fn unchanged(tree: ActionEvent, target: Target) -> PlannedStep {
        PlannedStep {
            tree,
            target,
            expects_change: false,
        }
    }
}

/// What a recording holds beside its steps, for fingerprinting them.
struct Recorded<'a> {
    windows: &'a [WindowState],
    /// Where the pointer was: see [`pointer_track`].
    track: &'a [Sample],
    /// Each screenshot's time, by id.
    frame_times: &'a [f64],
}

fn prepare_one(
    tree: ActionEvent,
    recorded: &Recorded<'_>,
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    vision: &mut Vision,
    planned: &mut Vec<PlannedStep>,
) -> Result<(), AnalysisError> {
    let Some((x, y)) = tree.position() else {
        planned.push(PlannedStep::unchanged(tree, Target::AsRecorded));
        return Ok(());
    };
    let frame = tree.screenshot_id.and_then(&mut *frame_of);
    // A press in a popup is placed in the popup, and found in its pixels.
    let area = tree
        .window_state_id
        .and_then(|id| recorded.windows.get(id as usize))
        .map(|window| match pressed_popup(&tree) {
            Some(popup) => (Area::Popup, popup),
            None => (Area::Window, window.rect),
        });
    let Some((area, area_rect)) = area.filter(|(_, rect)| rect.contains(x, y)) else {
        planned.push(outside_windows(tree, frame.as_ref(), (x, y)));
        return Ok(());
    };
    // A press with nothing else to find it by is made again only where
    // the place around it looks as it did just before it was made.
    let look = frame
        .as_ref()
        .filter(|_| is_pointer_target(&tree))
        .and_then(|frame| Look::around(frame, &area_rect, (x, y)));
    let relative = Target::WindowRelative {
        dx: x - f64::from(area_rect.left),
        dy: y - f64::from(area_rect.top),
        area,
        look,
    };
    let (Some(frame), true) = (frame, is_pointer_target(&tree)) else {
        planned.push(PlannedStep::unchanged(tree, relative));
        return Ok(());
    };
    let Some((image, mapping)) = window_image(&frame, &area_rect) else {
        planned.push(PlannedStep::unchanged(tree, relative));
        return Ok(());
    };
    let (segments, descriptions) = vision.analyse(&image, None)?;
    let ImagePoint { x: px, y: py } = mapping.to_image(reprise_models::Point { x, y });
    let point = (px.max(0.0) as u32, py.max(0.0) as u32);
    let Some(hit) = hit_segment(&segments, &descriptions, point) else {
        planned.push(PlannedStep::unchanged(tree, relative));
        return Ok(());
    };
    let target = image_rect_on_screen(&mapping, &segments[hit].rect);
    let seen = Analysed {
        image,
        segments,
        descriptions,
        hit,
    };
    let areas = (&tree, &frame, &area_rect);
    let chosen = at_rest(seen, recorded, frame_of, vision, areas, (target, point))?;
    let rect = chosen.segments[chosen.hit].rect;
    let (fingerprint, press) = fingerprint_of(&chosen, (px, py));
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

/// A window's image analysed, and the segment pressed in it.
struct Analysed {
    image: image::RgbaImage,
    segments: Vec<Segment>,
    descriptions: Vec<Description>,
    hit: usize,
}

/// The press's element at rest: the frame at the press may show the target
/// hovered (a highlighted menu item, a lit button); where an earlier frame
/// (the newest of [`frames_before_entry`] not showing it as the press's
/// does) showed the same element (at `target` on the screen, `point` in the
/// window's image) before the pointer came to it, that look is its
/// fingerprint, the one replay will see. Else `seen`, as it is.
fn at_rest(
    seen: Analysed,
    recorded: &Recorded<'_>,
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    vision: &mut Vision,
    (tree, frame, area_rect): (&ActionEvent, &Frame, &reprise_models::Rect),
    (target, point): (reprise_models::Rect, (u32, u32)),
) -> Result<Analysed, AnalysisError> {
    // The newest that does not show the target as the press's frame does.
    let Some((rest, _)) = frames_before_entry(recorded, &target, tree.timestamp)
        .into_iter()
        .filter(|&id| Some(id) != tree.screenshot_id)
        .filter_map(&mut *frame_of)
        .find(|rest| !crate::settle::same_region(frame, rest, Some(target)))
        .and_then(|rest| window_image(&rest, area_rect))
        .filter(|(rest, _)| rest.dimensions() == seen.image.dimensions())
    else {
        return Ok(seen);
    };
    let (segments, descriptions) = vision.analyse(&rest, None)?;
    let hit = hit_segment(&segments, &descriptions, point).filter(|&rest_hit| {
        same_element_at_rest(
            (&seen.descriptions[seen.hit], &seen.segments[seen.hit].rect),
            (&descriptions[rest_hit], &segments[rest_hit].rect),
        )
    });
    Ok(match hit {
        Some(hit) => Analysed {
            image: rest,
            segments,
            descriptions,
            hit,
        },
        None => seen,
    })
}

/// The fingerprint of the segment pressed (its crop, its description,
/// its place among the segments described the same in reading order), and
/// where the press at `(px, py)` was inside it, as shares of its size.
fn fingerprint_of(
    Analysed {
        image: window,
        segments,
        descriptions,
        hit,
    }: &Analysed,
    (px, py): (f64, f64),
) -> (Fingerprint, (f64, f64)) {
    let hit = *hit;
    let description = descriptions[hit].clone();
    let mut same: Vec<usize> = (0..segments.len())
        .filter(|&idx| descriptions[idx].text == description.text)
        .collect();
    same.sort_by_key(|&idx| segments[idx].rect.reading_order());
    let rect = segments[hit].rect;
    let share = |at: f64, origin: u32, length: u32| {
        ((at - f64::from(origin)) / f64::from(length.max(1))).clamp(0.0, 1.0)
    };
    let press = (
        share(px, rect.x, rect.width),
        share(py, rect.y, rect.height),
    );
    let fingerprint = Fingerprint {
        crop: image::imageops::crop_imm(window, rect.x, rect.y, rect.width, rect.height).to_image(),
        nth: same.iter().position(|&idx| idx == hit).unwrap_or(0),
        n_same: same.len(),
        description,
    };
    (fingerprint, press)
}

/// An action at `(x, y)` outside any window the recording knows (or where
/// it knew none): a press is made at its recorded place on the screen only
/// where that place looks as it did in `frame` (its recorded frame);
/// anything else is replayed as recorded.
fn outside_windows(tree: ActionEvent, frame: Option<&Frame>, (x, y): (f64, f64)) -> PlannedStep {
    let target = if is_pointer_target(&tree) {
        Target::ScreenPlace {
            look: frame.and_then(|frame| Look::around(frame, &frame.screen.rect, (x, y))),
        }
    } else {
        Target::AsRecorded
    };
    PlannedStep::unchanged(tree, target)
}

/// Where the pointer was at one moment of the recording.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Seconds into the recording.
    at: f64,
    x: f64,
    y: f64,
    /// A button went down here.
    press: bool,
}

/// Where the pointer was during the recording: every event that holds a
/// position (each move a run of moves merged, each press), in time order.
/// Between two of them the pointer stood where the first says: every move
/// is an event.
fn pointer_track(trees: &[ActionEvent]) -> Vec<Sample> {
    fn visit(event: &ActionEvent, track: &mut Vec<Sample>) {
        if let (Some(x), Some(y)) = (event.mouse_x, event.mouse_y) {
            let press = match event.name {
                EventName::Click => event.mouse_pressed == Some(true),
                EventName::Singleclick | EventName::Doubleclick => true,
                _ => false,
            };
            track.push(Sample {
                at: event.timestamp,
                x,
                y,
                press,
            });
        }
        for child in &event.children {
            visit(child, track);
        }
    }
    let mut track = Vec::new();
    for tree in trees {
        visit(tree, &mut track);
    }
    track.sort_by(|a, b| a.at.total_cmp(&b.at));
    track
}

/// How many frames from before the pointer came into a target are looked
/// through for one that shows it at rest.
const REST_LOOKS: usize = 3;

/// The frames taken before the pointer came into `target` (a screen box)
/// for good before the press at `pressed`, newest first, at most
/// [`REST_LOOKS`]: the pointer's last stay outside it ended with a move
/// into it, and each frame is older than that move. The move's time is
/// when the recorder heard of it, which a busy machine makes late: the
/// newest of them may already show the target hovered, an older one not.
/// No press may lie between a frame and this one: an earlier press
/// changes what shows (it opens the popup this press is made in), so a
/// frame from before it shows another moment. Empty where the pointer was
/// never seen outside the target, or no frame fits.
fn frames_before_entry(
    recorded: &Recorded<'_>,
    target: &reprise_models::Rect,
    pressed: f64,
) -> Vec<u32> {
    let before: Vec<&Sample> = recorded
        .track
        .iter()
        .take_while(|sample| sample.at <= pressed)
        .collect();
    let Some(outside) = before
        .iter()
        .rposition(|sample| !target.contains(sample.x, sample.y))
    else {
        return Vec::new();
    };
    let Some(entered) = before.get(outside + 1).map(|sample| sample.at) else {
        return Vec::new();
    };
    let earlier_press = |sample: &Sample| sample.press && sample.at < pressed;
    if before[outside + 1..]
        .iter()
        .any(|sample| earlier_press(sample))
    {
        return Vec::new();
    }
    let last_press = before[..=outside]
        .iter()
        .rev()
        .find(|sample| earlier_press(sample))
        .map(|sample| sample.at);
    (0..recorded.frame_times.len())
        .rev()
        .filter(|&id| recorded.frame_times[id] < entered)
        .take_while(|&id| last_press.is_none_or(|press| recorded.frame_times[id] > press))
        .take(REST_LOOKS)
        .filter_map(|id| u32::try_from(id).ok())
        .collect()
}

/// Whether the element found at the press point in a frame from before the
/// pointer came (`rest`: its description and box) is the one the press
/// frame shows there hovered: a hovered element that reads a text reads
/// the same at rest, where its box holds the resting one's or the other
/// way round (a highlighted menu row around its item's text), or the two
/// mostly overlap; one that reads nothing (white on a highlight, an icon)
/// holds what is there at rest, or mostly overlaps it. Anything else (the
/// frame from before a menu opened, showing what lay under it) is not the
/// same element.
fn same_element_at_rest(
    hovered: (&Description, &PixelRect),
    rest: (&Description, &PixelRect),
) -> bool {
    let ((hovered, hovered_box), (rest, rest_box)) = (hovered, rest);
    let overlaps = hovered_box.iou(rest_box) >= 0.5;
    if hovered.label.trim().is_empty() {
        return overlaps || hovered_box.contains(rest_box);
    }
    crate::identity::same_reading(&hovered.label, &rest.label)
        && (overlaps || hovered_box.contains(rest_box) || rest_box.contains(hovered_box))
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
mod tests;
