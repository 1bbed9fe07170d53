//! `reprise edit NAME --instruct TEXT`: a model changes the steps file as a
//! person asks in plain language; its answer is checked as a hand edit is
//! (an unusable one is sent back with the mistake, a bounded number of
//! times), shown as a diff, and kept only when accepted.

use std::collections::HashMap;

use anyhow::{Result, bail};
use reprise_models::program::Program;
use reprise_strategies::llm::{FeedbackError, LlmRequest, Message, Unusable, complete_checked};

use super::steps::Subject;
use crate::settings::errors::UsageError;
use crate::store::Store;

/// How many answers the model may give before the edit is refused.
const MAX_ANSWERS: u32 = 3;

/// The steps as the model changed them.
pub(super) fn instructed(
    store: &Store,
    config: Option<&std::path::Path>,
    subject: &Subject,
    instruction: &str,
) -> Result<Program> {
    let mut chain = crate::replay::model_chain(
        store,
        config,
        &format!("edit-{}", uuid::Uuid::new_v4()),
        &format!(
            "the steps of {:?} (as text, with what was typed; no images)",
            subject.name
        ),
    )?;
    let values = HashMap::from([
        ("task", subject.task.clone()),
        ("steps", subject.text()),
        ("instruction", instruction.to_owned()),
    ]);
    let prompt = crate::llm::prompt::render("edit_steps", &values)?;
    let request = LlmRequest {
        purpose: "edit".into(),
        system: "You edit the steps files of recorded desktop tasks.".into(),
        messages: vec![Message::user_text(prompt)],
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
    use super::toml_block;

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
