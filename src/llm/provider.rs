//! The three wire formats: OpenAI-compatible chat completions (which also
//! serves DeepSeek, ollama, vLLM, llama.cpp and LM Studio), Anthropic Messages,
//! and Google Gemini `generateContent`. Each builds its request and reads its
//! answer; the HTTP, retries and fallback are elsewhere.

use base64::Engine as _;
use reprise_strategies::llm::{LlmRequest, Part, Role, Usage};
use serde_json::{Value, json};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::OpenAi => "openai",
            Kind::Anthropic => "anthropic",
            Kind::Gemini => "gemini",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "openai" => Some(Kind::OpenAi),
            "anthropic" => Some(Kind::Anthropic),
            "gemini" | "google" => Some(Kind::Gemini),
            _ => None,
        }
    }

    /// The most images one request may carry (each provider's documented limit,
    /// kept conservative).
    pub fn default_max_images(self) -> usize {
        match self {
            Kind::OpenAi => 10,
            Kind::Anthropic => 20,
            Kind::Gemini => 16,
        }
    }
}

/// A configured provider. Its key is never printed: `Debug` redacts it.
/// Why a provider's answer body (valid JSON) holds no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerShapeError {
    #[error("no {0}")]
    Missing(&'static str),
    #[error("the answer is empty")]
    Empty,
}

#[derive(Clone)]
pub struct Provider {
    pub kind: Kind,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub max_images: usize,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

fn base64_png(png: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(png)
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

impl Provider {
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.kind {
            Kind::OpenAi => format!("{base}/chat/completions"),
            Kind::Anthropic => format!("{base}/v1/messages"),
            Kind::Gemini => format!("{base}/v1beta/models/{}:generateContent", self.model),
        }
    }

    /// The authentication and version headers (the key goes only here).
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        match (self.kind, &self.api_key) {
            (Kind::OpenAi, Some(key)) => headers.push(("authorization", format!("Bearer {key}"))),
            (Kind::Anthropic, Some(key)) => headers.push(("x-api-key", key.clone())),
            (Kind::Gemini, Some(key)) => headers.push(("x-goog-api-key", key.clone())),
            (_, None) => {}
        }
        if self.kind == Kind::Anthropic {
            headers.push(("anthropic-version", "2023-06-01".into()));
        }
        headers
    }

    /// The request body in this provider's format.
    pub fn body(&self, request: &LlmRequest) -> Value {
        match self.kind {
            Kind::OpenAi => {
                let mut messages = vec![json!({"role": "system", "content": request.system})];
                for message in &request.messages {
                    let content = wire_parts(
                        &message.parts,
                        |text| json!({"type": "text", "text": text}),
                        |data| json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}}),
                    );
                    messages.push(json!({"role": role_name(message.role), "content": content}));
                }
                json!({"model": self.model, "messages": messages, "max_tokens": request.max_output_tokens})
            }
            Kind::Anthropic => {
                let messages: Vec<Value> = request
                    .messages
                    .iter()
                    .map(|message| {
                        let content = wire_parts(
                            &message.parts,
                            |text| json!({"type": "text", "text": text}),
                            |data| json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}),
                        );
                        json!({"role": role_name(message.role), "content": content})
                    })
                    .collect();
                json!({
                    "model": self.model,
                    "max_tokens": request.max_output_tokens,
                    "system": request.system,
                    "messages": messages,
                })
            }
            Kind::Gemini => {
                let contents: Vec<Value> = request
                    .messages
                    .iter()
                    .map(|message| {
                        let parts = wire_parts(
                            &message.parts,
                            |text| json!({"text": text}),
                            |data| json!({"inline_data": {"mime_type": "image/png", "data": data}}),
                        );
                        let role = if message.role == Role::Assistant {
                            "model"
                        } else {
                            "user"
                        };
                        json!({"role": role, "parts": parts})
                    })
                    .collect();
                json!({
                    "systemInstruction": {"parts": [{"text": request.system}]},
                    "contents": contents,
                    "generationConfig": {"maxOutputTokens": request.max_output_tokens},
                })
            }
        }
    }

    /// The answer's text and token usage, or why the body is unusable.
    pub fn parse(&self, body: &Value) -> Result<(String, Usage), AnswerShapeError> {
        let number = |value: &Value| value.as_u64().unwrap_or(0);
        let (text, usage) = match self.kind {
            Kind::OpenAi => {
                let text = body["choices"][0]["message"]["content"]
                    .as_str()
                    .ok_or(AnswerShapeError::Missing("choices[0].message.content"))?;
                let usage = Usage {
                    input_tokens: number(&body["usage"]["prompt_tokens"]),
                    output_tokens: number(&body["usage"]["completion_tokens"]),
                };
                (text.to_owned(), usage)
            }
            Kind::Anthropic => {
                let blocks = body["content"]
                    .as_array()
                    .ok_or(AnswerShapeError::Missing("content blocks"))?;
                let text: String = blocks
                    .iter()
                    .filter(|block| block["type"] == "text")
                    .filter_map(|block| block["text"].as_str())
                    .collect();
                let usage = Usage {
                    input_tokens: number(&body["usage"]["input_tokens"]),
                    output_tokens: number(&body["usage"]["output_tokens"]),
                };
                (text, usage)
            }
            Kind::Gemini => {
                let parts = body["candidates"][0]["content"]["parts"]
                    .as_array()
                    .ok_or(AnswerShapeError::Missing("candidates[0].content.parts"))?;
                let text: String = parts
                    .iter()
                    .filter_map(|part| part["text"].as_str())
                    .collect();
                let usage = Usage {
                    input_tokens: number(&body["usageMetadata"]["promptTokenCount"]),
                    output_tokens: number(&body["usageMetadata"]["candidatesTokenCount"]),
                };
                (text, usage)
            }
        };
        if text.trim().is_empty() {
            return Err(AnswerShapeError::Empty);
        }
        Ok((text, usage))
    }

    /// The provider's own error message in an error body, if it gives one.
    pub fn error_message(body: &str) -> String {
        let parsed: Option<Value> = serde_json::from_str(body).ok();
        let message = parsed.as_ref().and_then(|value| {
            value["error"]["message"]
                .as_str()
                .or_else(|| value["error"].as_str())
                .or_else(|| value["message"].as_str())
        });
        match message {
            Some(message) => message.to_owned(),
            None => body.chars().take(300).collect(),
        }
    }
}

/// A message's parts in one wire format: `text` makes a text part, `image`
/// an image part from the PNG's base64.
fn wire_parts(parts: &[Part], text: fn(&str) -> Value, image: fn(String) -> Value) -> Vec<Value> {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(content) => text(content),
            Part::Png(png) => image(base64_png(png)),
        })
        .collect()
}
