//! The rows of `replay --each`: a CSV file whose header names parameters
//! (RFC 4180: quoted fields with `""` for a quote, commas and line ends
//! inside quotes; CRLF, LF or CR line ends), or a JSON array of objects
//! whose values are text or numbers. Every row has a value for every
//! column, or the file is refused, naming the line (CSV) or the row (JSON);
//! only an empty line is no row (a line holding `""` or spaces is one). The
//! file, a value and the number of rows are bounded, so that no file can
//! hold a batch in memory for long.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Result, bail};

use crate::settings::errors::UsageError;

/// The rows of a file: the columns (in order) and each row's values, one
/// per column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The most rows a file may hold.
const MAX_ROWS: usize = 100_000;
/// The largest rows file read.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// The longest value a row (or `--set`) may give a parameter, in bytes:
/// each character is typed, so a longer text is no form's field.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// The rows file a program's repeat names (its path as written, from
/// where Reprise runs), as the program's table; why not, in words.
pub fn table_at(file: &str) -> std::result::Result<reprise_models::program::Table, String> {
    read_rows(Path::new(file))
        .map(|rows| reprise_models::program::Table {
            columns: rows.columns,
            rows: rows.rows,
        })
        .map_err(|err| err.to_string())
}

/// Every rows file `program`'s repeats name, as read.
pub fn tables_of(
    program: &reprise_models::program::Program,
) -> Result<reprise_models::program::Tables> {
    let mut tables = reprise_models::program::Tables::new();
    for file in program.rows_files() {
        let table =
            table_at(&file).map_err(|reason| UsageError(format!("the steps' repeat: {reason}")))?;
        tables.insert(file, table);
    }
    Ok(tables)
}

pub fn read_rows(path: &Path) -> Result<Rows> {
    let shown = path.display();
    let text = read_bounded(path)
        .map_err(|reason| UsageError(format!("the rows in {shown}: {reason}")))?;
    let is_json = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let rows = if is_json {
        json_rows(&text)
    } else {
        csv_rows(&text)
    }
    .map_err(|reason| UsageError(format!("the rows in {shown}: {reason}")))?;
    if rows.rows.is_empty() {
        bail!(UsageError(format!("the rows in {shown}: there are none")));
    }
    let mut seen: HashSet<&String> = HashSet::new();
    for column in &rows.columns {
        if column.is_empty() {
            bail!(UsageError(format!(
                "the rows in {shown}: a column has no name"
            )));
        }
        if !seen.insert(column) {
            bail!(UsageError(format!(
                "the rows in {shown}: the column {column:?} appears twice"
            )));
        }
    }
    Ok(rows)
}

/// The file's text, at most [`MAX_FILE_BYTES`] of it (a larger file, or a
/// device that never ends, is refused once that much is read).
fn read_bounded(path: &Path) -> Result<String, RowsError> {
    let file = std::fs::File::open(path).map_err(RowsError::Read)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(RowsError::Read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(RowsError::TooLarge(MAX_FILE_BYTES / (1024 * 1024)));
    }
    String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        let line = err.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
        RowsError::NotUtf8(line)
    })
}

/// Why a file's text holds no rows.
#[derive(Debug, thiserror::Error)]
enum RowsError {
    #[error("{0}")]
    Read(std::io::Error),
    #[error("the file is larger than {0} MB")]
    TooLarge(u64),
    #[error("line {0} is not UTF-8 text")]
    NotUtf8(usize),
    #[error("not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the JSON must be an array of objects")]
    NotObjects,
    #[error("row {row} has no value for {column:?}")]
    NoValue { row: usize, column: String },
    #[error("row {row}: {column:?} must be text or a number")]
    NotText { row: usize, column: String },
    #[error("line {0}: a quote inside an unquoted field")]
    StrayQuote(usize),
    #[error("line {0}: a quoted field is followed by more than a comma or a line end")]
    AfterQuote(usize),
    #[error("line {0}: a quoted field is not closed")]
    Unclosed(usize),
    #[error("line {line}: a value is longer than {} kB", MAX_VALUE_BYTES / 1024)]
    TooLong { line: usize },
    #[error("row {row}: a value is longer than {} kB", MAX_VALUE_BYTES / 1024)]
    TooLongRow { row: usize },
    #[error("more than {MAX_ROWS} rows")]
    TooMany,
    #[error("there is no header row")]
    NoHeader,
    #[error("line {line} (row {row}) has {values} values for {columns} columns")]
    Width {
        line: usize,
        row: usize,
        values: usize,
        columns: usize,
    },
}

