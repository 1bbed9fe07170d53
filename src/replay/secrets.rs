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
        let from_file = match file {
            Some(path) => read_secrets_file(path)?,
            None => HashMap::new(),
        };
        let mut values = HashMap::new();
        let mut missing = Vec::new();
        for name in names {
            let value = environment(&env_name(name))
                .or_else(|| from_file.get(&name.to_lowercase()).cloned());
            match value {
                Some(value) => {
                    values.insert(name.clone(), value);
                }
                None => missing.push(name.clone()),
            }
        }
        if !missing.is_empty() && prompt && crate::platform::terminal::can_prompt() {
            for name in std::mem::take(&mut missing) {
                let value = crate::platform::terminal::read_hidden(&format!("{{{name}}}: "))
                    .map_err(|err| UsageError(format!("read the secret {{{name}}}: {err}")))?;
                values.insert(name, value);
            }
        }
        if !missing.is_empty() {
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
            )));
        }
        Ok(SecretValues { values })
    }
}

/// A secrets file: TOML (`password = "…"`) or the environment's format
/// (`PASSWORD=…`, `REPRISE_SECRET_PASSWORD=…`, `#` comments), names in any
/// case. Refused when others may read it; an error never quotes a line.
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
    let text = std::fs::read_to_string(path)
        .map_err(|err| UsageError(format!("read the secrets file {shown}: {err}")))?;
    let mut values = HashMap::new();
    let mut insert = |name: &str, value: String| {
        let name = name.trim().to_lowercase();
        let name = name
            .strip_prefix("reprise_secret_")
            .unwrap_or(&name)
            .to_owned();
        values.insert(name, value);
    };
    if let Ok(table) = text.parse::<toml::Table>() {
        for (name, value) in table {
            match value {
                toml::Value::String(value) => insert(&name, value),
                _ => bail!(UsageError(format!(
                    "the secrets file {shown}: {name} must be text"
                ))),
            }
        }
        return Ok(values);
    }
    for (idx, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            bail!(UsageError(format!(
                "the secrets file {shown}: line {} is neither NAME=VALUE nor TOML",
                idx + 1
            )));
        };
        let value = value.trim_end_matches('\r');
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|quote| {
                value
                    .strip_prefix(*quote)
                    .and_then(|rest| rest.strip_suffix(*quote))
            })
            .unwrap_or(value);
        insert(name, unquoted.to_owned());
    }
    Ok(values)
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
}
