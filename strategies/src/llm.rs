//! The LLM port: what strategies ask of a multimodal model, and the helpers
//! that make its answers usable (JSON extraction, bounded feedback retries).
//! The HTTP providers live in the application (`src/llm/`).

use serde::{Deserialize, Serialize};

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One part of a message: text, or a PNG image.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Text(String),
    /// PNG bytes, sent inline (base64) in each provider's format.
    Png(#[serde(with = "base64_bytes")] Vec<u8>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            parts: vec![Part::Text(text.into())],
        }
    }
}

/// A request to a model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LlmRequest {
    /// What the call is for (`describe`, `instructions`, `ping`…), for accounting.
    pub purpose: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub max_output_tokens: u32,
}

impl LlmRequest {
    /// How many images the request carries.
    pub fn n_images(&self) -> usize {
        self.messages
            .iter()
            .flat_map(|message| &message.parts)
            .filter(|part| matches!(part, Part::Png(_)))
            .count()
    }
}

/// Tokens a call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmReply {
    pub text: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    /// Answered from the response cache, without a call.
    pub cached: bool,
    pub latency_ms: u64,
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error(
        "no model provider is configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or point REPRISE_OPENAI_BASE_URL at a local OpenAI-compatible server"
    )]
    NotConfigured,
    #[error("{provider} refused the request ({status}): {message}")]
    Refused {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("{provider} failed after {attempts} attempts: {last}")]
    GaveUp {
        provider: String,
        attempts: u32,
        last: String,
    },
    #[error("{provider} answered with something unreadable: {reason}")]
    Malformed { provider: String, reason: String },
    #[error("every provider failed: {}", .0.join("; "))]
    AllFailed(Vec<String>),
}

/// A multimodal model (a provider, or a chain of them with a cache).
pub trait Llm {
    fn complete(&mut self, request: &LlmRequest) -> Result<LlmReply, LlmError>;
    /// The most images one request may carry; callers batch by it.
    fn max_images_per_request(&self) -> usize;
}

/// One model port used from two places in turn (the describer, then the
/// instructions), so that one chain of providers, with one cache and one
/// accounting, serves both.
#[derive(Clone)]
pub struct SharedLlm(std::rc::Rc<std::cell::RefCell<Box<dyn Llm>>>);

impl SharedLlm {
    pub fn new(llm: Box<dyn Llm>) -> SharedLlm {
        SharedLlm(std::rc::Rc::new(std::cell::RefCell::new(llm)))
    }
}

reprise_models::debug_showing!(SharedLlm);

impl Llm for SharedLlm {
    fn complete(&mut self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        self.0.borrow_mut().complete(request)
    }

    fn max_images_per_request(&self) -> usize {
        self.0.borrow().max_images_per_request()
    }
}

/// Why an answer held no usable JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonAnswerError {
    #[error("the answer is empty")]
    Empty,
    #[error("the answer is not valid JSON: {0}")]
    Invalid(String),
}

/// The JSON in an answer: the first fenced code block (```json … ```) if
/// there is one, else the bare text, else the outermost `{…}` or `[…]`.
pub fn extract_json(text: &str) -> Result<serde_json::Value, JsonAnswerError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(JsonAnswerError::Empty);
    }
    if let Some(start) = trimmed.find("```") {
        let after_fence = &trimmed[start + 3..];
        let body_start = after_fence.find('\n').map_or(0, |newline| newline + 1);
        let body = &after_fence[body_start..];
        let body = body.find("```").map_or(body, |end| &body[..end]);
        return serde_json::from_str(body.trim())
            .map_err(|err| JsonAnswerError::Invalid(err.to_string()));
    }
    match serde_json::from_str(trimmed) {
        Ok(value) => Ok(value),
        Err(err) => {
            let open = trimmed.find(['{', '[']);
            let close = trimmed.rfind(['}', ']']);
            if let (Some(open), Some(close)) = (open, close)
                && open < close
                && let Ok(value) = serde_json::from_str(&trimmed[open..=close])
            {
                return Ok(value);
            }
            Err(JsonAnswerError::Invalid(err.to_string()))
        }
    }
}

/// Why a model's answer cannot be used, in the words told back to the model
/// when it is asked again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unusable(pub String);

impl From<&str> for Unusable {
    fn from(reason: &str) -> Unusable {
        Unusable(reason.to_owned())
    }
}

impl From<String> for Unusable {
    fn from(reason: String) -> Unusable {
        Unusable(reason)
    }
}