fn json_rows(text: &str) -> Result<Rows, RowsError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let items = value.as_array().ok_or(RowsError::NotObjects)?;
    if items.len() > MAX_ROWS {
        return Err(RowsError::TooMany);
    }
    let mut columns: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for item in items {
        let object = item.as_object().ok_or(RowsError::NotObjects)?;
        for key in object.keys() {
            if seen.insert(key) {
                columns.push(key.clone());
            }
        }
    }
    let mut rows = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let row = idx + 1;
        let mut values = Vec::new();
        for column in &columns {
            let value = match &item[column] {
                serde_json::Value::String(text) => text.clone(),
                serde_json::Value::Number(number) => number.to_string(),
                serde_json::Value::Null => {
                    let column = column.clone();
                    return Err(RowsError::NoValue { row, column });
                }
                _ => {
                    let column = column.clone();
                    return Err(RowsError::NotText { row, column });
                }
            };
            if value.len() > MAX_VALUE_BYTES {
                return Err(RowsError::TooLongRow { row });
            }
            values.push(value);
        }
        rows.push(values);
    }
    Ok(Rows { columns, rows })
}

/// Where the CSV reader is within a field.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    /// Nothing read of it yet.
    Start,
    /// Unquoted text.
    Bare,
    /// Inside quotes.
    Quoted,
    /// Its closing quote read: a comma or a line end must come.
    Closed,
}

