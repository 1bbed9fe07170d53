//! The commands on a recording's steps as a text: `steps` prints them,
//! `edit` changes them (in an editor or from a file) into a new version.

use std::io::IsTerminal as _;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use reprise_models::program::{Entry, Program};

use super::output::{print_json, print_text};
use crate::cli::{EditArgs, StepsArgs};
use crate::present::steps::{self, Parsed, RecordedStep, StepsError};
use crate::settings::errors::UsageError;
use crate::store::Store;

/// The most times the editor opens again on a mistake before `edit`
/// gives up (each time, the person may also save the file unchanged).
const MAX_EDITOR_ROUNDS: usize = 10;

/// A recording's version as a steps file's terms.
pub(super) struct Subject {
    recording_id: String,
    pub(super) name: String,
    /// The task, as the person described it when recording.
    pub(super) task: String,
    version: u32,
    latest: u32,
    pub(super) planned: Vec<reprise_models::ActionEvent>,
    /// The recording's frames, and its windows' places and titles (by id),
    /// for the frames `--instruct --frames` sends.
    pub(super) screenshots: Vec<reprise_models::Screenshot>,
    pub(super) windows: Vec<(reprise_models::Rect, String)>,
    names: reprise_strategies::params::Names,
    steps: Vec<RecordedStep>,
    parameters: Vec<reprise_strategies::params::Parameter>,
    program: Program,
}

fn subject(store: &Store, query: &str) -> Result<Subject> {
    let (recording_id, pinned) = store.resolve_versioned(query)?;
    let (bundle, version, program) = store.load_edited(&recording_id, pinned)?;
    let latest = store.latest_version(&recording_id)?;
    let names = bundle.recording.parameter_names.clone();
    let planned = crate::replay::recorded_steps(&bundle, &names);
    let parameters = reprise_strategies::params::parameters(&planned, &names);
    let program = program.unwrap_or_else(|| Program::recorded(planned.len()));
    Ok(Subject {
        recording_id,
        name: bundle.recording.name.clone(),
        task: bundle.recording.task_description.clone(),
        version,
        latest,
        steps: steps::recorded_steps(&planned),
        planned,
        windows: bundle
            .window_states
            .iter()
            .map(|state| (state.rect, state.title.clone()))
            .collect(),
        screenshots: bundle.screenshots,
        names,
        parameters,
        program,
    })
}

impl Subject {
    pub(super) fn text(&self) -> String {
        self.text_of(&self.program)
    }

    /// `program`'s file, with this version's header.
    fn text_of(&self, program: &Program) -> String {
        steps::render(
            &format!(
                "{:?} (version {} of {})",
                self.name, self.version, self.latest
            ),
            &format!("reprise edit {} --file FILE", self.name),
            program,
            &self.steps,
            &self.parameters,
        )
    }

    /// The program a text holds, checked as a replay would run it.
    pub(super) fn read(&self, text: &str) -> Result<Program, StepsError> {
        let Parsed {
            program,
            lines,
            tables,
        } = steps::parse_lines(
            text,
            &self.steps,
            &self.parameters,
            &crate::replay::rows::table_at,
        )?;
        reprise_strategies::program::compile(
            self.planned.clone(),
            &program,
            &[],
            &self.names,
            &tables,
        )
        .map_err(|err| steps::at_line(err, &lines, text))?;
        Ok(program)
    }
}

/// `reprise steps NAME`.
pub fn steps(store: &Store, args: &StepsArgs) -> Result<()> {
    let subject = subject(store, &args.recording)?;
    if args.json {
        return print_json(&serde_json::json!({
            "recording_id": subject.recording_id,
            "name": subject.name,
            "version": subject.version,
            "program": subject.program,
        }));
    }
    print_text(&subject.text())
}

/// `reprise edit NAME [--file F | --instruct TEXT]`.
pub fn edit(store: &mut Store, config: Option<&Path>, args: &EditArgs) -> Result<()> {
    let subject = subject(store, &args.recording)?;
    let program = match (&args.file, &args.instruct) {
        (Some(_), Some(_)) => bail!(UsageError(
            "give the steps with --file, or ask for a change with --instruct, not both".into()
        )),
        (Some(file), None) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("read the steps file {}", file.display()))?;
            subject.read(&text).map_err(|err| {
                UsageError(format!("{}: {err}; nothing was saved", file.display()))
            })?
        }
        (None, Some(instruction)) => {
            let program =
                super::instruct::instructed(store, config, &subject, instruction, args.frames)?;
            let change = steps::diff(&subject.text(), &subject.text_of(&program));
            if !args.json {
                print_text(&change)?;
            }
            if !change.is_empty() && !super::instruct::accepted(args.yes, subject.latest + 1)? {
                return outcome(args, &subject, None);
            }
            program
        }
        (None, None) => match in_editor(&subject)? {
            Some(program) => program,
            None => return outcome(args, &subject, None),
        },
    };
    if program == subject.program {
        return outcome(args, &subject, None);
    }
    let kept = (!program.is_recorded(subject.planned.len())).then_some(&program);
    let note = args.note.clone().unwrap_or_else(|| match &args.instruct {
        Some(instruction) => format!("asked: {instruction}"),
        None => "edited".into(),
    });
    let version = store.add_program(&subject.recording_id, subject.version, &note, kept)?;
    outcome(args, &subject, Some((version, &program)))
}

