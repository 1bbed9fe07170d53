//! Waiting for the screen to settle before a step, so replay never outruns a
//! slow application (OpenAdapt's replays did: its issue #434).

use std::time::{Duration, Instant};

use reprise_models::Rect;

use crate::{Desktop, DesktopError, Frame};

/// How long the screen must stay unchanged, how often to look, and the most to wait.
#[derive(Debug, Clone, Copy)]
pub struct SettleOptions {
    pub quiet: Duration,
    pub poll: Duration,
    pub timeout: Duration,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            quiet: Duration::from_millis(150),
            poll: Duration::from_millis(50),
            timeout: Duration::from_secs(3),
        }
    }
}

/// The frame once the region (the active window; the whole screen when
/// `None`) has not changed for `quiet`, or the last frame after `timeout`;
/// with whether it settled. `None` if aborted.
pub fn wait_until_settled(
    desktop: &mut dyn Desktop,
    options: &SettleOptions,
    region: Option<Rect>,
    abort: &dyn Fn() -> bool,
) -> Result<Option<(Frame, bool)>, DesktopError> {
    wait_until_settled_or(desktop, options, region, abort, &mut |_| false)
}

/// [`wait_until_settled`], ended early (with the frame of that look, not
/// settled) once `over` says what was awaited is known another way (the
/// window a step closed is gone).
pub fn wait_until_settled_or(
    desktop: &mut dyn Desktop,
    options: &SettleOptions,
    region: Option<Rect>,
    abort: &dyn Fn() -> bool,
    over: &mut dyn FnMut(&mut dyn Desktop) -> bool,
) -> Result<Option<(Frame, bool)>, DesktopError> {
    let watch = Watch {
        region,
        ..Watch::default()
    };
    Ok(wait_settling(desktop, options, watch, abort, over)?.map(|look| (look.frame, look.quiet)))
}

/// A look at the screen that found it settled: the frame, the region
/// watched and the box left out of it, since when that region but the box
/// had not changed, and when the frame was taken.
#[derive(Debug, Clone)]
pub struct Settled {
    pub frame: Frame,
    pub region: Option<Rect>,
    pub except: Option<Rect>,
    pub since: Instant,
    pub at: Instant,
}

/// The last look of a wait for the screen: its frame, whether what was
/// watched had been quiet (else the wait ended otherwise), and, where the
/// whole region was, since when (to go on from).
#[derive(Debug)]
pub struct Look {
    pub frame: Frame,
    pub quiet: bool,
    pub settled: Option<Settled>,
}

/// What a wait for the screen watches: the region (the whole screen when
/// `None`), a box inside it whose changes do not count (`except`, with
/// [`RING`] around it), and a recent settled look to go on from (`prior`).
#[derive(Debug, Default)]
pub struct Watch {
    pub region: Option<Rect>,
    pub except: Option<Rect>,
    pub prior: Option<Settled>,
}

/// How far around a box left out of a wait its changes still are its own,
/// in logical pixels: toolkits draw a control's focus ring and shadow just
/// outside the box its tree gives (GTK's Adwaita 3 pixels out).
pub const RING: u32 = 4;

/// [`wait_until_settled_or`], watching as `watch` says: going on from its
/// prior, a look that found the same region settled, with the same box
/// left out, no longer than `quiet` ago (the last step's effect check):
/// where the region shows the same now but for that box, it has been quiet
/// since then, and one look says so. The last look of a wait is taken
/// when the quiet is due, not a whole poll later. A wait that leaves a box
/// out settles only that much, and its [`Settled`] says which box.
pub fn wait_settling(
    desktop: &mut dyn Desktop,
    options: &SettleOptions,
    Watch {
        region,
        except,
        prior,
    }: Watch,
    abort: &dyn Fn() -> bool,
    over: &mut dyn FnMut(&mut dyn Desktop) -> bool,
) -> Result<Option<Look>, DesktopError> {
    let started = desktop.now();
    let mut frame = desktop.screenshot()?;
    let mut taken = desktop.now();
    let mut stable_since = taken;
    let left_out = except.map(|rect| rect.grown(RING));
    if let Some(prior) = prior
        && prior.except == except
        && prior.region == region
        && taken.saturating_duration_since(prior.at) <= options.quiet
        && same_region_except(&prior.frame, &frame, region, left_out)
    {
        stable_since = prior.since;
    }
    loop {
        if abort() {
            return Ok(None);
        }
        if over(desktop) {
            return Ok(Some(Look {
                frame,
                quiet: false,
                settled: None,
            }));
        }
        let now = desktop.now();
        let quiet_for = now.saturating_duration_since(stable_since);
        if quiet_for >= options.quiet {
            let settled = Settled {
                frame: frame.clone(),
                region,
                except,
                since: stable_since,
                at: taken,
            };
            return Ok(Some(Look {
                frame,
                settled: Some(settled),
                quiet: true,
            }));
        }
        if now.duration_since(started) >= options.timeout {
            return Ok(Some(Look {
                frame,
                quiet: false,
                settled: None,
            }));
        }
        desktop.sleep(options.poll.min(options.quiet - quiet_for));
        let next = desktop.screenshot()?;
        taken = desktop.now();
        if !same_region_except(&frame, &next, region, left_out) {
            stable_since = taken;
        }
        frame = next;
    }
}

