//! The errors of what a person gave: a command-line value or a setting that
//! is refused, and how any error reads on one line.

/// A command-line value that clap could not check by itself.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A configuration that is refused: the config file (unreadable, not TOML,
/// a credential in it, an unknown field) or a setting's value. Exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// An error and its causes on one line, `a: b: c`, leaving out a cause
/// whose words the message before it already ends with: most errors here
/// show their source in their own message, and `{:#}` would print it twice.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_that_its_error_already_shows_is_written_once() {
        let bundle = reprise_models::recording::BundleError::NotRaw { idx: 1 };
        let err = anyhow::Error::new(crate::store::archive::ArchiveError::Bundle(bundle))
            .context("import demo.reprise");
        assert_eq!(
            one_line(&err),
            "import demo.reprise: the export's recording is inconsistent: event 1 is not a raw event (it has children)"
        );
        let io = std::io::Error::other("disk full");
        let err = anyhow::Error::new(io).context("write the report");
        assert_eq!(one_line(&err), "write the report: disk full");
    }
}
