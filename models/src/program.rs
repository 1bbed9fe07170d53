//! A recording as a program a person reads and edits (`reprise steps`,
//! `reprise edit`): its recorded steps in the order replay takes them (a
//! step may be left out), the values typed for its parameters, and
//! instructions between the steps: wait until something shows, assert a
//! value, read a value into a variable that later typed text uses, run a
//! block if something shows (else another), repeat a block for each row of
//! a file or while something holds, at most so many times.
//!
//! Pure data and its rules; the text format is the command line's, the
//! running is the strategies'.

use std::collections::BTreeMap;

use accesskit::Role;
use serde::{Deserialize, Serialize};

/// The longest a wait may last, in seconds (a wait is always bounded).
pub const MAX_WAIT_SECONDS: f64 = 600.0;

/// The most rounds a repeat may be given (a loop is always bounded).
pub const MAX_REPEAT: u32 = 10_000;

/// The most tries a retry block may be given.
pub const MAX_TRIES: u32 = 100;

/// The steps a version of a recording replays, in order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Program {
    pub entries: Vec<Entry>,
    /// Values typed in place of the recording's parameters (as `--set`,
    /// kept with the version); a value may name variables (`{total}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, String>,
}

/// One entry of a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Entry {
    /// A recorded step, by its number (the planned step, from 1).
    Recorded {
        step: usize,
    },
    Wait(Wait),
    Assert(Assertion),
    Read(Read),
    /// The entries up to its `Else` (else its `End`) run when its
    /// condition holds within its timeout (0: as things are); else those
    /// after its `Else`.
    If(Wait),
    Else,
    /// The entries up to its `End`, once for each row of a file (its
    /// columns as variables), or while a condition holds; at most `max`
    /// rounds.
    Repeat(Repeat),
    /// The entries up to its `End`, tried again from the start of the
    /// block when a step in it fails, at most `times` tries in all.
    Retry {
        times: u32,
    },
    /// Ends the `If`, `Repeat` or `Retry` block it closes.
    End,
}

/// A bounded loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    #[serde(flatten)]
    pub over: Over,
    pub max: u32,
}

/// What a repeat goes over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Over {
    /// Each row of a CSV or JSON file (a path as written: relative to
    /// where replay runs), its columns as variables.
    Rows(String),
    /// While the condition holds, looked at as things are at each round.
    While(Until),
}

/// A rows file as read: its columns and each row's values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The rows files a program names, as read, by their path as written.
pub type Tables = BTreeMap<String, Table>;

/// An element named by what a person sees of it: its role, its name and
/// its window (each optional, at least one of role and name).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Query {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The window's name; by default the window of the recorded step next
    /// to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The accessible application's name; by default the recording's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Which of the elements the rest names (from 1, in reading order: top
    /// to bottom, then left to right), where it names several alike (two
    /// unnamed text fields); by default the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u32>,
}

impl Query {
    /// `text field "Total" in "Invoice"`.
    pub fn label(&self) -> String {
        let mut label = self
            .role
            .map_or("element", crate::element::role_name)
            .to_owned();
        if let Some(name) = &self.name {
            label.push_str(&format!(" {name:?}"));
        }
        if let Some(nth) = self.nth {
            label.push_str(&format!(" ({})", crate::element::nth_words(nth)));
        }
        if let Some(window) = &self.window {
            label.push_str(&format!(" in {window:?}"));
        }
        label
    }
}

/// What a wait waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "until")]
pub enum Until {
    /// The element shows.
    Shows { element: Query },
    /// The element no longer shows.
    Gone { element: Query },
    /// The element shows and its value passes the comparison.
    Holds { element: Query, compare: Compare },
    /// A window of this title is the active one.
    Window { title: String },
    /// A text naming variables passes the comparison (an `if` or a
    /// repeat's condition on a value read).
    Value { text: String, compare: Compare },
}

/// A bounded wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wait {
    #[serde(flatten)]
    pub until: Until,
    pub timeout_seconds: f64,
}

/// A check of an element's value; a failure halts the run with both values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assertion {
    pub element: Query,
    pub compare: Compare,
}

/// An element's value (a field's text, else its name) read into a variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Read {
    pub element: Query,
    pub into: String,
    /// A secret (a password read off one window, typed into another):
    /// typed and compared like any value, never shown by Reprise (not in a
    /// check, an error, a report, `--json` or a stored step).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

/// How a value is compared; the expected texts may name variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    Equals(String),
    Contains(String),
    /// A pattern where `*` stands for any text and `?` for one character.
    Matches(String),
    /// A number within `within` of `value`.
    Near {
        value: f64,
        within: f64,
    },
}

impl Compare {
    /// Whether `actual` passes, the expected texts' variables put in.
    pub fn passes(&self, actual: &str, expected: &str) -> bool {
        let actual = actual.trim();
        match self {
            Compare::Equals(_) => actual == expected.trim(),
            Compare::Contains(_) => actual.contains(expected),
            Compare::Matches(_) => glob(expected, actual),
            Compare::Near { value, within } => {
                parse_number(actual).is_some_and(|number| (number - value).abs() <= *within)
            }
        }
    }

    /// The expected text as written (variables not put in).
    pub fn expected(&self) -> String {
        match self {
            Compare::Equals(text) | Compare::Contains(text) | Compare::Matches(text) => {
                text.clone()
            }
            Compare::Near { value, within } => format!("{value} ± {within}"),
        }
    }

    /// `equals "42"`, `is within 0.01 of 42.5`.
    pub fn words(&self, expected: &str) -> String {
        match self {
            Compare::Equals(_) => format!("equals {expected:?}"),
            Compare::Contains(_) => format!("contains {expected:?}"),
            Compare::Matches(_) => format!("matches {expected:?}"),
            Compare::Near { value, within } => format!("is within {within} of {value}"),
        }
    }
}

impl Program {
    /// The recording as made: its `n_steps` steps in order, nothing else.
    pub fn recorded(n_steps: usize) -> Program {
        Program {
            entries: (1..=n_steps).map(|step| Entry::Recorded { step }).collect(),
            values: BTreeMap::new(),
        }
    }

    /// Whether it is the recording as made.
    pub fn is_recorded(&self, n_steps: usize) -> bool {
        *self == Program::recorded(n_steps)
    }

    /// The variables the program reads (and a repeat's rows' columns),
    /// each once, in order.
    pub fn variables(&self, tables: &Tables) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in &self.entries {
            let new: Vec<String> = match entry {
                Entry::Read(read) => vec![read.into.clone()],
                Entry::Repeat(Repeat {
                    over: Over::Rows(file),
                    ..
                }) => tables
                    .get(file)
                    .map(|table| table.columns.clone())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            for name in new {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The variables read as secrets, each once, in order.
    pub fn secret_variables(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for entry in &self.entries {
            if let Entry::Read(read) = entry
                && read.secret
                && !names.contains(&read.into)
            {
                names.push(read.into.clone());
            }
        }
        names
    }

    /// The rows files its repeats name, each once.
    pub fn rows_files(&self) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for entry in &self.entries {
            if let Entry::Repeat(Repeat {
                over: Over::Rows(file),
                ..
            }) = entry
                && !files.contains(file)
            {
                files.push(file.clone());
            }
        }
        files
    }
}

mod check;
mod template;
pub use check::{Block, Facts, ProgramError, block_ends};
pub use template::{
    FillError, Piece, TemplateError, fill, glob, literal, parse_number, pieces, variables_in,
};

#[cfg(test)]
mod tests;
