//! The structural rung: a recorded element found again by its identity in
//! the live accessibility tree, scrolled into view first where it lies out
//! of its list's view, and cross-checked by the pixels on its own line (or
//! the window) before it is pressed.

/// What a twin's [`crate::Candidate`] measures: it fits the recorded
/// identity as well as the others.
pub const TWIN_MEASURE: &str = "identity";

use super::*;

impl VisualStrategy {
    /// The refusal of twins: kept with the step, in reading order, for the
    /// report and for `reprise teach` to say which one it is.
    fn refuse_twins(
        &mut self,
        element: &ElementIdentity,
        candidates: &[crate::identity::Twin],
    ) -> StrategyError {
        self.findings.candidates = candidates
            .iter()
            .map(|twin| crate::Candidate {
                description: twin.label.clone(),
                score: 1.0,
                measure: TWIN_MEASURE.into(),
                rect: Some(twin.rect),
            })
            .collect();
        let listed: Vec<String> = candidates
            .iter()
            .enumerate()
            .map(|(idx, twin)| format!("{}. {}", idx + 1, twin.words()))
            .collect();
        let taught = element.ordinal.map_or_else(String::new, |ordinal| {
            format!(
                " (taught: {} twins; now {} fit)",
                ordinal.words(),
                candidates.len()
            )
        });
        StrategyError::Fatal(format!(
            "refused: {} elements fit {} and nothing tells them apart{taught}: {} (`reprise teach` says which it is)",
            candidates.len(),
            element.label(),
            listed.join("; ")
        ))
    }

    /// The element the live tree found (`rect`, `point`) for a press whose
    /// tree's boxes the recording fitted to its pixels by `offset`: where
    /// the pixels on its line read it in its box, as the tree gives it (the
    /// offset is gone) or moved by the same offset (found again), with
    /// what was found; `None` where they read it at neither: the tree is
    /// not used for this press, the pixels decide it.
    fn refit(
        &mut self,
        element: &ElementIdentity,
        target: &Target,
        observation: &Observation<'_>,
        (rect, point): (reprise_models::Rect, (f64, f64)),
        offset: (i32, i32),
    ) -> Option<(reprise_models::Rect, (f64, f64), String)> {
        if !self.rungs.visual || !self.vision.describer.runs_here() {
            return None;
        }
        let area = target.sought()?.area;
        for (dx, dy) in [(0, 0), offset] {
            let moved = reprise_models::displaced::shifted(rect, (dx, dy));
            let Some(line) = self.read_line(&moved, area, observation) else {
                continue;
            };
            if line_agrees(element, &moved, &line) {
                self.findings.fitted = ((dx, dy) != (0, 0)).then_some((dx, dy));
                let moved_words = self.findings.fitted.map_or_else(String::new, |_| {
                    format!(
                        ", its boxes moved by ({dx}, {dy}) as the recording's pixels fitted them"
                    )
                });
                let point = (point.0 + f64::from(dx), point.1 + f64::from(dy));
                let agreed = format!("{moved_words}; the pixels read it on its line");
                return Some((moved, point, agreed));
            }
        }
        None
    }

    /// The element a step found by its identity, for the re-check just
    /// before its press: the recorded identity at the box the live tree
    /// gave it (before any fitted offset moved it).
    pub(super) fn expected(&self, by: FoundBy) -> Option<ElementIdentity> {
        let (element, _) = self.findings.structural.as_ref()?;
        let rect = self.findings.target?;
        let rect = match self.findings.fitted {
            Some((dx, dy)) => reprise_models::displaced::shifted(rect, (-dx, -dy)),
            None => rect,
        };
        (by == FoundBy::Structural).then(|| ElementIdentity {
            rect,
            ..element.clone()
        })
    }

