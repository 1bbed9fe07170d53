//! The `reprise` binary: parses the command line, runs the command, and maps
//! its outcome to a documented exit code.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let cli = reprise::cli::Cli::parse();
    reprise::exit::init_logging();
    match reprise::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "{}: {}",
                reprise::exit::label_for(&err),
                reprise::exit::one_line(&err)
            );
            ExitCode::from(reprise::exit::code_for(&err) as u8)
        }
    }
}