/// Whether two frames are equal inside `region` but for `except` (both in
/// logical coordinates).
pub fn same_region_except(
    a: &Frame,
    b: &Frame,
    region: Option<Rect>,
    except: Option<Rect>,
) -> bool {
    let Some(except) = except else {
        return same_region(a, b, region);
    };
    if a.image.dimensions() != b.image.dimensions() {
        return false;
    }
    let (x0, y0, x1, y1) = pixel_bounds(a, region);
    let (ex0, ey0, ex1, ey1) = pixel_bounds(a, Some(except));
    let row_bytes = a.image.width() as usize * 4;
    let (a_raw, b_raw) = (a.image.as_raw(), b.image.as_raw());
    let same = |y: u32, from: u32, to: u32| {
        let row = y as usize * row_bytes;
        let (start, end) = (row + from as usize * 4, row + to.max(from) as usize * 4);
        a_raw[start..end] == b_raw[start..end]
    };
    (y0..y1).all(|y| {
        if (ey0..ey1).contains(&y) {
            same(y, x0, ex0.clamp(x0, x1)) && same(y, ex1.clamp(x0, x1), x1)
        } else {
            same(y, x0, x1)
        }
    })
}

/// Whether two frames are equal inside `region` (given in logical
/// coordinates, mapped to pixels through the screen's scale factor).
pub fn same_region(a: &Frame, b: &Frame, region: Option<Rect>) -> bool {
    if a.image.dimensions() != b.image.dimensions() {
        return false;
    }
    let (x0, y0, x1, y1) = pixel_bounds(a, region);
    let width = a.image.width();
    let row_bytes = width as usize * 4;
    let (a_raw, b_raw) = (a.image.as_raw(), b.image.as_raw());
    (y0..y1).all(|y| {
        let start = y as usize * row_bytes + x0 as usize * 4;
        let end = y as usize * row_bytes + x1 as usize * 4;
        a_raw[start..end] == b_raw[start..end]
    })
}

/// `region` (logical coordinates) as pixel bounds `(x0, y0, x1, y1)` of
/// `frame`'s image, clipped to it; the whole image without a region.
fn pixel_bounds(frame: &Frame, region: Option<Rect>) -> (u32, u32, u32, u32) {
    let (width, height) = frame.image.dimensions();
    let Some(rect) = region else {
        return (0, 0, width, height);
    };
    let scale = frame.screen.scale_factor;
    let origin = frame.screen.rect;
    let to_px = |value: i64, origin: i32, limit: u32| -> u32 {
        (((value - i64::from(origin)) as f64 * scale)
            .round()
            .max(0.0) as u32)
            .min(limit)
    };
    (
        to_px(i64::from(rect.left), origin.left, width),
        to_px(i64::from(rect.top), origin.top, height),
        to_px(rect.right(), origin.left, width),
        to_px(rect.bottom(), origin.top, height),
    )
}

/// The widest a change may be, in logical pixels, and still be only a text
/// caret blinking (or moving by a character's width is wider than this).
pub const CARET_WIDTH: f64 = 3.0;