    /// The live element the structural rung found: its states now (for
    /// the effect check) and who the live tree says it is (for heals).
    fn note_live(&mut self, observation: &Observation<'_>, app: &str, node_idx: u32) {
        let live = observation.tree.map(|live| &live.nodes[node_idx as usize]);
        self.findings.states_before = live.map(|node| node.states.clone());
        self.findings.live = observation
            .tree
            .and_then(|live| reprise_models::element::identity_of_node(live, app, node_idx));
    }

    /// The structural rung's answer where the live tree found the recorded
    /// element, node `node_idx` at `rect`, to be pressed at `point`: kept
    /// where the pixels do not see it elsewhere (or, for a tree the
    /// recording fitted to its pixels, where they read it at its box or at
    /// the same offset; else the pixels decide).
    fn found_by_identity(
        &mut self,
        (planned, element, press): (&PlannedStep, &ElementIdentity, (f64, f64)),
        observation: &Observation<'_>,
        (node_idx, rect, point): (u32, reprise_models::Rect, (f64, f64)),
        evidence: &str,
    ) -> Result<StructuralRung, StrategyError> {
        let tree = &planned.tree;
        let (rect, point, agreed) = match pressed_fit(tree) {
            None => {
                let agreed = self
                    .cross_check(tree, &planned.target, observation, (rect, evidence))
                    .map_err(StrategyError::Fatal)?;
                (rect, point, agreed.to_owned())
            }
            Some(offset) => {
                let found = (rect, point);
                match self.refit(element, &planned.target, observation, found, offset) {
                    Some(refitted) => refitted,
                    None => return Ok(StructuralRung::Pass),
                }
            }
        };
        self.findings.target = Some(rect);
        self.findings.structural = Some((element.clone(), press));
        self.note_live(observation, &element.app, node_idx);
        Ok(StructuralRung::Found(Found {
            point: Some(point),
            by: FoundBy::Structural,
            reason: format!("found {evidence} by its identity in the accessibility tree{agreed}"),
        }))
    }

    /// The structural rung's answer for step `idx`: found, a turn of the
    /// wheel first, or no answer (the visual rung decides); a refusal where
    /// the target is ambiguous, gone, or seen elsewhere by the pixels.
    pub(super) fn structural_rung(
        &mut self,
        idx: usize,
        planned: &PlannedStep,
        observation: &Observation<'_>,
    ) -> Result<StructuralRung, StrategyError> {
        let tree = &planned.tree;
        let Some(element) = pressed_element(tree).filter(|_| self.rungs.structural) else {
            return Ok(StructuralRung::Pass);
        };
        let press = tree.position().unwrap_or(element.rect.center());
        let answer = observation.tree.map_or(StructuralAnswer::NoAnswer, |live| {
            locate(element, press, live)
        });
        match answer {
            StructuralAnswer::Found {
                node_idx,
                rect,
                point,
                evidence,
            } => self.found_by_identity(
                (planned, element, press),
                observation,
                (node_idx, rect, point),
                &evidence,
            ),
            StructuralAnswer::Ambiguous { candidates } => {
                Err(self.refuse_twins(element, &candidates))
            }
            StructuralAnswer::OutOfView {
                rect,
                view,
                wheel,
                label,
                place,
                ..
            } => {
                let turn = self.turn_toward(idx, rect, view, &label, &place)?;
                Ok(StructuralRung::Prepare(Box::new(scroll_step(
                    idx, turn, wheel, &label, &place,
                ))))
            }
            StructuralAnswer::Gone { reason } => {
                // A long list is read as far as it shows: the next attempt
                // reads it whole (the target may be scrolled out of its
                // view), and refuses as gone only then.
                let looked_everywhere = self.attempts.whole_lists == Some(idx);
                self.attempts.whole_lists = Some(idx);
                Err(StrategyError::Retryable(if looked_everywhere {
                    reason
                } else {
                    format!("{reason}; looking again with long lists read beyond what they show")
                }))
            }
            StructuralAnswer::NoAnswer if !self.rungs.visual => {
                Err(StrategyError::Retryable(format!(
                    "{} exposes no usable accessibility tree for {}, and the visual rung is off",
                    element.app,
                    element.label()
                )))
            }
            StructuralAnswer::NoAnswer => Ok(StructuralRung::Pass),
        }
    }

