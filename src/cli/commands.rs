//! What each command does, one file a group of commands: [`run`] opens what
//! the command needs and hands it to its group's function.

mod bench;
mod fleet;
mod help;
mod instruct;
mod llm;
mod output;
mod record;
mod recordings;
mod replay;
mod resume;
mod runs;
mod steps;
mod teach;
mod versions;
mod vision;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::cli::{Cli, Command, ConfigCommand, EventsCommand};
use crate::store::Store;

/// Where the store is: opened for a command that writes it, or only to read
/// (a store that cannot be written serves the commands that only read it).
#[derive(Debug)]
struct StoreAt(PathBuf);

impl StoreAt {
    fn open(&self) -> Result<Store> {
        Store::open(&self.0).context("open the store")
    }

    fn open_to_read(&self) -> Result<Store> {
        Store::open_to_read(&self.0).context("open the store")
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> Result<()> {
    let store = StoreAt(cli.global.store.clone().unwrap_or_else(Store::default_path));
    let config = cli.global.config.as_deref();
    let quiet = cli.global.quiet;
    match cli.command {
        Command::Record(args) => record::record(&mut store.open()?, &args, quiet),
        Command::Events(EventsCommand::Reduce(args)) => record::events_reduce(&args),
        Command::List(args) => recordings::list(&store.open_to_read()?, &args),
        Command::Show(args) => recordings::show(&store.open_to_read()?, &args),
        Command::Params(args) => recordings::params(&store, &args),
        Command::Versions(args) => versions::versions(&store.open_to_read()?, &args),
        Command::Diff(args) => versions::diff(&store.open_to_read()?, &args),
        Command::Steps(args) => steps::steps(&store.open_to_read()?, &args),
        Command::Edit(args) => steps::edit(&mut store.open()?, config, &args),
        Command::Teach(args) => teach::teach(&mut store.open()?, &args),
        Command::Visualize(args) => recordings::visualize(&store.open_to_read()?, &args),
        Command::Delete(args) => recordings::delete(store.path(), &args),
        Command::Export(args) => recordings::export(&store.open_to_read()?, &args),
        Command::Import(args) => recordings::import(&mut store.open()?, &args),
        Command::Replay(args) => replay::replay(&mut store.open()?, config, &args, quiet),
        Command::Resume(args) => resume::resume(&mut store.open()?, config, &args, quiet),
        Command::Report(args) => runs::report(&store.open_to_read()?, &args),
        Command::Runs(args) => runs::runs(&store, args),
        Command::Segment(args) => vision::segment(store.path(), &args),
        Command::Screenshot(args) => vision::screenshot(&args),
        Command::Llm(command) => llm::llm(store.path(), config, command),
        Command::Config(ConfigCommand::Show { json }) => {
            llm::config_show(store.path(), config, json)
        }
        Command::Bench(command) => bench::run(command),
        Command::Serve(args) => fleet::serve(store.path(), &args),
        Command::Worker(args) => fleet::worker(store.path(), config, &args),
        Command::Jobs(command) => fleet::jobs(command),
        Command::Completions { shell } => help::completions(shell),
        Command::Man { dir } => help::man_pages(dir.as_deref()),
    }
}
