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
        self.pairs
            .iter()
            .fold(text, |text, (secret, shown)| text.replace(secret, shown))
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
}
