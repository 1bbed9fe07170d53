//! What a process Reprise starts inherits: its environment without
//! Reprise's credentials. The application under test (started by
//! `--launch`), a `--reset-with` command and the input-listener helper need
//! none of them, and a crash reporter or a log of the application's
//! environment would otherwise carry every secret away.

use std::process::Command;

/// The variables that name credentials outright (the model providers' keys
/// and the fleet's tokens); every `REPRISE_SECRET_*` is one too.
const CREDENTIALS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "REPRISE_FLEET_TOKEN",
    "REPRISE_FLEET_USER_TOKEN",
    "REPRISE_FLEET_WORKER_TOKEN",
    "REPRISE_FLEET_VIEWER_TOKEN",
];

/// The prefix of a replay's secret values in the environment.
const SECRET_PREFIX: &str = "REPRISE_SECRET_";

/// Whether the environment variable `name` holds one of Reprise's
/// credentials.
pub fn is_credential(name: &str) -> bool {
    name.starts_with(SECRET_PREFIX) || CREDENTIALS.contains(&name)
}

/// `command` with every credential of this process's environment removed
/// from what it will inherit.
pub fn without_credentials(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_credential) {
            command.env_remove(name);
        }
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_keys_and_tokens_are_credentials_and_nothing_else_is() {
        for name in [
            "REPRISE_SECRET_PASSWORD",
            "OPENAI_API_KEY",
            "REPRISE_FLEET_TOKEN",
        ] {
            assert!(is_credential(name), "{name}");
        }
        for name in ["PATH", "DISPLAY", "REPRISE_STORE", "REPRISE_SECRET", "HOME"] {
            assert!(!is_credential(name), "{name}");
        }
    }
}