    /// The next turn of the wheel for step `idx`, whose target (now at
    /// `rect`) is scrolled out of `view`: in words and as the wheel's
    /// notches (dx, dy). How far a notch moves it is learned from the last
    /// turn; a turn that did not move it, or more than
    /// [`MAX_TURNS`](crate::scroll::MAX_TURNS), is refused.
    fn turn_toward(
        &mut self,
        idx: usize,
        rect: reprise_models::Rect,
        view: reprise_models::Rect,
        label: &str,
        place: &str,
    ) -> Result<(String, (i32, i32)), StrategyError> {
        use crate::scroll::{MAX_TURNS, PerNotch, shortfall, turn_words};
        let mut scrolling = match self.attempts.scrolling.take() {
            Some(scrolling) if scrolling.step_idx == idx => scrolling,
            _ => Scrolling {
                step_idx: idx,
                turns: 0,
                per_notch: PerNotch::guess(rect),
                last: None,
            },
        };
        if scrolling.turns >= MAX_TURNS {
            self.attempts.scrolling = Some(scrolling);
            return Err(StrategyError::Retryable(format!(
                "{label} is still scrolled out of view ({place}) after {MAX_TURNS} turns of the wheel: refusing to press where it does not show"
            )));
        }
        if let Some((before, notches)) = scrolling.last {
            let moved = (rect.left - before.left, rect.top - before.top);
            scrolling.per_notch = scrolling
                .per_notch
                .learned(notches, moved)
                .map_err(|_| {
                    StrategyError::Retryable(format!(
                        "{label} is scrolled out of view ({place}), and turning the wheel {} over the view did not move it: refusing to press where it does not show",
                        turn_words(notches)
                    ))
                })?;
        }
        let notches = scrolling.per_notch.notches(shortfall(rect, view));
        if notches == (0, 0) {
            return Err(StrategyError::Retryable(format!(
                "{label} is scrolled out of view ({place}), and no turn of the wheel brings it in: refusing to press where it does not show"
            )));
        }
        scrolling.turns += 1;
        scrolling.last = Some((rect, notches));
        self.attempts.scrolling = Some(scrolling);
        Ok((turn_words(notches), notches))
    }

