//! The vanilla strategy (OpenAdapt's `VanillaReplayStrategy`): at every step a
//! model sees the recorded actions, what was replayed so far, the
//! instructions, the active window and the screen, and answers with the next
//! action as JSON; an empty object ends the replay. Invalid answers are fed
//! back, with a bound; the replay loop's step limit bounds the whole.

use std::collections::HashMap;

use reprise_models::ActionEvent;
use serde_json::Value;

use crate::llm::{Llm, LlmRequest, Message, Part, Role, Unusable, complete_json};
use crate::{Action, Decision, FoundBy, KeySpec, Observation, ReplayStrategy, Step, StrategyError};

/// Why a prompt could not be rendered (the application's engine's error).
pub type RenderError = Box<dyn std::error::Error + Send + Sync>;

/// Renders a prompt template with values (the application passes its engine).
pub type RenderPrompt = Box<dyn Fn(&str, &HashMap<&str, String>) -> Result<String, RenderError>>;

pub struct VanillaStrategy {
    llm: Box<dyn Llm>,
    render: RenderPrompt,
    task: String,
    recorded: Vec<String>,
    instructions: String,
    replayed: Vec<String>,
    max_feedback_attempts: u32,
}

reprise_models::debug_showing!(VanillaStrategy, recorded: |it| it.recorded.len());

impl VanillaStrategy {
    pub fn new(
        llm: Box<dyn Llm>,
        render: RenderPrompt,
        task: &str,
        trees: &[ActionEvent],
        instructions: Option<&str>,
    ) -> Self {
        VanillaStrategy {
            llm,
            render,
            task: task.to_owned(),
            recorded: trees.iter().map(ActionEvent::label).collect(),
            instructions: instructions.unwrap_or("none").to_owned(),
            replayed: Vec::new(),
            max_feedback_attempts: 3,
        }
    }
}

/// A model's action: its name, where it aims, and its input actions.
pub type ModelAction = (String, Option<(f64, f64)>, Vec<Action>);

/// The actions for a model's answer (`None` for done), or why it is not a
/// valid action.
pub fn parse_action(value: &Value) -> Result<Option<ModelAction>, Unusable> {
    let object = value
        .as_object()
        .ok_or("the answer must be one JSON object")?;
    if object.is_empty() {
        return Ok(None);
    }
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .ok_or("the action has no \"name\"")?;
    let point = || point_of(object, name);
    let (target, actions) = match name {
        "singleclick" | "click" => {
            let at = point()?;
            (Some(at), clicks(1, at))
        }
        "doubleclick" => {
            let at = point()?;
            (Some(at), clicks(2, at))
        }
        "move" => {
            let (x, y) = point()?;
            (Some((x, y)), vec![Action::MoveTo { x, y }])
        }
        "type" => {
            let text = object
                .get("text")
                .and_then(Value::as_str)
                .ok_or("type needs \"text\"")?;
            if text.is_empty() {
                return Err("type needs a non-empty \"text\"".into());
            }
            let actions = text
                .chars()
                .flat_map(|char| {
                    let key = KeySpec::Char(char.to_string());
                    [Action::KeyDown { key: key.clone() }, Action::KeyUp { key }]
                })
                .collect();
            (None, actions)
        }
        "key" => {
            let key = object
                .get("key")
                .and_then(Value::as_str)
                .ok_or("key needs \"key\"")?;
            let key = KeySpec::Named(key.to_owned());
            (
                None,
                vec![Action::KeyDown { key: key.clone() }, Action::KeyUp { key }],
            )
        }
        other => {
            return Err(Unusable(format!(
                "unknown action name {other:?}: use singleclick, doubleclick, move, type or key"
            )));
        }
    };
    Ok(Some((name.to_owned(), target, actions)))
}

