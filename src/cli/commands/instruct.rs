//! `reprise edit NAME --instruct TEXT`: a model changes the steps file as a
//! person asks in plain language; its answer is checked as a hand edit is
//! (an unusable one is sent back with the mistake, a bounded number of
//! times), shown as a diff, and kept only when accepted.

use std::collections::HashMap;

use anyhow::{Result, bail};
use reprise_models::program::Program;
use reprise_strategies::llm::{
    FeedbackError, LlmRequest, Message, Part, Role, Unusable, complete_checked,
};

use super::steps::Subject;
use crate::settings::errors::UsageError;
use crate::store::Store;

/// How many answers the model may give before the edit is refused.
const MAX_ANSWERS: u32 = 3;

/// The most frames `--frames` sends, spread over the steps.
const MAX_FRAMES: usize = 8;

/// The widest a frame is sent, in pixels (a wider crop is scaled down).
const FRAME_WIDTH: u32 = 1024;

/// The steps as the model changed them.
pub(super) fn instructed(
    store: &Store,
    config: Option<&std::path::Path>,
    subject: &Subject,
    instruction: &str,
    frames: bool,
) -> Result<Program> {
    let frames = if frames {
        frame_parts(store, subject)?
    } else {
        Vec::new()
    };
    let n_frames = frames.len() / 2;
    let mut chain = crate::replay::model_chain(
        store,
        config,
        &format!("edit-{}", uuid::Uuid::new_v4()),
        &format!(
            "the steps of {:?} (as text, with what was typed; {})",
            subject.name,
            match n_frames {
                0 => "no images".to_owned(),
                1 => "the frame of 1 step".to_owned(),
                n => format!("the frames of {n} steps"),
            }
        ),
    )?;
    let values = HashMap::from([
        ("task", subject.task.clone()),
        ("steps", subject.text()),
        ("instruction", instruction.to_owned()),
        (
            "frames",
            if n_frames == 0 {
                String::new()
            } else {
                "\nImages follow, each the screen just before the step it names, cropped to that step's window: use them for what the instruction says of the screen.\n".to_owned()
            },
        ),
    ]);
    let prompt = crate::llm::prompt::render("edit_steps", &values)?;
    let mut parts = vec![Part::Text(prompt)];
    parts.extend(frames);
    let request = LlmRequest {
        purpose: "edit".into(),
        system: "You edit the steps files of recorded desktop tasks.".into(),
        messages: vec![Message {
            role: Role::User,
            parts,
        }],
        max_output_tokens: 4000,
    };
    let kind = "steps file, whole, in one ```toml block";
    let answer = complete_checked(&mut chain, &request, MAX_ANSWERS, kind, |answer| {
        let text = toml_block(answer);
        subject.read(&text).map_err(|err| Unusable(err.to_string()))
    });
    match answer {
        Ok((changed, _)) => Ok(changed),
        Err(FeedbackError::Llm(err)) => Err(anyhow::Error::new(crate::llm::LlmFailure(format!(
            "the model did not answer: {err}; nothing was saved"
        )))),
        Err(err @ FeedbackError::Invalid { .. }) => Err(anyhow::Error::new(
            crate::llm::LlmFailure(format!("{err}; nothing was saved")),
        )),
    }
}

/// For each step chosen (see [`chosen_steps`]) with a frame, a line naming
/// it and its frame cropped to its window; refused when the recording has
/// no frames at all.
fn frame_parts(store: &Store, subject: &Subject) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    let with_frames: Vec<usize> = (0..subject.planned.len())
        .filter(|&step| subject.planned[step].screenshot_id.is_some())
        .collect();
    for idx in chosen_steps(with_frames.len(), MAX_FRAMES) {
        let step = with_frames[idx];
        let tree = &subject.planned[step];
        let Some(shot) = tree
            .screenshot_id
            .and_then(|id| subject.screenshots.get(id as usize))
        else {
            continue;
        };
        let window = tree
            .window_state_id
            .and_then(|id| subject.windows.get(id as usize));
        let points: Vec<(f64, f64)> = tree.position().into_iter().collect();
        let (png, width, _, _) = crate::present::report::window_crop(
            store,
            &shot.content_hash,
            &shot.screen,
            window.map(|(rect, _)| *rect),
            &points,
        )?;
        parts.push(Part::Text(format!(
            "The screen before step {} (recorded = {}), in the window {:?}:",
            step + 1,
            step + 1,
            window.map_or("(none known)", |(_, title)| title.as_str())
        )));
        parts.push(Part::Png(if width <= FRAME_WIDTH {
            png
        } else {
            let crop = image::load_from_memory_with_format(&png, image::ImageFormat::Png)?;
            let crop = crop.to_rgba8();
            let small = crate::store::frames::narrowed(&crop, FRAME_WIDTH);
            crate::store::frames::encode_png(&small)
        }));
    }
    if parts.is_empty() {
        bail!(UsageError(format!(
            "--frames: {:?} has no frames to send (it was recorded without screenshots); nothing was saved",
            subject.name
        )));
    }
    Ok(parts)
}

/// Which of `n` steps' frames are sent (from 0): every one when there are
/// at most `max`, else `max` spread evenly, the first and the last among
/// them.
fn chosen_steps(n: usize, max: usize) -> Vec<usize> {
    if n <= max || max < 2 {
        return (0..n.min(max)).collect();
    }
    let mut chosen: Vec<usize> = (0..max).map(|idx| idx * (n - 1) / (max - 1)).collect();
    chosen.dedup();
    chosen
}

/// The steps file in an answer: its ```toml block, else the whole answer.
fn toml_block(answer: &str) -> String {
    let Some(start) = answer.find("```") else {
        return answer.trim().to_owned() + "\n";
    };
    let after = &answer[start + 3..];
    let body = after.find('\n').map_or("", |newline| &after[newline + 1..]);
    let body = body.find("```").map_or(body, |end| &body[..end]);
    body.trim_end().to_owned() + "\n"
}

/// Whether the person accepts the change shown: `--yes`, else asked at the
/// terminal; with neither, refused.
pub(super) fn accepted(yes: bool, version: u32) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    match super::output::ask(&format!("keep this change as version {version}? [y/N]"))? {
        Some(answer) => Ok(matches!(answer.as_str(), "y" | "Y" | "yes")),
        None => bail!(UsageError(
            "no terminal to ask whether to keep the change shown: give --yes to keep it; nothing was saved"
                .into()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{chosen_steps, toml_block};

    #[test]
    fn frames_are_sent_for_every_step_or_spread_from_the_first_to_the_last() {
        assert_eq!(chosen_steps(3, 8), [0, 1, 2]);
        assert_eq!(chosen_steps(0, 8), Vec::<usize>::new());
        assert_eq!(chosen_steps(15, 8), [0, 2, 4, 6, 8, 10, 12, 14]);
        assert_eq!(chosen_steps(9, 8), [0, 1, 2, 3, 4, 5, 6, 8]);
        for n in 9..40 {
            let chosen = chosen_steps(n, 8);
            assert_eq!(chosen.len(), 8, "{n}: {chosen:?}");
            assert_eq!((chosen[0], chosen[7]), (0, n - 1));
        }
    }

    #[test]
    fn the_steps_are_taken_from_their_block_or_the_whole_answer() {
        assert_eq!(
            toml_block("Here:\n```toml\n[[step]]\nrecorded = 1\n```\nDone."),
            "[[step]]\nrecorded = 1\n"
        );
        assert_eq!(
            toml_block("[[step]]\nrecorded = 1"),
            "[[step]]\nrecorded = 1\n"
        );
    }
}
