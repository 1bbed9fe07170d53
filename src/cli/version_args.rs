//! The arguments of the commands on a recording's versions and steps, and
//! on halted runs (resume, teach).

use std::path::PathBuf;

use clap::Args;

use crate::replay::{DescriberChoice, StrategyChoice};

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
    /// Send the model, with the steps, the screen before each step cropped
    /// to its window (at most 8, spread over the steps; password fields
    /// masked as recorded): for an instruction about what the screen shows.
    #[arg(long, requires = "instruct")]
    pub frames: bool,
    /// Why, kept with the new version (default: "edited", or the
    /// instruction).
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TeachArgs {
    /// A run that halted on twins (its id, a prefix, or `last`).
    pub run: String,
    /// Which twin, by its number in reading order (as the refusal and the
    /// report list them); asked at the terminal when not given.
    #[arg(long, value_name = "N")]
    pub pick: Option<usize>,
    /// Say which twin by clicking it on the screen (the click is read, not
    /// passed to the application; the right button gives up): the screen
    /// must show the twins where the run saw them.
    #[arg(long, conflicts_with = "pick")]
    pub click: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What `reprise steps` prints, for its help and manual page.
pub const STEPS_EXAMPLE: &str = "\
Example (a click in a field, a typed value and OK, edited to wait for a
dialog, read its total and type it):

  [values]
  copy_here = \"{total}\"    # recorded: \"999\"

  [[step]]
  wait = { role = \"text field\", window = \"Source\", timeout = 20 }

  [[step]]
  read = { role = \"text field\", window = \"Source\", into = \"total\" }

  [[step]]
  recorded = 1
  do = \"singleclick\"
  on = { role = \"text field\", window = \"Target\" }

  [[step]]
  recorded = 2
  do = \"type\"
  types = \"999\"

  [[step]]
  if = { window = \"Confirm\", timeout = 3 }

    [[step]]
    recorded = 3
    do = \"singleclick\"
    on = { role = \"button\", name = \"Yes\", window = \"Confirm\" }

  [[step]]
  end = true
";

#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// A run's id, a unique prefix of it, or `last`.
    pub run: String,
    /// Go on from this earlier step (counted from 1) instead of the halted
    /// one: the steps from it are done again.
    #[arg(long, value_name = "STEP")]
    pub from: Option<usize>,
    /// visual or naive (default: the strategy the run used).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyChoice>,
    /// Secret values (NAME=VALUE lines, or TOML), after the environment's
    /// REPRISE_SECRET_NAME: secrets are never stored with a run, so they
    /// are read again.
    #[arg(long, value_name = "FILE")]
    pub secrets_file: Option<PathBuf>,
    /// How the visual strategy describes elements (the run does not keep it).
    #[arg(long, value_enum, default_value_t = DescriberChoice::Offline)]
    pub describer: DescriberChoice,
    /// Release modifiers and buttons held down before resuming, instead of
    /// refusing to start.
    #[arg(long)]
    pub release_held_keys: bool,
    /// As `replay --teach`: a halt on twins is asked about at the terminal,
    /// taught and gone on from.
    #[arg(long)]
    pub teach: bool,
    /// Print each step as a JSON object on stdout as it ends, then the
    /// outcome as one.
    #[arg(long)]
    pub json: bool,
}