/// Whether the frames differ inside `region` by more than a caret: the box
/// around every differing pixel is wider and taller than [`CARET_WIDTH`].
/// A caret that blinks or a focus line that appears is not the effect of
/// typing; text that appears is.
pub fn changed_beyond_caret(a: &Frame, b: &Frame, region: Option<Rect>) -> bool {
    if a.image.dimensions() != b.image.dimensions() {
        return true;
    }
    let (x0, y0, x1, y1) = pixel_bounds(a, region);
    let mut changed: Option<(u32, u32, u32, u32)> = None;
    for y in y0..y1 {
        for x in x0..x1 {
            if a.image.get_pixel(x, y) != b.image.get_pixel(x, y) {
                let (left, top, right, bottom) = changed.unwrap_or((x, y, x, y));
                changed = Some((left.min(x), top.min(y), right.max(x), bottom.max(y)));
            }
        }
    }
    let Some((left, top, right, bottom)) = changed else {
        return false;
    };
    let limit = CARET_WIDTH * a.screen.scale_factor;
    f64::from(right - left + 1) > limit && f64::from(bottom - top + 1) > limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::ScriptedDesktop;
    use reprise_models::ScreenGeometry;

    fn frame(paint: &[(u32, u32, u32, u32)], scale: f64) -> Frame {
        let mut image = image::RgbaImage::from_pixel(100, 60, image::Rgba([255; 4]));
        for &(x, y, width, height) in paint {
            for py in y..y + height {
                for px in x..x + width {
                    image.put_pixel(px, py, image::Rgba([0, 0, 0, 255]));
                }
            }
        }
        Frame {
            image,
            screen: ScreenGeometry {
                rect: Rect::new(0, 0, (100.0 / scale) as u32, (60.0 / scale) as u32),
                scale_factor: scale,
            },
        }
    }

    /// A desktop whose screen shows a new mark every `every` until `until`
    /// (its virtual time), then stays as it is; the marks are drawn at
    /// `x` upwards, so a region left of `x` never changes.
    fn changing_desktop(until: Duration, every: Duration, x: u32) -> ScriptedDesktop {
        let mut desktop = ScriptedDesktop::new();
        desktop.frame = frame(&[], 1.0);
        let mut at = every;
        let mut step = 0;
        while at <= until {
            step += 1;
            desktop
                .timeline
                .push((at, frame(&[(x + step % 10, 10, 2, 2)], 1.0)));
            at += every;
        }
        desktop
    }

    /// What `wait_until_settled` gave (`None`: aborted; else whether it
    /// settled) and how long it waited on the desktop's clock, in ms. With
    /// `abort_at_look`, the abort check says so from that look on.
    fn check(
        desktop: &mut ScriptedDesktop,
        region: Option<Rect>,
        abort_at_look: Option<u32>,
    ) -> (Option<bool>, u128) {
        let looks = std::cell::Cell::new(0);
        let abort = || {
            looks.set(looks.get() + 1);
            abort_at_look.is_some_and(|look| looks.get() >= look)
        };
        let outcome =
            wait_until_settled(desktop, &SettleOptions::default(), region, &abort).unwrap();
        (
            outcome.map(|(_, settled)| settled),
            desktop.slept.as_millis(),
        )
    }

    #[test]
    fn the_wait_ends_once_the_screen_has_been_quiet_and_is_bounded() {
        let ms = Duration::from_millis;
        // Changing every 40 ms for a second: settled 150 ms after the last
        // change (looks are 50 ms apart).
        let mut desktop = changing_desktop(ms(1000), ms(40), 50);
        let (settled, waited) = check(&mut desktop, None, None);
        assert_eq!(settled, Some(true));
        assert!((1150..1250).contains(&waited), "{waited} ms");
        // A still screen: the quiet time and no more.
        let mut desktop = changing_desktop(ms(0), ms(40), 50);
        assert_eq!(check(&mut desktop, None, None), (Some(true), 150));
        // Never quiet: the last frame after the timeout, not settled.
        let mut desktop = changing_desktop(ms(60_000), ms(40), 50);
        let (settled, waited) = check(&mut desktop, None, None);
        assert_eq!(settled, Some(false));
        assert!((3000..3100).contains(&waited), "{waited} ms");
        // Changes outside the region (the window) do not hold the wait.
        let mut desktop = changing_desktop(ms(60_000), ms(40), 50);
        let window = Some(Rect::new(0, 0, 40, 60));
        assert_eq!(check(&mut desktop, window, None), (Some(true), 150));
        // An abort ends the wait at the look it comes in (looks are 50 ms
        // apart: the 11th is at 500 ms).
        let mut desktop = changing_desktop(ms(60_000), ms(40), 50);
        assert_eq!(check(&mut desktop, None, Some(11)), (None, 500));
    }

    #[test]
    fn a_wait_goes_on_from_a_recent_settled_look_only_where_the_screen_is_the_same() {
        let ms = Duration::from_millis;
        let options = SettleOptions::default();
        let window = Some(Rect::new(0, 0, 60, 60));
        // (prior's frame, its region, how long ago it was taken): how long
        // the wait took on the desktop's clock, and whether it settled.
        let wait = |prior_frame: Frame, prior_region: Option<Rect>, ago: Duration| {
            let mut desktop = changing_desktop(ms(0), ms(40), 50);
            desktop.slept = ms(1000);
            let at = desktop.now() - ago;
            let prior = Settled {
                frame: prior_frame,
                region: prior_region,
                except: None,
                since: at - options.quiet,
                at,
            };
            let look = wait_settling(
                &mut desktop,
                &options,
                Watch {
                    region: window,
                    except: None,
                    prior: Some(prior),
                },
                &|| false,
                &mut |_| false,
            )
            .unwrap()
            .unwrap();
            (
                (desktop.slept - ms(1000)).as_millis(),
                look.settled.is_some(),
            )
        };
        let same = frame(&[], 1.0);
        // The same window, the same pixels, a moment ago: one look.
        assert_eq!(wait(same.clone(), window, ms(40)), (0, true));
        // Pixels that changed since, another region, or a look older than
        // the quiet: the whole quiet is waited for again.
        let changed = frame(&[(5, 5, 4, 4)], 1.0);
        assert_eq!(wait(changed, window, ms(40)), (150, true));
        assert_eq!(wait(same.clone(), None, ms(40)), (150, true));
        assert_eq!(wait(same, window, ms(200)), (150, true));
    }

    #[test]
    fn changes_inside_the_box_left_out_do_not_hold_the_wait() {
        let ms = Duration::from_millis;
        let wait = |except: Option<Rect>| {
            // A mark changing for a minute at (50..62, 10..12).
            let mut desktop = changing_desktop(ms(60_000), ms(40), 50);
            let watch = Watch {
                region: None,
                except,
                prior: None,
            };
            let look = wait_settling(
                &mut desktop,
                &SettleOptions::default(),
                watch,
                &|| false,
                &mut |_| false,
            )
            .unwrap()
            .unwrap();
            (
                look.quiet,
                look.settled.is_some(),
                desktop.slept.as_millis(),
            )
        };
        // The box holds the mark: quiet at once, but only outside the box,
        // which the settled look says.
        assert_eq!(wait(Some(Rect::new(45, 5, 20, 10))), (true, true, 150));
        // A box beside it: the mark holds the wait to its bound.
        let (quiet, _, waited) = wait(Some(Rect::new(0, 0, 45, 60)));
        assert!(!quiet && (3000..3100).contains(&waited), "{waited}");
        // A box the mark hugs from outside (a focus ring drawn around a
        // button): the ring is the box's.
        assert_eq!(wait(Some(Rect::new(50, 13, 12, 10))), (true, true, 150));
    }

    #[test]
    fn the_wait_ends_at_the_look_that_knows_what_was_awaited_another_way() {
        // Changing for a second, but the step's window is gone at the third
        // look (100 ms): its frame, not settled, and no more waiting.
        let mut desktop =
            changing_desktop(Duration::from_millis(1000), Duration::from_millis(40), 50);
        let mut looks = 0;
        let mut gone = |_: &mut dyn Desktop| {
            looks += 1;
            looks >= 3
        };
        let outcome = wait_until_settled_or(
            &mut desktop,
            &SettleOptions::default(),
            None,
            &|| false,
            &mut gone,
        )
        .unwrap();
        assert_eq!(outcome.map(|(_, settled)| settled), Some(false));
        assert_eq!(desktop.slept.as_millis(), 100);
    }

    #[test]
    fn a_caret_is_not_a_change_and_text_is() {
        let check = |after: &[(u32, u32, u32, u32)], scale: f64, region: Option<Rect>| {
            changed_beyond_caret(&frame(&[], scale), &frame(after, scale), region)
        };
        assert!(!check(&[], 1.0, None), "nothing changed");
        assert!(!check(&[(10, 10, 2, 16)], 1.0, None), "a caret appeared");
        assert!(!check(&[(10, 30, 30, 1)], 1.0, None), "a focus line");
        assert!(check(&[(10, 10, 24, 12)], 1.0, None), "a word appeared");
        // At scale 2 a caret is twice as many pixels wide.
        assert!(!check(&[(10, 10, 5, 30)], 2.0, None));
        assert!(check(&[(10, 10, 7, 30)], 2.0, None));
        // Outside the region the change does not count.
        assert!(!check(
            &[(60, 10, 24, 12)],
            1.0,
            Some(Rect::new(0, 0, 50, 60))
        ));
    }
}
