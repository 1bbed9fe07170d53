//! The values of a replay's secret parameters: from `REPRISE_SECRET_<NAME>`
//! in the environment, from a `--secrets-file` only its owner can read, or
//! typed at a prompt with the echo off; never from the command line (it
//! would show in `ps`). Every secret the recording needs is looked up before
//! anything is injected, and a replay missing any is refused, naming them
//! all. A value lives here and in the injector's keystrokes, nowhere else:
//! this type prints only names.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};

use crate::settings::errors::UsageError;

/// The environment variable that holds the secret `name`.
pub fn env_name(name: &str) -> String {
    format!("REPRISE_SECRET_{}", name.to_uppercase())
}

/// Secret values by parameter name.
#[derive(Default, Clone)]
pub struct SecretValues {
    values: HashMap<String, String>,
}

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.values.keys().collect();
        names.sort();
        f.debug_struct("SecretValues")
            .field("names", &names)
            .finish_non_exhaustive()
    }
}

impl SecretValues {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Adds (or replaces) the value of `name`.
    pub fn insert(&mut self, name: String, value: String) {
        self.values.insert(name, value);
    }

    /// The value of the secret whose environment variable is `variable`.
    pub fn by_variable(&self, variable: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(name, _)| env_name(name) == variable)
            .map(|(_, value)| value.as_str())
    }

    /// The values of `names`, each from the environment, else the file,
    /// else (when `prompt` and a person is at the terminal) asked for.
    pub fn resolve(
        names: &[String],
        file: Option<&Path>,
        environment: &dyn Fn(&str) -> Option<String>,
        prompt: bool,
    ) -> Result<SecretValues> {
        let (mut values, mut missing) = lookup(names, file, environment)?;
        if !missing.is_empty() && prompt && crate::platform::terminal::can_prompt() {
            for name in std::mem::take(&mut missing) {
                let value = crate::platform::terminal::read_hidden(&format!("{{{name}}}: "))
                    .map_err(|err| UsageError(format!("read the secret {{{name}}}: {err}")))?;
                values.insert(name, value);
            }
        }
        refuse_missing(&missing)?;
        Ok(SecretValues { values })
    }

    /// What a dry run checks of `names`: everything [`Self::resolve`] would
    /// (the file's mode and format, every name given), asking nobody: a
    /// name a live run would ask for at the terminal passes.
    pub fn check(
        names: &[String],
        file: Option<&Path>,
        environment: &dyn Fn(&str) -> Option<String>,
        prompt: bool,
    ) -> Result<()> {
        let (_, missing) = lookup(names, file, environment)?;
        if prompt && crate::platform::terminal::can_prompt() {
            return Ok(());
        }
        refuse_missing(&missing)
    }
}

/// The values of `names` found in the environment or the file, and the
/// names found in neither.
fn lookup(
    names: &[String],
    file: Option<&Path>,
    environment: &dyn Fn(&str) -> Option<String>,
) -> Result<(HashMap<String, String>, Vec<String>)> {
    let from_file = match file {
        Some(path) => read_secrets_file(path)?,
        None => HashMap::new(),
    };
    let mut values = HashMap::new();
    let mut missing = Vec::new();
    for name in names {
        let value =
            environment(&env_name(name)).or_else(|| from_file.get(&name.to_lowercase()).cloned());
        match value {
            Some(value) => {
                values.insert(name.clone(), value);
            }
            None => missing.push(name.clone()),
        }
    }
    Ok((values, missing))
}

/// Refuses a replay some of whose secrets have no value, naming them all.
fn refuse_missing(missing: &[String]) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = missing
        .iter()
        .map(|name| format!("{{{name}}} (set {})", env_name(name)))
        .collect();
    bail!(UsageError(format!(
        "the recording types {} no value was given for: {}; give {} in the environment or a --secrets-file (nothing was injected)",
        if missing.len() == 1 {
            "a secret"
        } else {
            "secrets"
        },
        listed.join(", "),
        if missing.len() == 1 { "it" } else { "them" },
    )))
}

