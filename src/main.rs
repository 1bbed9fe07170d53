//! The `reprise` binary: parses the command line, runs the command, and maps
//! its outcome to a documented exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    // The recorder's input listener, run by `reprise record` as a child
    // process (see platform::listen): not a command people use, so not on
    // the command line's list, its help, completions or manual.
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(
            reprise::platform::listen::LISTENER_COMMAND,
        ))
    {
        return match reprise::platform::listen::serve_input() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        };
    }
    let cli = reprise::cli::Cli::parse_documented();
    // The server is a daemon: what it did (a schedule fired, a queue
    // mended, jobs pruned) is logged unless asked not to.
    let verbose = match cli.command {
        reprise::cli::Command::Serve(_) => cli.global.verbose.max(1),
        _ => cli.global.verbose,
    };
    reprise::cli::exit::init_logging(verbose, cli.global.quiet);
    match reprise::cli::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "{}: {}",
                reprise::cli::exit::label_for(&err),
                reprise::settings::errors::one_line(&err)
            );
            ExitCode::from(reprise::cli::exit::code_for(&err) as u8)
        }
    }
}
