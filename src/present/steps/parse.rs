//! The steps file read back: TOML first, then each entry, then the
//! program's rules, every mistake at its line.

use std::collections::BTreeMap;

use reprise_models::program::{Entry, Facts, Over, Program, Repeat, Table, Tables};
use reprise_strategies::params::{Parameter, ParameterKind};
use serde::Deserialize;

use super::entries::{RawEntry, entry_of};
use super::{RecordedStep, StepsError, at_line, parameter_steps};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    values: BTreeMap<String, String>,
    #[serde(default)]
    step: Vec<toml::Spanned<RawEntry>>,
}

/// The line (from 1) of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A steps file read: its program, the line each entry starts at, and the
/// rows files its repeats name, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub program: Program,
    pub lines: Vec<usize>,
    pub tables: Tables,
}

/// Reads a rows file a repeat names (by its path as written), or says why
/// it cannot be read.
pub type ReadTable<'a> = &'a dyn Fn(&str) -> Result<Table, String>;

/// Reads a steps file over a recording's `steps` and `parameters`: the
/// program, or the first mistake with its line and field.
pub fn parse(
    text: &str,
    steps: &[RecordedStep],
    parameters: &[Parameter],
    read_table: ReadTable<'_>,
) -> Result<Program, StepsError> {
    parse_lines(text, steps, parameters, read_table).map(|parsed| parsed.program)
}

/// [`parse`], keeping each entry's line (for mistakes found later) and the
/// rows read.
pub fn parse_lines(
    text: &str,
    steps: &[RecordedStep],
    parameters: &[Parameter],
    read_table: ReadTable<'_>,
) -> Result<Parsed, StepsError> {
    let raw: RawFile = toml::from_str(text).map_err(|err| StepsError {
        line: err.span().map_or(1, |span| line_of(text, span.start)),
        field: "toml".into(),
        message: err.message().trim().to_owned(),
    })?;
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    for spanned in &raw.step {
        let line = line_of(text, spanned.span().start);
        let entry = entry_of(spanned.get_ref(), steps).map_err(|(field, message)| StepsError {
            line,
            field,
            message,
        })?;
        entries.push(entry);
        lines.push(line);
    }
    if entries.is_empty() {
        return Err(StepsError {
            line: 1,
            field: "step".into(),
            message: "no steps: a recording replays at least one [[step]]".into(),
        });
    }
    let program = Program {
        entries,
        values: raw.values,
    };
    let secrets: Vec<String> = parameters
        .iter()
        .filter(|param| param.kind == ParameterKind::Secret)
        .map(|param| param.name.clone())
        .collect();
    let mut tables = Tables::new();
    for file in program.rows_files() {
        let table = read_table(&file).map_err(|message| {
            let entry = program.entries.iter().position(|entry| {
                matches!(entry, Entry::Repeat(Repeat { over: Over::Rows(named), .. }) if *named == file)
            });
            StepsError {
                line: entry.and_then(|entry| lines.get(entry).copied()).unwrap_or(1),
                field: "repeat.rows".into(),
                message,
            }
        })?;
        tables.insert(file, table);
    }
    program
        .check(&Facts {
            n_steps: steps.len(),
            parameters: &parameter_steps(parameters),
            secrets: &secrets,
            tables: &tables,
        })
        .map_err(|err| at_line(err, &lines, text))?;
    Ok(Parsed {
        program,
        lines,
        tables,
    })
}