/// The point action `name` of the answer `object` aims at: its `mouse_x`
/// and `mouse_y`, on the screen.
fn point_of(object: &serde_json::Map<String, Value>, name: &str) -> Result<(f64, f64), Unusable> {
    let x = object
        .get("mouse_x")
        .and_then(Value::as_f64)
        .ok_or(format!("{name} needs mouse_x"))?;
    let y = object
        .get("mouse_y")
        .and_then(Value::as_f64)
        .ok_or(format!("{name} needs mouse_y"))?;
    if !(x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0) {
        return Err(Unusable(format!("{name} has coordinates off the screen")));
    }
    Ok((x, y))
}

/// `n` left clicks at `(x, y)`, a short pause between them.
fn clicks(n: usize, (x, y): (f64, f64)) -> Vec<Action> {
    let left = reprise_models::MouseButton::Left;
    let mut actions = vec![Action::MoveTo { x, y }];
    for idx in 0..n {
        if idx > 0 {
            actions.push(Action::Pause { seconds: 0.08 });
        }
        actions.push(Action::ButtonDown { button: left });
        actions.push(Action::ButtonUp { button: left });
    }
    actions
}

impl ReplayStrategy for VanillaStrategy {
    fn name(&self) -> &'static str {
        "vanilla"
    }

    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        let values = HashMap::from([
            ("task", self.task.clone()),
            (
                "recorded_actions",
                serde_json::to_string(&self.recorded).expect("strings serialize"),
            ),
            (
                "replayed_actions",
                serde_json::to_string(&self.replayed).expect("strings serialize"),
            ),
            ("instructions", self.instructions.clone()),
            (
                "window",
                observation
                    .window
                    .map_or("none".to_owned(), |window| window.title.clone()),
            ),
        ]);
        let prompt = (self.render)("next_action", &values)
            .map_err(|err| StrategyError::Fatal(format!("render the prompt: {err}")))?;
        let mut png = Vec::new();
        observation
            .frame
            .image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|err| StrategyError::Fatal(format!("encode the screen: {err}")))?;
        let request = LlmRequest {
            purpose: "next_action".into(),
            system: "You operate a desktop by choosing one input action at a time.".into(),
            messages: vec![Message {
                role: Role::User,
                parts: vec![Part::Text(prompt), Part::Png(png)],
            }],
            max_output_tokens: 300,
        };
        let result = complete_json(
            self.llm.as_mut(),
            &request,
            self.max_feedback_attempts,
            parse_action,
        );
        let (parsed, replies) = match result {
            Ok(done) => done,
            // No answer, or answers unusable even when fed back: the
            // model failed, not the step.
            Err(err) => return Err(StrategyError::Model(err.to_string())),
        };
        let Some((name, target, actions)) = parsed else {
            return Ok(Decision::Done);
        };
        let label = match target {
            Some((x, y)) => format!("{name} at ({x:.0}, {y:.0})"),
            None => name.clone(),
        };
        self.replayed.push(label.clone());
        Ok(Decision::Step(Step {
            label,
            target,
            reason: format!(
                "the model chose it ({} call{})",
                replies.len(),
                if replies.len() == 1 { "" } else { "s" }
            ),
            actions,
            found_by: Some(FoundBy::Model),
            ..Default::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_validated() {
        assert!(
            parse_action(&json!({})).unwrap().is_none(),
            "an empty object stops"
        );
        let (name, target, actions) =
            parse_action(&json!({"name": "doubleclick", "mouse_x": 10, "mouse_y": 20}))
                .unwrap()
                .unwrap();
        assert_eq!((name.as_str(), target), ("doubleclick", Some((10.0, 20.0))));
        assert_eq!(actions.len(), 6);
        assert!(
            parse_action(&json!({"name": "teleport"}))
                .unwrap_err()
                .0
                .contains("unknown action name")
        );
        assert!(
            parse_action(&json!({"name": "singleclick"}))
                .unwrap_err()
                .0
                .contains("mouse_x")
        );
        assert!(
            parse_action(&json!({"name": "type", "text": ""}))
                .unwrap_err()
                .0
                .contains("non-empty")
        );
        assert!(
            parse_action(&json!([1]))
                .unwrap_err()
                .0
                .contains("one JSON object")
        );
    }
}
