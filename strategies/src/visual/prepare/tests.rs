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
    fingerprinted_in(&[(0.5, rest), (2.5, pressed)], track, presses)
}

/// The fingerprint of a press on [`ITEM`] at 3 s, with frames of it in a
/// colour taken at each `(seconds, colour)` of `frames` (the last one the
/// frame the press links to), the pointer at each of `track` and earlier
/// presses at each of `presses` (`(seconds, x, y)`).
fn fingerprinted_in(
    frames: &[(f64, [u8; 4])],
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
    press.screenshot_id = Some(frames.len() as u32 - 1);
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
    let (times, frames): (Vec<f64>, Vec<Frame>) = frames
        .iter()
        .map(|&(at, colour)| (at, frame(colour)))
        .unzip();
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
        &times,
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
fn a_move_heard_late_does_not_make_a_hovered_frame_the_one_at_rest() {
    // The pointer came at 1.6 s, but the recorder heard of it at 2 s (a
    // busy machine): the frame of 1.8 s already shows the item hovered,
    // the one of 0.5 s at rest.
    let (outside, inside) = ((1.0, 150.0, 80.0), (2.0, 30.0, 15.0));
    let frames = [(0.5, GREY), (1.8, BLUE), (2.5, BLUE)];
    assert_eq!(
        fingerprinted_in(&frames, &[outside, inside], &[]),
        ("save".into(), GREY)
    );
    // A press between the two (at 1.2 s) leaves no frame at rest.
    assert_eq!(
        fingerprinted_in(&frames, &[outside, inside], &[(1.2, 150.0, 80.0)]),
        (String::new(), BLUE)
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
