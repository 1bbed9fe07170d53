//! The arguments of the commands on a recording's versions.

use clap::Args;

#[derive(Debug, Args)]
pub struct VersionsArgs {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    /// Print the versions and their changes as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The version before (`NAME@1`).
    pub from: String,
    /// The version after (`NAME@2`; `NAME`: its newest).
    pub to: String,
    /// Print the changed steps as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StepsArgs {
    /// A recording (`NAME`: its newest version; `NAME@2`: version 2).
    pub recording: String,
    /// Print the program as JSON instead of the steps file.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// A recording (`NAME`: edit its newest version; `NAME@2`: start from
    /// version 2).
    pub recording: String,
    /// Apply this steps file (as `reprise steps` prints it) instead of
    /// opening $VISUAL or $EDITOR.
    #[arg(long, value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
    /// Ask a model to change the steps as TEXT says (in plain language);
    /// the change is checked as a hand edit is, shown, and kept when
    /// accepted (at the terminal, or --yes).
    #[arg(long, value_name = "TEXT")]
    pub instruct: Option<String>,
    /// Keep the change --instruct shows without asking (for scripts).
    #[arg(long, requires = "instruct")]
    pub yes: bool,
    /// Why, kept with the new version (default: "edited", or the
    /// instruction).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}