/// A CSV text's records, each with the line it starts on. A line end is
/// LF, CRLF or CR; an empty line is no record.
fn csv_records(text: &str) -> Result<Vec<(usize, Vec<String>)>, RowsError> {
    let mut records = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut state = Field::Start;
    let (mut line, mut record_line) = (1, 1);
    let mut chars = text.chars().peekable();
    while let Some(char) = chars.next() {
        let line_end = char == '\n' || char == '\r';
        let crlf = char == '\r' && chars.peek() == Some(&'\n');
        if crlf {
            chars.next();
        }
        match (state, char) {
            (Field::Quoted, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (Field::Quoted, '"') => state = Field::Closed,
            (Field::Quoted, _) => {
                // A line end inside quotes is kept as written.
                field.push(char);
                if crlf {
                    field.push('\n');
                }
                if line_end {
                    line += 1;
                }
            }
            (Field::Start, '"') => state = Field::Quoted,
            (Field::Bare, '"') => return Err(RowsError::StrayQuote(line)),
            (_, ',') => {
                record.push(std::mem::take(&mut field));
                state = Field::Start;
            }
            (_, _) if line_end => {
                if !(record.is_empty() && field.is_empty() && state == Field::Start) {
                    record.push(std::mem::take(&mut field));
                    records.push((record_line, std::mem::take(&mut record)));
                }
                line += 1;
                record_line = line;
                state = Field::Start;
            }
            (Field::Closed, _) => return Err(RowsError::AfterQuote(line)),
            (_, _) => {
                field.push(char);
                state = Field::Bare;
            }
        }
        if field.len() > MAX_VALUE_BYTES {
            return Err(RowsError::TooLong { line: record_line });
        }
        // (The header is a record too.)
        if records.len() > MAX_ROWS + 1 {
            return Err(RowsError::TooMany);
        }
    }
    if state == Field::Quoted {
        return Err(RowsError::Unclosed(record_line));
    }
    if !(record.is_empty() && field.is_empty() && state == Field::Start) {
        record.push(field);
        records.push((record_line, record));
    }
    Ok(records)
}

fn csv_rows(text: &str) -> Result<Rows, RowsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = csv_records(text)?.into_iter();
    let columns: Vec<String> = records
        .next()
        .ok_or(RowsError::NoHeader)?
        .1
        .into_iter()
        .map(|column| column.trim().to_owned())
        .collect();
    let mut rows = Vec::new();
    for (idx, (line, record)) in records.enumerate() {
        if record.len() != columns.len() {
            return Err(RowsError::Width {
                line,
                row: idx + 1,
                values: record.len(),
                columns: columns.len(),
            });
        }
        rows.push(record);
    }
    if rows.len() > MAX_ROWS {
        return Err(RowsError::TooMany);
    }
    Ok(Rows { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_keep_quotes_commas_and_line_ends_inside_quotes() {
        let rows = csv_rows("user_name,note\r\nalice,\"a, \"\"b\"\"\nc\"\n\nbob,\n").unwrap();
        assert_eq!(rows.columns, ["user_name", "note"]);
        assert_eq!(
            rows.rows,
            [
                vec!["alice".to_owned(), "a, \"b\"\nc".to_owned()],
                vec!["bob".to_owned(), String::new()]
            ]
        );
        assert_eq!(
            csv_rows("a,b\n1\n").unwrap_err().to_string(),
            "line 2 (row 1) has 1 values for 2 columns"
        );
        assert!(matches!(csv_rows("a\n\"x\n"), Err(RowsError::Unclosed(2))));
        assert!(matches!(
            csv_rows("a\nx\"y\n"),
            Err(RowsError::StrayQuote(2))
        ));
    }

    #[test]
    fn no_row_is_dropped_or_changed_silently() {
        // A value of "" or of spaces is a row; only an empty line is none.
        let rows = csv_rows("name\n\"\"\n   \n\nann\n").unwrap();
        assert_eq!(
            rows.rows,
            [
                vec![String::new()],
                vec!["   ".to_owned()],
                vec!["ann".to_owned()]
            ]
        );
        // RFC 4180: nothing but a comma or a line end after a closing quote.
        assert!(matches!(
            csv_rows("name\nok\n\"abc\"def\n"),
            Err(RowsError::AfterQuote(3))
        ));
        // CR line ends, as old Mac files have them.
        let rows = csv_rows("a,b\r1,2\r3,4\r").unwrap();
        assert_eq!(rows.rows, [vec!["1", "2"], vec!["3", "4"]]);
        // A value over the bound is refused with its line.
        let long = format!("a\nx\n{}\n", "y".repeat(MAX_VALUE_BYTES + 1));
        assert!(matches!(
            csv_rows(&long),
            Err(RowsError::TooLong { line: 3 })
        ));
    }

    /// A text as RFC 4180 writes it: every field quoted when it needs to
    /// be, records ended by `end`.
    fn written(records: &[Vec<String>], end: &str) -> String {
        let mut text = String::new();
        for record in records {
            let fields: Vec<String> = record
                .iter()
                .map(|field| {
                    if field.is_empty() || field.contains(['"', ',', '\n', '\r']) {
                        format!("\"{}\"", field.replace('"', "\"\""))
                    } else {
                        field.clone()
                    }
                })
                .collect();
            text.push_str(&fields.join(","));
            text.push_str(end);
        }
        text
    }

    #[test]
    fn property_every_written_row_reads_back_as_written() {
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        let alphabet = ['a', 'Z', ' ', ',', '"', '\n', '\r', 'é', '字', '\t', '0'];
        for _ in 0..2_000 {
            let width = rng.usize(1..5);
            let records: Vec<Vec<String>> = (0..rng.usize(1..6))
                .map(|_| {
                    (0..width)
                        .map(|_| {
                            (0..rng.usize(0..8))
                                .map(|_| alphabet[rng.usize(..alphabet.len())])
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let end = ["\n", "\r\n", "\r"][rng.usize(..3)];
            let mut header = vec!["c0".to_owned()];
            header.extend((1..width).map(|n| format!("c{n}")));
            let mut all = vec![header];
            all.extend(records.iter().cloned());
            let text = written(&all, end);
            let rows = csv_rows(&text).unwrap_or_else(|err| panic!("{text:?}: {err}"));
            assert_eq!(rows.rows, records, "{text:?}");
        }
    }

    #[test]
    fn property_random_bytes_are_rows_or_a_reason_never_a_panic() {
        let mut rng = fastrand::Rng::with_seed(7);
        let pieces = [
            "\"", ",", "\n", "\r", "a", " ", "[", "]", "{", "}", ":", "1", "\"a\"",
        ];
        for _ in 0..5_000 {
            let text: String = (0..rng.usize(0..64))
                .map(|_| pieces[rng.usize(..pieces.len())])
                .collect();
            if let Ok(rows) = csv_rows(&text) {
                // What was read is whole: every row as wide as the header.
                assert!(rows.rows.iter().all(|row| row.len() == rows.columns.len()));
            }
            let _ = json_rows(&text);
            let bytes: Vec<u8> = (0..rng.usize(0..64)).map(|_| rng.u8(..)).collect();
            let lossy = String::from_utf8_lossy(&bytes);
            let _ = csv_rows(&lossy);
            let _ = json_rows(&lossy);
        }
    }

    #[test]
    fn a_file_that_never_ends_is_refused_once_the_bound_is_read() {
        let err = read_bounded(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(err, RowsError::TooLarge(32)), "{err}");
    }

    #[test]
    fn json_rows_are_objects_of_text_or_numbers() {
        let rows =
            json_rows(r#"[{"user_name": "alice", "pin": 1234}, {"pin": 5, "user_name": "bob"}]"#)
                .unwrap();
        // (Columns of JSON objects come in name order.)
        assert_eq!(rows.columns, ["pin", "user_name"]);
        assert_eq!(rows.rows[1], ["5", "bob"]);
        assert_eq!(
            json_rows(r#"[{"a": "x"}, {"b": "y"}]"#)
                .unwrap_err()
                .to_string(),
            "row 1 has no value for \"b\""
        );
        assert!(json_rows(r#"{"a": 1}"#).is_err());
        assert!(
            json_rows(r#"[{"a": [1]}]"#)
                .unwrap_err()
                .to_string()
                .contains("text or a number")
        );
    }
}