    /// The visual rung as a cross-check of the structural one: where the
    /// pixels find the target by what it reads (its exact description, or
    /// a text no other element shares), not by its place among look-alikes
    /// or its look, in a box apart from the element the tree found, the two
    /// disagree about the element: `Err` with both named. Where the pixels
    /// find nothing sure, or agree, `Ok` with what they said. Only with a
    /// describer that runs here: a healthy structural step never calls a
    /// model.
    fn cross_check(
        &mut self,
        tree: &ActionEvent,
        target: &Target,
        observation: &Observation<'_>,
        (structural, evidence): (reprise_models::Rect, &str),
    ) -> Result<&'static str, String> {
        let Some(sought) = target.sought() else {
            return Ok("");
        };
        if !self.rungs.visual || !self.vision.describer.runs_here() {
            return Ok("");
        }
        // An element whose name its pixels never showed as text (an icon
        // button: the recording read something else in it), in no row,
        // agrees where its box shows it as the recording did: the window
        // is not read whole for a name it cannot show.
        if let Some(element) = pressed_element(tree)
            && element.band.is_empty()
            && !element.name.as_deref().is_some_and(|name| {
                crate::identity::reads_as(name, &sought.fingerprint.description.label)
            })
            && shows_as_recorded(&sought.fingerprint.crop, &structural, observation.frame)
        {
            return Ok("; the pixels show it as recorded");
        }
        // Where the pixels on the element's own line read as it (its name in
        // its box, its row's other cells beside it), they agree: the window
        // is not read whole.
        if let Some(element) = pressed_element(tree)
            && let Some(line) = self.read_line(&structural, sought.area, observation)
            && line_agrees(element, &structural, &line)
        {
            return Ok("; the pixels read it on its line");
        }
        let found = self.find_in_pixels(tree, &sought, observation);
        self.findings.candidates.clear();
        match found {
            Ok(found) if matches!(found.by, FoundBy::Exact | FoundBy::Text) => {
                // The same element: one box holds the other's middle. Boxes
                // that merely touch are neighbours (a row above, a row below).
                if found.rect.holds_middle_of(&structural) {
                    return Ok("; the pixels agree");
                }
                Err(format!(
                    "refused: the accessibility tree finds {evidence} at {}, but the pixels find the target elsewhere ({}, at {}): they disagree about the element",
                    place_of(&structural),
                    found.reason,
                    place_of(&found.rect)
                ))
            }
            _ => Ok(""),
        }
    }

    /// What the pixels read on the line of `structural` (a box on the
    /// screen) across `area`: each segment's box on the screen and its text.
    /// Never through the segmentation cache (a line is no window).
    fn read_line(
        &mut self,
        structural: &reprise_models::Rect,
        area: Area,
        observation: &Observation<'_>,
    ) -> Option<Vec<(reprise_models::Rect, String)>> {
        let (across, _) = area_now(area, observation).ok()?;
        let line = reprise_models::Rect::new(
            across.left,
            structural.top - LINE_MARGIN,
            across.width,
            structural.height + 2 * LINE_MARGIN as u32,
        );
        let (image, mapping) = window_image(observation.frame, &line)?;
        let segments = self.vision.segmenter.segment(&image).ok()?;
        self.vision.stats.segmentations += 1;
        let descriptions = self.vision.describer.describe(&image, &segments).ok()?;
        self.vision.stats.describe_calls += 1;
        Some(
            segments
                .iter()
                .zip(descriptions)
                .map(|(segment, description)| {
                    (
                        image_rect_on_screen(&mapping, &segment.rect),
                        description.label,
                    )
                })
                .collect(),
        )
    }
}

/// The offset the recording fitted the tree's boxes of `tree`'s press by,
/// where its tree's boxes were off the screen.
fn pressed_fit(tree: &ActionEvent) -> Option<(i32, i32)> {
    std::iter::once(tree)
        .chain(&tree.children)
        .filter(|event| event.mouse_pressed != Some(false) && event.element.is_some())
        .find_map(|event| match &event.identity {
            Some(reprise_models::element::IdentityCheck::Checked { fitted, .. }) => Some(*fitted),
            _ => None,
        })
        .flatten()
}

/// The pixels above and below an element's box read with its line.
const LINE_MARGIN: i32 = 1;

/// The preparation that turns the wheel (`turn`: in words and as notches)
/// at `wheel`, over the view of the target `label` lies out of.
fn scroll_step(
    idx: usize,
    turn: (String, (i32, i32)),
    wheel: (f64, f64),
    label: &str,
    place: &str,
) -> Step {
    Step {
        source_event: Some(idx),
        label: format!("scroll {} at ({:.0}, {:.0})", turn.0, wheel.0, wheel.1),
        target: Some(wheel),
        reason: format!(
            "{label} is in the window's accessibility tree but scrolled out of view ({place}): turning the wheel {} over the view to bring it in",
            turn.0
        ),
        actions: vec![
            Action::MoveTo {
                x: wheel.0,
                y: wheel.1,
            },
            Action::Scroll {
                dx: turn.1.0,
                dy: turn.1.1,
            },
        ],
        found_by: Some(FoundBy::Structural),
        ..Default::default()
    }
}