/// A secrets file: TOML (`password = "…"`) or the environment's format
/// (`PASSWORD=…`, `REPRISE_SECRET_PASSWORD=…`, `#` comments), names in any
/// case. Refused when others may read it. A file every line of which is
/// `NAME=…` is in the environment's format, read strictly (no space at a
/// value's ends, a quote closed where it opens; quotes are taken off, what
/// they hold is kept as written); any other file is TOML. Neither falls
/// back on the other: a file that is not what it looks like is refused
/// with the line's number, and an error never quotes a line.
pub fn read_secrets_file(path: &Path) -> Result<HashMap<String, String>> {
    let shown = path.display();
    let metadata = std::fs::metadata(path)
        .map_err(|err| UsageError(format!("read the secrets file {shown}: {err}")))?;
    if !metadata.is_file() {
        bail!(UsageError(format!(
            "the secrets file {shown} is not a file"
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = metadata.permissions().mode();
        if mode & 0o077 != 0 {
            bail!(UsageError(format!(
                "the secrets file {shown} may be read by others (mode {:o}): make it yours alone (chmod 600)",
                mode & 0o777
            )));
        }
    }
    if metadata.len() > MAX_SECRETS_FILE {
        bail!(UsageError(format!(
            "the secrets file {shown} is larger than {} kB: not a secrets file",
            MAX_SECRETS_FILE / 1024
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|err| UsageError(format!("read the secrets file {shown}: {err}")))?;
    parse_secrets(&text).map_err(|err| {
        UsageError(format!(
            "the secrets file {shown}: {err} (nothing was injected)"
        ))
        .into()
    })
}

/// A secrets file larger than this is refused unread.
const MAX_SECRETS_FILE: u64 = 1024 * 1024;

/// What is wrong with a secrets file: a line number and a reason, never the
/// line itself.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretsFileError {
    #[error("{name} must be text")]
    NotText { name: String },
    #[error("line {line} is not valid TOML")]
    Toml { line: usize },
    #[error(
        "line {line}: the value has a space at its {end} that would be typed; quote the value or remove the space"
    )]
    Space { line: usize, end: &'static str },
    #[error("line {line}: a quote opens the value and does not close it at the line's end")]
    Unclosed { line: usize },
    #[error("{name} is given twice (names are read in any case)")]
    SameName { name: String },
    #[error("line {line}: {name} is given twice")]
    Twice { line: usize, name: String },
}

/// The values of a secrets file's text, by lowercase name.
pub fn parse_secrets(text: &str) -> std::result::Result<HashMap<String, String>, SecretsFileError> {
    let key = |name: &str| {
        let name = name.trim().to_lowercase();
        name.strip_prefix("reprise_secret_")
            .unwrap_or(&name)
            .to_owned()
    };
    let significant = || {
        text.lines()
            .map(|line| line.trim_end_matches('\r').trim_start())
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
    };
    let is_name = |name: &str| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // The environment's format when every line is NAME=…; else TOML.
    let env_format = significant().all(|line| {
        let line = line.strip_prefix("export ").unwrap_or(line);
        line.split_once('=').is_some_and(|(name, _)| is_name(name))
    });
    if !env_format {
        let table = text.parse::<toml::Table>().map_err(|err| {
            let at = err.span().map_or(0, |span| span.start).min(text.len());
            SecretsFileError::Toml {
                line: text[..at].matches('\n').count() + 1,
            }
        })?;
        let mut values = HashMap::new();
        for (name, value) in table {
            let toml::Value::String(value) = value else {
                return Err(SecretsFileError::NotText { name });
            };
            if values.insert(key(&name), value).is_some() {
                return Err(SecretsFileError::SameName { name });
            }
        }
        return Ok(values);
    }
    let mut values = HashMap::new();
    for (idx, line) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = line.trim_end_matches('\r');
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let assignment = trimmed.strip_prefix("export ").unwrap_or(trimmed);
        // (Every line holds "=": that is what made it this format.)
        let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
        let value = env_value(value, line_no)?;
        if values.insert(key(name), value).is_some() {
            return Err(SecretsFileError::Twice {
                line: line_no,
                name: name.to_owned(),
            });
        }
    }
    Ok(values)
}

/// A `NAME=VALUE` line's value: bare (no space at either end, no quote at
/// its start) or wholly inside one pair of quotes.
fn env_value(value: &str, line: usize) -> std::result::Result<String, SecretsFileError> {
    if value.starts_with(char::is_whitespace) {
        return Err(SecretsFileError::Space { line, end: "start" });
    }
    if value.ends_with(char::is_whitespace) {
        return Err(SecretsFileError::Space { line, end: "end" });
    }
    for quote in ['"', '\''] {
        if let Some(rest) = value.strip_prefix(quote) {
            return match rest.strip_suffix(quote) {
                Some(inner) if !inner.contains(quote) => Ok(inner.to_owned()),
                _ => Err(SecretsFileError::Unclosed { line }),
            };
        }
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        file
    }

    #[test]
    fn secrets_come_from_the_environment_then_the_file_and_all_missing_are_named() {
        let names = vec!["password".to_owned(), "pin".to_owned(), "token".to_owned()];
        let env = |name: &str| (name == "REPRISE_SECRET_PASSWORD").then(|| "from env".to_owned());
        let toml = file("password = \"from file\"\nPIN = \"12 34\"\n", 0o600);
        let err = SecretValues::resolve(&names, Some(toml.path()), &env, false).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("{token} (set REPRISE_SECRET_TOKEN)"),
            "{message}"
        );
        assert!(!message.contains("pin}"), "{message}");
        assert!(err.downcast_ref::<UsageError>().is_some());

        let values = SecretValues::resolve(&names[..2], Some(toml.path()), &env, false).unwrap();
        assert_eq!(values.get("password"), Some("from env"));
        assert_eq!(values.get("pin"), Some("12 34"));
        assert!(
            !format!("{values:?}").contains("12 34"),
            "Debug shows names only"
        );

        let env_file = file(
            "# mine\nexport REPRISE_SECRET_PASSWORD='q w=e'\nPIN=9\n",
            0o600,
        );
        let values = read_secrets_file(env_file.path()).unwrap();
        assert_eq!(values["password"], "q w=e");
        assert_eq!(values["pin"], "9");
    }

    #[test]
    fn a_secrets_file_others_can_read_or_that_is_malformed_is_refused_without_quoting_it() {
        #[cfg(unix)]
        {
            let open = file("password = \"x\"\n", 0o644);
            let message = read_secrets_file(open.path()).unwrap_err().to_string();
            assert!(
                message.contains("may be read by others (mode 644)"),
                "{message}"
            );
        }
        let bad = file("password hunter2\n", 0o600);
        let message = read_secrets_file(bad.path()).unwrap_err().to_string();
        assert!(message.contains("line 1"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn an_almost_toml_file_is_refused_with_its_line_never_read_as_lines() {
        // One bad line anywhere in a TOML file: the TOML line's number, not
        // a value typed with its quotes and the space after "=".
        assert_eq!(
            parse_secrets("password = \"abc\"\nnot a line\n"),
            Err(SecretsFileError::Toml { line: 2 })
        );
        assert_eq!(
            parse_secrets("# mine\npassword = \"abc\n"),
            Err(SecretsFileError::Toml { line: 2 })
        );
        assert_eq!(
            parse_secrets("PASSWORD= \"abc\"\n"),
            Err(SecretsFileError::Space {
                line: 1,
                end: "start"
            })
        );
        // TOML with spaces around "=" is TOML, numbers refused.
        assert_eq!(
            parse_secrets("password = \"a b\"\n").unwrap()["password"],
            "a b"
        );
        assert_eq!(
            parse_secrets("pin = 1234\n"),
            Err(SecretsFileError::NotText { name: "pin".into() })
        );
        // Strict lines: a space that would be typed, a quote left open.
        assert_eq!(
            parse_secrets("PIN=1\nPASSWORD=abc \n"),
            Err(SecretsFileError::Space {
                line: 2,
                end: "end"
            })
        );
        assert_eq!(
            parse_secrets("PASSWORD=\"abc\n"),
            Err(SecretsFileError::Unclosed { line: 1 })
        );
        assert_eq!(
            parse_secrets("PIN=1\nREPRISE_SECRET_PIN=2\n"),
            Err(SecretsFileError::Twice {
                line: 2,
                name: "REPRISE_SECRET_PIN".into()
            })
        );
        assert!(matches!(
            parse_secrets("pin = \"1\"\nPIN = \"2\"\n"),
            Err(SecretsFileError::SameName { .. })
        ));
        // What is meant stays readable: bare and quoted values, spaces inside.
        let values = parse_secrets("A=x y\nB='q \"w\"'\nC=\n").unwrap();
        assert_eq!(values["a"], "x y");
        assert_eq!(values["b"], "q \"w\"");
        assert_eq!(values["c"], "");
        for err in [
            parse_secrets("password = \"hunter2\nx\n").unwrap_err(),
            parse_secrets("PASSWORD=\"hunter2\n").unwrap_err(),
        ] {
            assert!(!err.to_string().contains("hunter2"), "{err}");
        }
    }
}
