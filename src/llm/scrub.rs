//! The one place secrets are taken out of text: every string that leaves
//! the HTTP layer (an error, a retry warning, a stored call row, an answer)
//! passes through [`Secrets::scrub`] first, so a provider or proxy that
//! echoes a request header cannot put a key on the terminal or in the store.

use reprise_strategies::llm::LlmError;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Shorter strings are not treated as secrets: scrubbing them would mangle
/// ordinary text, and no provider issues keys this short.
const MIN_SECRET_CHARS: usize = 6;

/// The configured secrets (API keys), in the forms they may come back in.
#[derive(Clone, Default)]
pub struct Secrets {
    forms: Vec<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} forms)", self.forms.len())
    }
}

impl Secrets {
    /// Every secret, as itself and as a URL or JSON string would carry it.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Secrets {
        let mut forms: Vec<String> = Vec::new();
        for secret in secrets {
            let secret = secret.trim();
            if secret.chars().count() < MIN_SECRET_CHARS {
                continue;
            }
            for form in [
                secret.to_owned(),
                percent_encoded(secret),
                serde_json::to_string(secret)
                    .map(|quoted| quoted.trim_matches('"').to_owned())
                    .unwrap_or_default(),
            ] {
                if form.chars().count() >= MIN_SECRET_CHARS && !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
        // Longest first, so a secret that holds another is removed whole.
        forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        Secrets { forms }
    }

    /// `text` with every form of every secret replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        text
    }

    /// The error with every string in it scrubbed.
    pub fn scrub_error(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::NotConfigured => LlmError::NotConfigured,
            LlmError::Refused {
                provider,
                status,
                message,
            } => LlmError::Refused {
                provider,
                status,
                message: self.scrub(&message),
            },
            LlmError::GaveUp {
                provider,
                attempts,
                last,
            } => LlmError::GaveUp {
                provider,
                attempts,
                last: self.scrub(&last),
            },
            LlmError::Malformed { provider, reason } => LlmError::Malformed {
                provider,
                reason: self.scrub(&reason),
            },
            LlmError::AllFailed(reasons) => {
                LlmError::AllFailed(reasons.iter().map(|reason| self.scrub(reason)).collect())
            }
        }
    }
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
fn percent_encoded(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_key_is_removed_and_short_strings_are_left() {
        let secrets = Secrets::new(["sk-live/abc+123", "abc"]);
        let echoed = "bad key sk-live/abc+123 (sent as sk-live%2Fabc%2B123), user abc";
        assert_eq!(
            secrets.scrub(echoed),
            "bad key [redacted] (sent as [redacted]), user abc"
        );
        let error = secrets.scrub_error(LlmError::GaveUp {
            provider: "openai".into(),
            attempts: 2,
            last: "HTTP 500: header x-api-key: sk-live/abc+123".into(),
        });
        assert!(!error.to_string().contains("sk-live"), "{error}");
    }
}