/// Whether what the pixels read on the line of the tree's element (`line`:
/// boxes on the screen and their texts) shows that element: a text that
/// starts in its box (`structural`, or the padding left of it, half its
/// height) and reads as its name, and, for an element with a band (a row's
/// other cells, a control's label), every text of the band read on the
/// line, after the name or in another box. One text holding the whole row
/// ("maria olsen tromsø", as GTK's rows read) is enough; a text that merely
/// contains the name ("click ok to go on") is not.
pub(super) fn line_agrees(
    element: &ElementIdentity,
    structural: &reprise_models::Rect,
    line: &[(reprise_models::Rect, String)],
) -> bool {
    let Some(name) = element.name.as_deref() else {
        return false;
    };
    // A row's text may start in its padding, left of the cell's box.
    let padding = (structural.height / 2) as i32;
    line.iter().enumerate().any(|(idx, (rect, text))| {
        let middle = i64::from(rect.top) + i64::from(rect.height) / 2;
        let starts_inside = (structural.left - padding..).contains(&rect.left)
            && i64::from(rect.left) < structural.right()
            && (i64::from(structural.top)..structural.bottom()).contains(&middle);
        if !starts_inside {
            return false;
        }
        if element.band.is_empty() {
            return crate::identity::reads_as(name, text);
        }
        let Some(rest) = crate::identity::rest_after(name, text) else {
            return false;
        };
        let read = std::iter::once(rest)
            .chain(
                line.iter()
                    .enumerate()
                    .filter(|(other, _)| *other != idx)
                    .map(|(_, (_, text))| text.clone()),
            )
            .collect::<Vec<_>>()
            .join(" ");
        element
            .band
            .iter()
            .all(|text| crate::identity::reads_within(text, &read))
    })
}

/// Whether every text of `band` reads, in the pixels, on the line of
/// segment `idx`: in another segment whose middle lies within its height.
pub(super) fn band_on_line(
    band: &[String],
    idx: usize,
    segments: &[crate::vision::Segment],
    descriptions: &[Description],
) -> bool {
    let line = &segments[idx].rect;
    band.iter().all(|text| {
        (0..segments.len()).any(|other| {
            let rect = &segments[other].rect;
            let middle = rect.y + rect.height / 2;
            other != idx
                && (line.y..line.bottom()).contains(&middle)
                && crate::identity::reads_as(text, &descriptions[other].label)
        })
    })
}

/// How alike a textless element's box and its recorded look must be (SSIM
/// of their luminance) to agree.
const SHOWS_AS_RECORDED: f64 = 0.9;

/// The least spread of a recorded look's luminance (its standard
/// deviation, of 255) that shows a shape: a blank box (an empty field, a
/// plain panel) looks like every other and agrees with nothing.
const SHAPED: f64 = 12.0;

/// Whether `structural` (a box on the screen) shows what `crop` (the
/// recorded look of the element, a shape and not a blank) shows around
/// its middle.
pub(super) fn shows_as_recorded(
    crop: &image::RgbaImage,
    structural: &reprise_models::Rect,
    frame: &crate::Frame,
) -> bool {
    // The recorded look is of the segment around the element, which may
    // reach past the box the tree gives: the same size around its middle.
    let (cx, cy) = (
        i64::from(structural.left) + i64::from(structural.width) / 2,
        i64::from(structural.top) + i64::from(structural.height) / 2,
    );
    let around = reprise_models::Rect::new(
        (cx - i64::from(crop.width()) / 2) as i32,
        (cy - i64::from(crop.height()) / 2) as i32,
        crop.width(),
        crop.height(),
    );
    let Some((image, _)) = window_image(frame, &around) else {
        return false;
    };
    // Another size (another scale, the screen's edge): not compared here.
    if image.dimensions() != crop.dimensions() {
        return false;
    }
    use crate::vision::ssim::{Gray, ssim};
    let recorded = Gray::luminance(crop);
    let n = recorded.values.len().max(1) as f64;
    let mean = recorded.values.iter().sum::<f64>() / n;
    let spread = (recorded
        .values
        .iter()
        .map(|v| (v - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    if spread < SHAPED {
        return false;
    }
    let similarity = ssim(&recorded, &Gray::luminance(&image)).unwrap_or(0.0);
    tracing::debug!(
        similarity,
        spread,
        "an element showing no text: its box against its recorded look"
    );
    similarity >= SHOWS_AS_RECORDED
}
