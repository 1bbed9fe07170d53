//! The configuration file: where it is, and reading its `[llm]` settings
//! (flags over environment over this file are merged in `llm::settings`).

use anyhow::{Context as _, Result};

/// The `[llm]` settings from the config file (the given one, or the default
/// one if it exists).
pub fn config_file(explicit: Option<&std::path::Path>) -> Result<crate::llm::settings::FileConfig> {
    let default = dirs::config_dir().map(|dir| dir.join("reprise").join("config.toml"));
    let path = match (explicit, default) {
        (Some(path), _) => path.to_owned(),
        (None, Some(path)) if path.exists() => path,
        _ => return Ok(Default::default()),
    };
    let config = crate::llm::settings::read_config_file(&path)
        .with_context(|| format!("read the config file {}", path.display()))?;
    Ok(config.llm)
}
