//! A secret variable's value kept out of every text the program gives the
//! loop: a step's label, a check's words, an error. Where a value read as a
//! secret (`secret = true`) would show, its name in braces shows instead;
//! typing it goes through [`Action::TypeHidden`](crate::Action), which
//! never serializes its value.

use crate::{Decision, Evidence, Step, StrategyError, Verification};

/// The secrets' values read so far, by name, to put out of sight.
pub(super) struct Hider {
    /// `(text to hide, what shows instead)`, the longest text first (a
    /// value holding another is hidden whole).
    pairs: Vec<(String, String)>,
}

impl Hider {
    /// A hider of `values` (name, value read).
    pub(super) fn new<'a>(values: impl Iterator<Item = (&'a String, &'a String)>) -> Hider {
        let mut pairs = Vec::new();
        for (name, value) in values {
            if value.is_empty() {
                continue;
            }
            let shown = format!("{{{name}}}");
            // As a check quotes it (`"a\"b"`), then as it is.
            let quoted = format!("{value:?}");
            pairs.push((quoted, shown.clone()));
            pairs.push((value.clone(), shown));
        }
        pairs.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
        Hider { pairs }
    }

    pub(super) fn text(&self, text: String) -> String {
        self.pairs.iter().fold(text, |text, (secret, shown)| {
            // Quoted (as a check quotes it), a short value is the value.
            if secret.chars().count() >= SHORT || secret.starts_with('"') {
                text.replace(secret, shown)
            } else {
                hide_short(&text, secret, shown)
            }
        })
    }

    pub(super) fn error(&self, err: StrategyError) -> StrategyError {
        match err {
            StrategyError::Retryable(message) => StrategyError::Retryable(self.text(message)),
            StrategyError::Fatal(message) => StrategyError::Fatal(self.text(message)),
            StrategyError::Model(message) => StrategyError::Model(self.text(message)),
            StrategyError::NotYet { reason, wait } => StrategyError::NotYet {
                reason: self.text(reason),
                wait,
            },
        }
    }

    fn step(&self, step: Step) -> Step {
        Step {
            label: self.text(step.label),
            reason: self.text(step.reason),
            ..step
        }
    }

    pub(super) fn decision(&self, decision: Decision) -> Decision {
        match decision {
            Decision::Step(step) => Decision::Step(self.step(step)),
            Decision::Prepare(step) => Decision::Prepare(self.step(step)),
            Decision::Done => Decision::Done,
        }
    }

    pub(super) fn evidence(&self, evidence: Evidence) -> Evidence {
        Evidence {
            words: self.text(evidence.words),
            ..evidence
        }
    }

    pub(super) fn verification(&self, verdict: Verification) -> Verification {
        match verdict {
            Verification::Verified(evidence) => Verification::Verified(self.evidence(evidence)),
            Verification::Unverified(why) => Verification::Unverified(self.text(why)),
        }
    }
}

/// A secret this short (in characters) is hidden wherever it could be the
/// value, not in every word it is a part of: a one-letter value hidden
/// everywhere would leave no message readable.
const SHORT: usize = 4;

/// `text` with `secret` (shorter than [`SHORT`]) shown as `shown`: inside
/// every quoted span (where a check quotes what a field holds: a value that
/// holds the secret hides it there), and outside them where it stands as a
/// word of its own.
fn hide_short(text: &str, secret: &str, shown: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut quoted = false;
    while !rest.is_empty() {
        // The next quote that opens or closes a span (an escaped one is in it).
        let mut end = rest.len();
        let mut escaped = false;
        for (idx, c) in rest.char_indices() {
            if c == '"' && !(quoted && escaped) {
                end = idx;
                break;
            }
            escaped = c == '\\' && !escaped;
        }
        let part = &rest[..end];
        if quoted {
            out.push_str(&part.replace(secret, shown));
        } else {
            out.push_str(&hide_words(part, secret, shown));
        }
        if end < rest.len() {
            out.push('"');
            quoted = !quoted;
            rest = &rest[end + 1..];
        } else {
            rest = "";
        }
    }
    out
}

/// `text` with each occurrence of `secret` that stands as a word (no letter
/// or digit either side) shown as `shown`.
fn hide_words(text: &str, secret: &str, shown: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = text[at..].find(secret) {
        let start = at + found;
        let end = start + secret.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        out.push_str(&text[at..start]);
        if word(before) || word(after) {
            out.push_str(secret);
        } else {
            out.push_str(shown);
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secrets_value_shows_as_its_name_quoted_or_not_the_longest_first() {
        let values = [
            ("pin".to_owned(), "4711".to_owned()),
            ("code".to_owned(), "a\"4711".to_owned()),
            ("none".to_owned(), String::new()),
        ];
        let hider = Hider::new(values.iter().map(|(name, value)| (name, value)));
        assert_eq!(
            hider.text(r#"holds "4711", then "a\"4711" and a"4711 bare"#.into()),
            "holds {pin}, then {code} and {code} bare"
        );
        let err = hider.error(StrategyError::Fatal("expected 4711".into()));
        assert_eq!(err.to_string(), "expected {pin}");
    }

    #[test]
    fn a_short_secret_is_hidden_where_it_could_be_the_value_and_messages_stay_readable() {
        let values = [("pin".to_owned(), "a".to_owned())];
        let hider = Hider::new(values.iter().map(|(name, value)| (name, value)));
        assert_eq!(
            hider.text(r#"the target changed; field "Code" holds "xay", not "a""#.into()),
            r#"the target changed; field "Code" holds "x{pin}y", not {pin}"#
        );
        assert_eq!(hider.text("typed a into it".into()), "typed {pin} into it");
        let digits = [("pin".to_owned(), "42".to_owned())];
        let hider = Hider::new(digits.iter().map(|(name, value)| (name, value)));
        assert_eq!(
            hider.text(r#"step 42 of 420: holds "1-42 \"b\" 420" and 42"#.into()),
            r#"step {pin} of 420: holds "1-{pin} \"b\" {pin}0" and {pin}"#
        );
    }
}