fn outcome(args: &EditArgs, subject: &Subject, saved: Option<(u32, &Program)>) -> Result<()> {
    let counts = saved.map(|(_, program)| {
        let recorded = program
            .entries
            .iter()
            .filter(|entry| matches!(entry, Entry::Recorded { .. }))
            .count();
        (recorded, program.entries.len() - recorded)
    });
    if args.json {
        return print_json(&serde_json::json!({
            "recording_id": subject.recording_id,
            "name": subject.name,
            "over": subject.version,
            "version": saved.map(|(version, _)| version),
            "recorded_steps": counts.map(|counts| counts.0),
            "instructions": counts.map(|counts| counts.1),
        }));
    }
    match (saved, counts) {
        (Some((version, _)), Some((recorded, instructions))) => print_text(&format!(
            "saved version {version} of {:?} (edited from version {}): {recorded} of its {} recorded steps, {instructions} instructions\n`reprise replay {}` replays it; `reprise steps {}@{version}` shows it\n",
            subject.name,
            subject.version,
            subject.steps.len(),
            subject.name,
            subject.name
        )),
        _ => print_text("no change: nothing was saved\n"),
    }
}

/// The program the person saves in their editor: opened again on a
/// mistake, with the mistake at the top; `None` when they leave it as it
/// was given (or give up by saving the mistake unchanged).
fn in_editor(subject: &Subject) -> Result<Option<Program>> {
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|editor| !editor.trim().is_empty());
    let editor = match editor {
        Some(editor) => editor,
        None if std::io::stdin().is_terminal() => "vi".to_owned(),
        None => bail!(UsageError(
            "no editor: set VISUAL or EDITOR, or give the steps with --file FILE".into()
        )),
    };
    let dir = tempfile::tempdir().context("make a directory for the steps file")?;
    let path = dir
        .path()
        .join(format!("{}-steps.toml", file_safe(&subject.name)));
    let mut given = subject.text();
    for _ in 0..MAX_EDITOR_ROUNDS {
        std::fs::write(&path, &given).context("write the steps file for the editor")?;
        run_editor(&editor, &path)?;
        let saved = std::fs::read_to_string(&path).context("read the edited steps file")?;
        if saved == given {
            return Ok(None);
        }
        let body = without_mistake(&saved);
        match subject.read(body) {
            Ok(program) => return Ok(Some(program)),
            Err(err) => {
                eprintln!("{err}; opening the editor again");
                given = with_mistake(body, &err);
            }
        }
    }
    bail!(UsageError(format!(
        "the steps still had a mistake after {MAX_EDITOR_ROUNDS} rounds in the editor; nothing was saved"
    )))
}

const MISTAKE: &str = "# reprise edit: NOT SAVED:";

/// The file with its mistake said at the top (two lines, so the line named
/// is the file's own, counted from below them).
fn with_mistake(body: &str, err: &StepsError) -> String {
    format!(
        "{MISTAKE} line {} ({}): {}\n# Mend it and save; save it unchanged to give up.\n{body}",
        err.line + 2,
        err.field,
        err.message.replace('\n', " ")
    )
}

fn without_mistake(text: &str) -> &str {
    match text.strip_prefix(MISTAKE) {
        Some(rest) => rest.splitn(3, '\n').nth(2).unwrap_or(""),
        None => text,
    }
}

fn run_editor(editor: &str, path: &Path) -> Result<()> {
    // The editor as the person wrote it, arguments and all (`code --wait`).
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .with_context(|| format!("start the editor {editor:?}"))?;
    if !status.success() {
        bail!(UsageError(format!(
            "the editor {editor:?} ended with {status}; nothing was saved"
        )));
    }
    Ok(())
}

fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistake_said_at_the_top_is_taken_off_again() {
        let err = StepsError {
            line: 3,
            field: "wait.timeout".into(),
            message: "a wait needs its bound".into(),
        };
        let body = "[[step]]\nrecorded = 1\n";
        let shown = with_mistake(body, &err);
        assert!(shown.starts_with("# reprise edit: NOT SAVED: line 5 (wait.timeout)"));
        assert_eq!(without_mistake(&shown), body);
        assert_eq!(without_mistake(body), body);
    }
}
