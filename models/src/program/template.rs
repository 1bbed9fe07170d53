//! Texts of a program: numbers and patterns as people write them, and
//! variables named in braces.

use std::collections::BTreeMap;

/// A number as a person writes it: `1,234.50`, `42`, `-3.5 €` (the first
/// number in the text, thousands' commas dropped).
pub fn parse_number(text: &str) -> Option<f64> {
    let start = text.find(|c: char| c.is_ascii_digit() || c == '-' || c == '.')?;
    let number: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '.' | ','))
        .filter(|c| *c != ',')
        .collect();
    number.parse().ok()
}

/// Whether `text` matches `pattern`, where `*` is any text and `?` one
/// character.
pub fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // The classic two-pointer match with the last star to fall back to.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// A piece of a text that may name variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Variable(String),
}

/// Why a text's variables cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("a '{{' is not closed (write '{{{{' for a brace itself)")]
    Unclosed,
    #[error("a '}}' closes nothing (write '}}}}' for a brace itself)")]
    Unopened,
    #[error("{{{0}}} cannot name a variable: use letters, digits and _, starting with a letter")]
    BadName(String),
}

/// `text` as a template that names no variable: its braces doubled.
pub fn literal(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// `"Total: {total}"` as its pieces; `{{` and `}}` are braces themselves.
pub fn pieces(text: &str) -> Result<Vec<Piece>, TemplateError> {
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '}' => return Err(TemplateError::Unopened),
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err(TemplateError::Unclosed),
                    }
                }
                if !crate::parameter::is_valid_name(&name) {
                    return Err(TemplateError::BadName(name));
                }
                if !literal.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut literal)));
                }
                out.push(Piece::Variable(name));
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        out.push(Piece::Text(literal));
    }
    Ok(out)
}

/// Why a text's variables could not be put in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FillError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("{{{0}}} has no value in this run: the step that reads it did not run")]
    Unset(String),
}

/// `text` with its variables' values put in; the first variable with no
/// value is the error.
pub fn fill(text: &str, values: &BTreeMap<String, String>) -> Result<String, FillError> {
    let mut out = String::new();
    for piece in pieces(text)? {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Variable(name) => {
                out.push_str(values.get(&name).ok_or(FillError::Unset(name))?);
            }
        }
    }
    Ok(out)
}

/// The variables a text names.
pub fn variables_in(text: &str) -> Vec<String> {
    pieces(text)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name),
            Piece::Text(_) => None,
        })
        .collect()
}
