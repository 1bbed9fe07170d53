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
