//! Preparation: the target of every recorded pointer action fingerprinted
//! in its own recorded frame (its segment's description, crop and place among
//! look-alikes), as it looked at rest where the pointer's hover changed its
//! look before the press, and whether each step changed what it acted on
//! when it was recorded. Each recorded frame is decoded once.

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
/// `frame_of` gives a recorded screenshot by id; `frame_times` holds each
/// screenshot's time (seconds into the recording, the events' clock) by
/// id: the last one shows what the last step did, and the times tell which
/// frame showed a target before the pointer reached it.
pub fn prepare(
    trees: Vec<ActionEvent>,
    windows: &[WindowState],
    frame_of: &mut dyn FnMut(u32) -> Option<Frame>,
    frame_times: &[f64],
    vision: &mut Vision,
) -> Result<Vec<PlannedStep>, AnalysisError> {
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
    let window = tree
        .window_state_id
        .and_then(|id| recorded.windows.get(id as usize));
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
    let point = (px.max(0.0) as u32, py.max(0.0) as u32);
    let Some(hit) = hit_segment(&segments, &descriptions, point) else {
        planned.push(PlannedStep {
            tree,
            target: relative,
            expects_change: false,
        });
        return Ok(());
    };
    // The frame at the press may show the target hovered (a highlighted
    // menu item, a lit button): where an earlier frame showed the same
    // element before the pointer came to it, that look is its fingerprint,
    // the one replay will see.
    let target = image_rect_on_screen(&mapping, &segments[hit].rect);
    let at_rest = match frame_before_entry(recorded, &target, tree.timestamp)
        .filter(|&id| Some(id) != tree.screenshot_id)
        .and_then(&mut *frame_of)
        .filter(|rest| !crate::settle::same_region(&frame, rest, Some(target)))
        .and_then(|rest| window_image(&rest, &area_rect))
        .filter(|(rest, _)| rest.dimensions() == image.dimensions())
    {
        Some((rest, _)) => {
            let (rest_segments, rest_descriptions) = vision.analyse(&rest, None)?;
            hit_segment(&rest_segments, &rest_descriptions, point)
                .filter(|&rest_hit| {
                    same_element_at_rest(
                        (&descriptions[hit], &segments[hit].rect),
                        (&rest_descriptions[rest_hit], &rest_segments[rest_hit].rect),
                    )
                })
                .map(|rest_hit| (rest, rest_segments, rest_descriptions, rest_hit))
        }
        None => None,
    };
    let (image, segments, descriptions, hit) =
        at_rest.unwrap_or((image, segments, descriptions, hit));
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

/// The newest frame taken before the pointer came into `target` (a screen
/// box) for good before the press at `pressed`: the pointer's last stay
/// outside it ended with a move into it, and the frame is older than that
/// move. No press may lie between the frame and this one: an earlier
/// press changes what shows (it opens the popup this press is made in),
/// so a frame from before it shows another moment. `None` where the
/// pointer was never seen outside the target, or no frame fits.
fn frame_before_entry(
    recorded: &Recorded<'_>,
    target: &reprise_models::Rect,
    pressed: f64,
) -> Option<u32> {
    let before: Vec<&Sample> = recorded
        .track
        .iter()
        .take_while(|sample| sample.at <= pressed)
        .collect();
    let outside = before
        .iter()
        .rposition(|sample| !target.contains(sample.x, sample.y))?;
    let entered = before.get(outside + 1)?.at;
    let earlier_press = |sample: &Sample| sample.press && sample.at < pressed;
    if before[outside + 1..]
        .iter()
        .any(|sample| earlier_press(sample))
    {
        return None;
    }
    let last_press = before[..=outside]
        .iter()
        .rev()
        .find(|sample| earlier_press(sample))
        .map(|sample| sample.at);
    let id = recorded
        .frame_times
        .iter()
        .rposition(|&taken| taken < entered)?;
    if last_press.is_some_and(|press| recorded.frame_times[id] <= press) {
        return None;
    }
    u32::try_from(id).ok()
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

    /// The item every frame of [`hovered_then_pressed`] holds: 60x18 at
    /// (10, 10) of a 200x100 window at the screen's origin.
    const ITEM: PixelRect = PixelRect {
        x: 10,
        y: 10,
        width: 60,
        height: 18,
    };
    const GREY: [u8; 4] = [200, 200, 200, 255];
    const BLUE: [u8; 4] = [53, 132, 228, 255];
    const GREEN: [u8; 4] = [40, 160, 60, 255];

    /// Sees one region, [`ITEM`], in any image.
    struct OneItem;

    impl crate::vision::Segmenter for OneItem {
        fn cache_name(&self) -> String {
            "one item".into()
        }

        fn segment(
            &self,
            _image: &image::RgbaImage,
        ) -> Result<Vec<Segment>, crate::vision::VisionError> {
            Ok(Segment::full(SegmentKind::Region, ITEM)
                .into_iter()
                .collect())
        }
    }

    /// Reads a segment by its colour: grey reads "save" (a text), blue
    /// nothing (white on a highlight: a button), green "open".
    struct ByColour;

    impl crate::describe::Describer for ByColour {
        fn name(&self) -> &'static str {
            "by colour"
        }

        fn cache_name(&self) -> &'static str {
            "by colour"
        }

        fn describe(
            &mut self,
            window: &image::RgbaImage,
            segments: &[Segment],
        ) -> Result<Vec<Description>, crate::describe::DescribeError> {
            Ok(segments
                .iter()
                .map(|segment| {
                    let colour = window.get_pixel(segment.rect.x + 1, segment.rect.y + 1).0;
                    let (role, label) = match colour {
                        GREY => ("text", "save"),
                        GREEN => ("text", "open"),
                        _ => ("button", ""),
                    };
                    Description {
                        text: format!("{role} {label:?}"),
                        role: role.into(),
                        label: label.into(),
                    }
                })
                .collect())
        }
    }

    /// A 200x100 frame of the whole screen (the window) with [`ITEM`] in
    /// `colour` on white.
    fn frame(colour: [u8; 4]) -> Frame {
        let mut image = image::RgbaImage::from_pixel(200, 100, image::Rgba([255; 4]));
        for y in ITEM.y..ITEM.bottom() {
            for x in ITEM.x..ITEM.right() {
                image.put_pixel(x, y, image::Rgba(colour));
            }
        }
        Frame {
            image,
            screen: reprise_models::ScreenGeometry {
                rect: reprise_models::Rect::new(0, 0, 200, 100),
                scale_factor: 1.0,
            },
        }
    }

    /// The fingerprint of a press on [`ITEM`] at 3 s, with frames taken at
    /// 0.5 s (`rest`) and 2.5 s (`pressed`: the frame the press links to)
    /// and the pointer at each `(seconds, x, y)` of `track` before: the
    /// text its description reads and the colour of its crop.
    fn hovered_then_pressed(
        rest: [u8; 4],
        pressed: [u8; 4],
        track: &[(f64, f64, f64)],
    ) -> (String, [u8; 4]) {
        hovered_then_pressed_after(rest, pressed, track, &[])
    }

    /// [`hovered_then_pressed`], with the earlier presses (a button down)
    /// at each `(seconds, x, y)` of `presses`.
    fn hovered_then_pressed_after(
        rest: [u8; 4],
        pressed: [u8; 4],
        track: &[(f64, f64, f64)],
        presses: &[(f64, f64, f64)],
    ) -> (String, [u8; 4]) {
        let mut moved = ActionEvent::new(EventName::Move, track[0].0);
        let at = |name, &(at, x, y): &(f64, f64, f64)| {
            let mut event = ActionEvent::new(name, at);
            (event.mouse_x, event.mouse_y) = (Some(x), Some(y));
            if name == EventName::Click {
                event.mouse_pressed = Some(true);
            }
            event
        };
        moved.children = track
            .iter()
            .map(|sample| at(EventName::Move, sample))
            .chain(presses.iter().map(|sample| at(EventName::Click, sample)))
            .collect();
        let mut press = ActionEvent::new(EventName::Singleclick, 3.0);
        (press.mouse_x, press.mouse_y) = (Some(30.0), Some(15.0));
        press.mouse_button_name = Some(reprise_models::MouseButton::Left);
        press.screenshot_id = Some(1);
        press.window_state_id = Some(0);
        let window = WindowState {
            id: 0,
            timestamp: 0.0,
            title: "Editor".into(),
            app_class: "editor".into(),
            pid: None,
            window_id: 1,
            rect: reprise_models::Rect::new(0, 0, 200, 100),
            a11y: None,
            command: None,
        };
        let frames = [frame(rest), frame(pressed)];
        let mut vision = Vision {
            segmenter: Box::new(OneItem),
            describer: Box::new(ByColour),
            cache: None,
            stats: Default::default(),
        };
        let planned = prepare(
            vec![moved, press],
            &[window],
            &mut |id| frames.get(id as usize).cloned(),
            &[0.5, 2.5],
            &mut vision,
        )
        .expect("prepared");
        let Target::Element { fingerprint, .. } = &planned[1].target else {
            panic!("the press has a fingerprint: {:?}", planned[1].target);
        };
        (
            fingerprint.description.label.clone(),
            fingerprint.crop.get_pixel(5, 5).0,
        )
    }

    #[test]
    fn a_target_is_fingerprinted_as_it_looked_before_the_pointer_reached_it() {
        let (outside, inside) = ((1.0, 150.0, 80.0), (2.0, 30.0, 15.0));
        // Away from the item at 1 s, on it from 2 s: the frame of 0.5 s
        // shows it at rest, as replay will find it.
        assert_eq!(
            hovered_then_pressed(GREY, BLUE, &[outside, inside]),
            ("save".into(), GREY)
        );
        // On it since before the first frame: no frame shows it at rest.
        assert_eq!(
            hovered_then_pressed(GREY, BLUE, &[(0.2, 30.0, 15.0), inside]),
            (String::new(), BLUE)
        );
        // Reached it before the first frame: the same.
        assert_eq!(
            hovered_then_pressed(GREY, BLUE, &[(0.1, 150.0, 80.0), (0.3, 30.0, 15.0)]),
            (String::new(), BLUE)
        );
        // The earlier frame shows another element there (what lay under a
        // menu before it opened): the frame of the press is kept.
        assert_eq!(
            hovered_then_pressed(GREEN, GREY, &[outside, inside]),
            ("save".into(), GREY)
        );
        // Hovered, it still reads, and at rest it reads the same.
        assert_eq!(
            hovered_then_pressed(GREY, GREY, &[outside, inside]),
            ("save".into(), GREY)
        );
        // A press between the frame and this one (it may have opened what
        // this press is made in): the frame shows another moment.
        for earlier in [(2.2, 30.0, 15.0), (0.8, 150.0, 80.0)] {
            assert_eq!(
                hovered_then_pressed_after(GREY, BLUE, &[outside, inside], &[earlier]),
                (String::new(), BLUE),
                "{earlier:?}"
            );
        }
        // One before the frame does not matter.
        assert_eq!(
            hovered_then_pressed_after(GREY, BLUE, &[outside, inside], &[(0.3, 150.0, 80.0)]),
            ("save".into(), GREY)
        );
    }

    #[test]
    fn a_hovered_element_is_the_one_at_rest_only_where_they_read_and_lie_alike() {
        let described = |label: &str| Description {
            text: format!("text {label:?}"),
            role: "text".into(),
            label: label.into(),
        };
        let rect = |x, y, width, height| PixelRect {
            x,
            y,
            width,
            height,
        };
        let row = rect(0, 40, 200, 24);
        let text = rect(24, 44, 60, 16);
        let check = |hovered: (&str, PixelRect), rest: (&str, PixelRect)| {
            same_element_at_rest(
                (&described(hovered.0), &hovered.1),
                (&described(rest.0), &rest.1),
            )
        };
        // A highlighted menu row (read or not) around its item's text.
        assert!(check(("save as", row), ("save as", text)));
        assert!(check(("", row), ("save as", text)));
        // A lit button and the same button at rest.
        assert!(check(
            ("ok", rect(10, 10, 80, 30)),
            ("ok", rect(11, 11, 78, 28))
        ));
        assert!(check(
            ("", rect(10, 10, 30, 30)),
            ("", rect(12, 12, 26, 26))
        ));
        // Another text there at rest, or a text far larger than the
        // hovered one (what lay under a menu before it opened).
        assert!(!check(("save as", row), ("open", text)));
        assert!(!check(("", text), ("", rect(0, 0, 400, 300))));
        // "Olsen" at rest is not the "Olson" hovered.
        assert!(!check(("maria olson", row), ("maria olsen", text)));
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