/// Asks for JSON and checks it with `validate`; an invalid answer is fed back
/// to the model as information in the next attempt (OpenAdapt's
/// `retry_with_exceptions`), at most `max_attempts` times in all.
pub fn complete_json<T>(
    llm: &mut dyn Llm,
    request: &LlmRequest,
    max_attempts: u32,
    mut validate: impl FnMut(&serde_json::Value) -> Result<T, Unusable>,
) -> Result<(T, Vec<LlmReply>), FeedbackError> {
    complete_checked(llm, request, max_attempts, "JSON", |text| {
        extract_json(text)
            .map_err(|err| Unusable(err.to_string()))
            .and_then(|value| validate(&value))
    })
}

/// Asks for an answer `validate` accepts (`kind`: what it is, `JSON`, `TOML`,
/// for the words sent back); an unusable one is fed back with its reason,
/// at most `max_attempts` times in all.
pub fn complete_checked<T>(
    llm: &mut dyn Llm,
    request: &LlmRequest,
    max_attempts: u32,
    kind: &str,
    mut validate: impl FnMut(&str) -> Result<T, Unusable>,
) -> Result<(T, Vec<LlmReply>), FeedbackError> {
    let mut request = request.clone();
    let mut replies = Vec::new();
    let mut errors = Vec::new();
    for _ in 0..max_attempts.max(1) {
        let reply = llm.complete(&request).map_err(FeedbackError::Llm)?;
        let outcome = validate(&reply.text);
        let answer = reply.text.clone();
        replies.push(reply);
        match outcome {
            Ok(value) => return Ok((value, replies)),
            Err(error) => {
                request.messages.push(Message {
                    role: Role::Assistant,
                    parts: vec![Part::Text(answer)],
                });
                request.messages.push(Message::user_text(format!(
                    "That answer could not be used: {error}. Answer again with only the corrected {kind}."
                )));
                errors.push(error.0);
            }
        }
    }
    Err(FeedbackError::Invalid { errors, replies })
}

/// Why [`complete_json`] gave up.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error(transparent)]
    Llm(LlmError),
    #[error("the model's answers stayed unusable after {} attempts: {}", .errors.len(), .errors.join("; "))]
    Invalid {
        errors: Vec<String>,
        replies: Vec<LlmReply>,
    },
}

mod base64_bytes {
    //! PNG bytes as base64 in JSON, so a request serializes compactly for its
    //! cache key and for logs of its shape.
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::ScriptedLlm;

    #[test]
    fn json_is_taken_from_a_fence_or_the_bare_text() {
        assert_eq!(extract_json("```json\n{\"a\": 1}\n```").unwrap()["a"], 1);
        assert_eq!(extract_json("Sure! ```\n[1, 2]\n``` done").unwrap()[1], 2);
        assert_eq!(extract_json("  {\"ok\": true} ").unwrap()["ok"], true);
        assert_eq!(
            extract_json("Here it is: {\"ok\": true}. Anything else?").unwrap()["ok"],
            true
        );
        assert_eq!(extract_json("   "), Err(JsonAnswerError::Empty));
        let err = extract_json("{\"a\": }").unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
    }

    fn request() -> LlmRequest {
        LlmRequest {
            purpose: "test".into(),
            system: "s".into(),
            messages: vec![Message::user_text("q")],
            max_output_tokens: 10,
        }
    }

    #[test]
    fn an_invalid_answer_is_fed_back_and_retried_with_a_bound() {
        let mut llm = ScriptedLlm::new(&["not json", "{\"n\": 2}", "{\"n\": 3}"], 1);
        let validate = |value: &serde_json::Value| match value["n"].as_i64() {
            Some(3) => Ok(3),
            other => Err(Unusable(format!("n must be 3, not {other:?}"))),
        };
        let (value, replies) = complete_json(&mut llm, &request(), 3, validate).unwrap();
        assert_eq!((value, replies.len()), (3, 3));
        let last_request = &llm.requests[2];
        let feedback = format!("{:?}", last_request.messages.last().unwrap());
        assert!(feedback.contains("n must be 3, not Some(2)"), "{feedback}");

        let mut llm = ScriptedLlm::new(&["x", "y"], 1);
        let err = complete_json(&mut llm, &request(), 2, |_| Ok(())).unwrap_err();
        assert!(
            matches!(err, FeedbackError::Invalid { ref errors, .. } if errors.len() == 2),
            "{err}"
        );
    }
}
