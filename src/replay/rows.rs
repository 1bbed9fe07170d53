//! The rows of `replay --each`: a CSV file whose header names parameters
//! (RFC 4180: quoted fields with `""` for a quote, commas and line ends
//! inside quotes, CRLF or LF), or a JSON array of objects whose values are
//! text or numbers. Every row has a value for every column, or the file is
//! refused, naming the row.

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

pub fn read_rows(path: &Path) -> Result<Rows> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|err| UsageError(format!("read the rows in {shown}: {err}")))?;
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
    if rows.rows.len() > MAX_ROWS {
        bail!(UsageError(format!(
            "the rows in {shown}: more than {MAX_ROWS} rows"
        )));
    }
    let mut seen: Vec<&String> = Vec::new();
    for column in &rows.columns {
        if column.is_empty() {
            bail!(UsageError(format!(
                "the rows in {shown}: a column has no name"
            )));
        }
        if seen.contains(&column) {
            bail!(UsageError(format!(
                "the rows in {shown}: the column {column:?} appears twice"
            )));
        }
        seen.push(column);
    }
    Ok(rows)
}

/// Why a file's text holds no rows.
#[derive(Debug, thiserror::Error)]
enum RowsError {
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
    #[error("a quoted field is not closed")]
    Unclosed,
    #[error("there is no header row")]
    NoHeader,
    #[error("row {row} has {values} values for {columns} columns")]
    Width {
        row: usize,
        values: usize,
        columns: usize,
    },
}

fn json_rows(text: &str) -> Result<Rows, RowsError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let items = value.as_array().ok_or(RowsError::NotObjects)?;
    let mut columns: Vec<String> = Vec::new();
    for item in items {
        let object = item.as_object().ok_or(RowsError::NotObjects)?;
        for key in object.keys() {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    let mut rows = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        let mut row = Vec::new();
        for column in &columns {
            let value = match &item[column] {
                serde_json::Value::String(text) => text.clone(),
                serde_json::Value::Number(number) => number.to_string(),
                serde_json::Value::Null => {
                    return Err(RowsError::NoValue {
                        row: idx + 1,
                        column: column.clone(),
                    });
                }
                _ => {
                    return Err(RowsError::NotText {
                        row: idx + 1,
                        column: column.clone(),
                    });
                }
            };
            row.push(value);
        }
        rows.push(row);
    }
    Ok(Rows { columns, rows })
}

fn csv_rows(text: &str) -> Result<Rows, RowsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut at_field_start = true;
    while let Some(char) = chars.next() {
        if quoted {
            match char {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                other => {
                    if other == '\n' {
                        line += 1;
                    }
                    field.push(other);
                }
            }
            continue;
        }
        match char {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            '"' => return Err(RowsError::StrayQuote(line)),
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_field_start = true;
                line += 1;
            }
            other => {
                field.push(other);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err(RowsError::Unclosed);
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    // Blank lines are no rows.
    records.retain(|record| !(record.len() == 1 && record[0].trim().is_empty()));
    let mut records = records.into_iter();
    let columns: Vec<String> = records
        .next()
        .ok_or(RowsError::NoHeader)?
        .into_iter()
        .map(|column| column.trim().to_owned())
        .collect();
    let mut rows = Vec::new();
    for (idx, record) in records.enumerate() {
        if record.len() != columns.len() {
            return Err(RowsError::Width {
                row: idx + 1,
                values: record.len(),
                columns: columns.len(),
            });
        }
        rows.push(record);
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
            "row 1 has 1 values for 2 columns"
        );
        assert!(matches!(csv_rows("a\n\"x\n"), Err(RowsError::Unclosed)));
        assert!(matches!(
            csv_rows("a\nx\"y\n"),
            Err(RowsError::StrayQuote(2))
        ));
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
