//! Changing a replay in plain language: the recorded actions go to a model
//! as JSON, with the coordinates removed from every action aimed at a
//! described element (so the model reasons about elements, not pixels); its
//! modified list is validated against the schema, and errors are fed back
//! into the next attempt, with a bound.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{PlannedStep, Target};
use crate::edit::typed_text;
use crate::llm::{FeedbackError, Llm, LlmRequest, Message, Unusable, complete_json};
use crate::vanilla::{RenderError, RenderPrompt};

const ACTION_NAMES: &[&str] = &[
    "move",
    "click",
    "singleclick",
    "doubleclick",
    "scroll",
    "type",
    "press",
    "release",
];

/// The recorded steps as the model sees them.
pub fn actions_json(steps: &[PlannedStep]) -> Value {
    Value::Array(
        steps
            .iter()
            .enumerate()
            .map(|(id, step)| {
                let tree = &step.tree;
                let mut action = json!({"id": id, "name": tree.name.as_str()});
                match &step.target {
                    Target::Element { fingerprint, .. } => {
                        action["target_description"] = json!(fingerprint.description.text)
                    }
                    _ => {
                        if let Some((x, y)) = tree.position() {
                            action["mouse_x"] = json!(x);
                            action["mouse_y"] = json!(y);
                        }
                    }
                }
                if let Some(text) = typed_text(tree) {
                    action["text"] = json!(text);
                } else if let Some(text) = &tree.text {
                    action["keys"] = json!(text);
                }
                action
            })
            .collect(),
    )
}

/// Validates the model's list and maps it back onto planned steps.
fn apply(steps: &[PlannedStep], answer: &Value) -> Result<Vec<PlannedStep>, Unusable> {
    let items = answer
        .as_array()
        .ok_or("the answer must be a JSON list of actions")?;
    let mut out = Vec::with_capacity(items.len());
    for (position, item) in items.iter().enumerate() {
        let name = item["name"]
            .as_str()
            .ok_or(format!("action {position} has no name"))?;
        if !ACTION_NAMES.contains(&name) {
            return Err(Unusable(format!(
                "action {position} has the unknown name {name:?}; use one of {ACTION_NAMES:?}"
            )));
        }
        let original = match item.get("id") {
            Some(id) => {
                let id = id
                    .as_u64()
                    .ok_or(format!("action {position}: id must be a number"))?
                    as usize;
                Some(steps.get(id).ok_or(format!(
                    "action {position} names step {id}, which does not exist"
                ))?)
            }
            None => None,
        };
        if let Some(description) = item.get("target_description") {
            let description = description.as_str().ok_or(format!(
                "action {position}: target_description must be text"
            ))?;
            let known = steps.iter().any(|step| matches!(&step.target, Target::Element { fingerprint, .. } if fingerprint.description.text == description));
            if !known {
                return Err(Unusable(format!(
                    "action {position} targets {description:?}, which no recorded action did"
                )));
            }
        }
        if name == "type" {
            let text = item["text"]
                .as_str()
                .ok_or(format!("action {position} types no text"))?;
            if text.is_empty() || text.chars().any(char::is_control) {
                return Err(Unusable(format!(
                    "action {position}: the text must be non-empty and printable"
                )));
            }
            let base =
                original.or_else(|| steps.iter().find(|step| typed_text(&step.tree).is_some()));
            let base = base.ok_or(format!(
                "action {position} types, but the recording types nothing to start from"
            ))?;
            let (trees, _) = crate::edit::replace_typed_text(
                vec![base.tree.clone()],
                &[(typed_text(&base.tree).unwrap_or_default(), text.to_owned())],
            );
            out.push(PlannedStep {
                tree: trees.into_iter().next().expect("one tree"),
                target: Target::AsRecorded,
                expects_change: false,
            });
            continue;
        }
        let original = original.ok_or(format!(
            "action {position} ({name}) must keep the id of a recorded action"
        ))?;
        out.push(original.clone());
    }
    Ok(out)
}

/// Why instructions could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum InstructionsError {
    #[error("render the prompt: {0}")]
    Prompt(RenderError),
    #[error(transparent)]
    Model(#[from] FeedbackError),
}

/// Asks the model to change the steps as `instructions` say.
pub fn apply_instructions(
    llm: &mut dyn Llm,
    render: &RenderPrompt,
    steps: &[PlannedStep],
    task: &str,
    instructions: &str,
    max_attempts: u32,
) -> Result<(Vec<PlannedStep>, u64), InstructionsError> {
    let values = HashMap::from([
        ("task", task.to_owned()),
        (
            "actions",
            serde_json::to_string_pretty(&actions_json(steps)).expect("JSON serializes"),
        ),
        ("instructions", instructions.to_owned()),
        ("action_names", ACTION_NAMES.join(", ")),
    ]);
    let prompt = render("modify_actions", &values).map_err(InstructionsError::Prompt)?;
    let request = LlmRequest {
        purpose: "instructions".into(),
        system: "You edit recorded desktop tasks. Keep each kept action's id.".into(),
        messages: vec![Message::user_text(prompt)],
        max_output_tokens: 2000,
    };
    let (modified, replies) =
        complete_json(llm, &request, max_attempts, |answer| apply(steps, answer))?;
    Ok((
        modified,
        replies.iter().filter(|reply| !reply.cached).count() as u64,
    ))
}
