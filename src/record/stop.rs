//! The stop sequence: keys the user types anywhere on the desktop to stop the
//! recorder (default: ctrl three times in a row). Its key events are held back
//! while the sequence may be under way, and left out of the recording when it
//! completes.

use reprise_models::{ActionEvent, EventName};

/// Presses of the sequence must follow each other within this many seconds.
const MAX_GAP_SECONDS: f64 = 1.0;

/// What to do with the events fed so far.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Record these events (possibly none while some are held back).
    Record(Vec<ActionEvent>),
    /// The sequence is complete: record these events, then stop.
    Stop(Vec<ActionEvent>),
}

#[derive(Debug)]
pub struct StopSequence {
    keys: Vec<String>,
    progress: usize,
    last_press: f64,
    /// Events held back since the sequence's first press, with whether each
    /// belongs to the sequence.
    held: Vec<(ActionEvent, bool)>,
}

impl StopSequence {
    /// A detector for the named keys in order; an empty list never stops.
    pub fn new(keys: Vec<String>) -> Self {
        StopSequence {
            keys,
            progress: 0,
            last_press: 0.0,
            held: Vec::new(),
        }
    }

    /// Feeds one event in time order.
    pub fn feed(&mut self, event: ActionEvent) -> Verdict {
        let mut out = self.expire(event.timestamp);
        if self.keys.is_empty() {
            out.push(event);
            return Verdict::Record(out);
        }
        let key = event
            .named_key()
            .or(event.key_char.as_deref())
            .map(str::to_owned);
        let is_press = event.name == EventName::Press;
        let is_button_press = event.name == EventName::Click && event.mouse_pressed == Some(true);
        if is_press && key.as_deref() == Some(self.keys[self.progress].as_str()) {
            self.progress += 1;
            self.last_press = event.timestamp;
            self.held.push((event, true));
            if self.progress == self.keys.len() {
                let kept = self
                    .held
                    .drain(..)
                    .filter(|(_, in_sequence)| !in_sequence)
                    .map(|(event, _)| event);
                out.extend(kept);
                self.progress = 0;
                return Verdict::Stop(out);
            }
            return Verdict::Record(out);
        }
        if self.progress == 0 {
            out.push(event);
            return Verdict::Record(out);
        }
        if is_press || is_button_press {
            // Anything else pressed breaks the sequence; a press of its first
            // key starts it again.
            out.extend(self.release_held());
            return match self.feed(event) {
                Verdict::Record(more) => {
                    out.extend(more);
                    Verdict::Record(out)
                }
                Verdict::Stop(more) => {
                    out.extend(more);
                    Verdict::Stop(out)
                }
            };
        }
        let in_sequence =
            event.name == EventName::Release && key.is_some_and(|key| self.keys.contains(&key));
        self.held.push((event, in_sequence));
        Verdict::Record(out)
    }

    /// Releases held events if the sequence has stalled for too long by `now`.
    pub fn expire(&mut self, now: f64) -> Vec<ActionEvent> {
        if self.progress > 0 && now - self.last_press > MAX_GAP_SECONDS {
            return self.release_held();
        }
        Vec::new()
    }

    /// Gives back everything held (at the end of a recording stopped otherwise).
    pub fn release_held(&mut self) -> Vec<ActionEvent> {
        self.progress = 0;
        self.held.drain(..).map(|(event, _)| event).collect()
    }

    /// The timestamp of the oldest held event, if any.
    pub fn oldest_held(&self) -> Option<f64> {
        self.held.first().map(|(event, _)| event.timestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key events: `+ctrl` pressed, `-ctrl` released, at their times.
    fn keys(at: &[(f64, &str)]) -> Vec<ActionEvent> {
        at.iter()
            .map(|&(t, key)| match key.split_at(1) {
                ("+", key) => ActionEvent::key(EventName::Press, t, key),
                (_, key) => ActionEvent::key(EventName::Release, t, key),
            })
            .collect()
    }

    fn ctrl_ctrl_ctrl() -> StopSequence {
        StopSequence::new(vec!["ctrl".into(); 3])
    }

    fn feed_all(sequence: &mut StopSequence, events: Vec<ActionEvent>) -> (Vec<f64>, bool) {
        let mut recorded = Vec::new();
        let mut stopped = false;
        for event in events {
            match sequence.feed(event) {
                Verdict::Record(events) => recorded.extend(events.iter().map(|e| e.timestamp)),
                Verdict::Stop(events) => {
                    recorded.extend(events.iter().map(|e| e.timestamp));
                    stopped = true;
                }
            }
        }
        (recorded, stopped)
    }

    #[test]
    fn three_ctrl_presses_stop_and_are_left_out() {
        let mut sequence = ctrl_ctrl_ctrl();
        let mut mv = ActionEvent::new(EventName::Move, 0.25);
        mv.mouse_x = Some(1.0);
        let (recorded, stopped) = feed_all(
            &mut sequence,
            [
                keys(&[(0.0, "+a"), (0.05, "-a"), (0.1, "+ctrl"), (0.2, "-ctrl")]),
                vec![mv],
                keys(&[(0.3, "+ctrl"), (0.4, "-ctrl"), (0.5, "+ctrl")]),
            ]
            .concat(),
        );
        assert!(stopped);
        assert_eq!(
            recorded,
            vec![0.0, 0.05, 0.25],
            "only the sequence's own keys are left out"
        );
    }

    #[test]
    fn a_ctrl_chord_is_not_a_stop_and_loses_nothing() {
        let mut sequence = ctrl_ctrl_ctrl();
        let (recorded, stopped) = feed_all(
            &mut sequence,
            keys(&[
                (0.0, "+ctrl"),
                (0.1, "+a"),
                (0.2, "-a"),
                (0.3, "-ctrl"),
                (0.4, "+b"),
            ]),
        );
        assert!(!stopped);
        assert_eq!(recorded, vec![0.0, 0.1, 0.2, 0.3, 0.4]);
    }

    #[test]
    fn slow_presses_are_released_and_not_a_stop() {
        let mut sequence = ctrl_ctrl_ctrl();
        let (recorded, stopped) = feed_all(
            &mut sequence,
            keys(&[
                (0.0, "+ctrl"),
                (0.1, "-ctrl"),
                (2.0, "+ctrl"),
                (2.1, "-ctrl"),
            ]),
        );
        assert!(!stopped);
        assert_eq!(recorded, vec![0.0, 0.1]);
        assert_eq!(sequence.release_held().len(), 2);
    }

    #[test]
    fn an_empty_sequence_never_holds() {
        let mut sequence = StopSequence::new(vec![]);
        assert_eq!(
            sequence.feed(keys(&[(0.0, "+ctrl")]).remove(0)),
            Verdict::Record(keys(&[(0.0, "+ctrl")]))
        );
    }
}
