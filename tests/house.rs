//! The house rules of the source tree (ARCHITECTURE.md), read as text:
//! `src/` holds only its layers' folders and the crate roots; each layer
//! imports only the layers below it; no source file outside tests passes
//! 600 lines and no function 80, except today's, listed with their size,
//! which may only shrink.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `src/`'s layers, top first: each may import only those after it.
const LAYERS: [&str; 10] = [
    "cli", "fleet", "record", "replay", "present", "vision", "llm", "store", "settings", "platform",
];

/// Test scaffolding, outside the layers (any layer's tests may use it).
const SCAFFOLDING: &str = "testing";

const MAX_FILE_LINES: usize = 600;
const MAX_FUNCTION_LINES: usize = 80;

/// Files over the limit today, with their size: they may only shrink.
const LONG_FILES: [(&str, usize); 0] = [];

/// Functions over the limit today (file, name), with their length: they
/// may only shrink.
const LONG_FUNCTIONS: [(&str, &str, usize); 0] = [];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file below `dir`, as (path from the root, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let name = path.strip_prefix(root()).unwrap().display().to_string();
                found.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

/// A file's code without its inline test module (which may use anything).
fn without_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    }
}

fn is_test_file(name: &str) -> bool {
    name.ends_with("/tests.rs") || name.contains("/tests/")
}

/// The top-level modules a file names as `crate::NAME`, directly or in a
/// `crate::{…}` group.
fn crate_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                names.push(name);
            }
        } else {
            names.push(
                rest.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    names
}

/// Each function's name and length in lines (from its `fn` line to its
/// closing brace, braces counted outside strings and character literals).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut idx = 0;
    while idx < lines.len() {
        let Some(name) = function_name(lines[idx]) else {
            idx += 1;
            continue;
        };
        let (mut depth, mut opened, mut end) = (0i64, false, idx);
        for (offset, line) in lines[idx..].iter().enumerate() {
            end = idx + offset;
            for delta in braces(line) {
                depth += delta;
                opened = true;
            }
            if (opened && depth == 0) || (!opened && line.trim_end().ends_with(';')) {
                break;
            }
        }
        found.push((name, end - idx + 1));
        idx = end + 1;
    }
    found
}

fn function_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            "fn" => {
                let name: String = words
                    .next()?
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                return (!name.is_empty()).then_some(name);
            }
            "pub" | "async" | "const" | "unsafe" => {}
            word if word.starts_with("pub(") => {}
            _ => return None,
        }
    }
    None
}

/// +1 for each `{` and -1 for each `}` outside string and char literals
/// and line comments.
fn braces(line: &str) -> Vec<i64> {
    let mut deltas = Vec::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, '"') => in_string = true,
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => in_string = false,
            (false, '\'') => {
                // A char literal ('{', '\n', '\u{202E}'); a lifetime has no
                // closing quote.
                let mut ahead = chars.clone();
                match (ahead.next(), ahead.next()) {
                    (Some('\\'), _) => {
                        for c in chars.by_ref() {
                            if c == '\'' {
                                break;
                            }
                        }
                    }
                    (Some(_), Some('\'')) => {
                        chars.nth(1);
                    }
                    _ => {}
                }
            }
            (false, '{') => deltas.push(1),
            (false, '}') => deltas.push(-1),
            _ => {}
        }
    }
    deltas
}

#[test]
fn src_holds_only_its_layers_and_the_crate_roots() {
    let mut loose = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let known = if path.is_dir() {
            LAYERS.contains(&name.as_str()) || name == SCAFFOLDING
        } else {
            name == "main.rs" || name == "lib.rs"
        };
        if !known {
            loose.push(name);
        }
    }
    assert!(loose.is_empty(), "not a layer of src/: {loose:?}");
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let mut wrong = BTreeMap::new();
    for (name, text) in sources(&root().join("src")) {
        if is_test_file(&name) {
            continue;
        }
        let layer = name
            .trim_start_matches("src/")
            .split(['/', '.'])
            .next()
            .unwrap();
        let Some(rank) = LAYERS.iter().position(|known| *known == layer) else {
            continue;
        };
        for used in crate_modules(without_tests(&text)) {
            let allowed = used == layer
                || used == SCAFFOLDING
                || LAYERS[rank + 1..].contains(&used.as_str())
                || !LAYERS.contains(&used.as_str());
            if !allowed {
                wrong
                    .entry(format!("{layer} -> {used}"))
                    .or_insert(name.clone());
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers: {wrong:#?}");
}

#[test]
fn no_file_or_function_grows_past_its_limit() {
    let mut over = Vec::new();
    for dir in ["src", "models/src", "strategies/src", "fixture/src"] {
        for (name, text) in sources(&root().join(dir)) {
            if is_test_file(&name) {
                continue;
            }
            let n_lines = text.lines().count();
            let file_limit = LONG_FILES
                .iter()
                .find(|(file, _)| *file == name)
                .map_or(MAX_FILE_LINES, |(_, lines)| *lines);
            if n_lines > file_limit {
                over.push(format!("{name}: {n_lines} lines (at most {file_limit})"));
            }
            for (function, length) in functions(without_tests(&text)) {
                let limit = LONG_FUNCTIONS
                    .iter()
                    .find(|(file, known, _)| *file == name && *known == function)
                    .map_or(MAX_FUNCTION_LINES, |(_, _, lines)| *lines);
                if length > limit {
                    over.push(format!(
                        "{name}: fn {function} is {length} lines (at most {limit})"
                    ));
                }
            }
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    // The readers above, on code whose answers are known.
    let code = "use crate::{store, present::plural};\nfn a() {\n    let c = '{';\n    let u = '\\u{202E}';\n    let s = \"}}\";\n}\npub(crate) async fn b(x: u8) -> u8 {\n    x\n}\n";
    assert_eq!(crate_modules(code), ["store", "present"]);
    assert_eq!(functions(code), [("a".to_owned(), 5), ("b".to_owned(), 3)]);
}
