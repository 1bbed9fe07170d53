//! `reprise teach RUN`: a run halted on twins (elements nothing in the tree
//! tells apart) is told which one the person meant, by its place among
//! them in reading order; the rule is kept in a new version of the
//! recording, the run is pinned to it (so `reprise resume` goes on with
//! it), and later runs decide alone.

use anyhow::{Result, bail};
use reprise_models::element::Ordinal;
use reprise_models::version::TargetChange;
use reprise_strategies::{Candidate, StepStatus};

use super::output::{print_json, print_text};
use crate::cli::TeachArgs;
use crate::settings::errors::UsageError;
use crate::store::{RunRecord, RunStep, Store};

/// The step a run halted at, and the twins it refused there, in reading
/// order; refused unless it halted on twins.
fn halted_on_twins(
    run_id: &str,
    steps: &[crate::store::RunStep],
) -> Result<(reprise_strategies::StepRecord, Vec<Candidate>), UsageError> {
    let refused = |why: String| UsageError(format!("run {run_id}: {why}; nothing was taught"));
    let halted = steps
        .last()
        .map(|step| &step.step.record)
        .filter(|record| record.status == StepStatus::Failed)
        .ok_or_else(|| refused("it did not halt at a step".into()))?;
    let twins: Vec<Candidate> = halted
        .sought
        .iter()
        .flat_map(|sought| &sought.candidates)
        .filter(|candidate| candidate.measure == reprise_strategies::visual::TWIN_MEASURE)
        .cloned()
        .collect();
    if twins.len() < 2 {
        let why = halted.errors.last().map_or("", String::as_str);
        return Err(refused(format!(
            "it halted at step {} not on twins ({why})",
            halted.step_idx + 1
        )));
    }
    Ok((halted.clone(), twins))
}

/// What was taught: the rule kept, and the version that keeps it.
struct Taught {
    run_id: String,
    recording_id: String,
    name: String,
    step: usize,
    pick: usize,
    of: usize,
    chosen: String,
    rule: String,
    version: u32,
}

/// How the person says which twin: a number, a click, or asked.
enum Pick {
    Number(usize),
    Click,
    Ask,
}

pub fn teach(store: &mut Store, args: &TeachArgs) -> Result<()> {
    let pick = match (args.pick, args.click) {
        (Some(pick), _) => Pick::Number(pick),
        (None, true) => Pick::Click,
        (None, false) => Pick::Ask,
    };
    let taught = taught(store, &args.run, pick)?;
    if args.json {
        return print_json(&serde_json::json!({
            "run_id": taught.run_id,
            "recording_id": taught.recording_id,
            "step": taught.step,
            "pick": taught.pick,
            "of": taught.of,
            "version": taught.version,
        }));
    }
    print_text(&format!(
        "{}\n`reprise resume {}` goes on with it, and later runs choose it alone\n",
        taught.words(),
        taught.run_id
    ))
}

impl Taught {
    fn words(&self) -> String {
        format!(
            "taught step {}: {} twins in reading order, {}\nsaved as version {} of {:?}",
            self.step, self.rule, self.chosen, self.version, self.name
        )
    }
}

/// The most halts on twins one `--teach` run asks about.
const MAX_TEACHINGS: usize = 10;

/// `replay --teach`, `resume --teach`: while the run halted on twins and
/// a person is at the terminal (at most [`MAX_TEACHINGS`] times), the twin
/// meant is asked for, taught, and the run goes on from that step; then
/// its outcome is said as a replay's is.
pub(super) fn taught_and_gone_on(
    store: &mut Store,
    config: Option<&std::path::Path>,
    mut result: crate::replay::ReplayResult,
    args: &crate::cli::ResumeArgs,
    quiet: bool,
) -> Result<()> {
    use std::io::IsTerminal as _;
    for _ in 0..MAX_TEACHINGS {
        let loaded = store.load_run(&result.run_id)?;
        let twins = halted_on_twins(&result.run_id, &loaded.1).is_ok();
        if !twins || !std::io::stdin().is_terminal() {
            break;
        }
        if let Some(stop) = crate::replay::stop_of(&result) {
            eprintln!("halted: {}", stop.0);
        }
        let taught = taught_run(store, &result.run_id, loaded, Pick::Ask)?;
        eprintln!("{}; going on from step {}", taught.words(), taught.step);
        let resume = crate::cli::ResumeArgs {
            run: result.run_id.clone(),
            ..args.clone()
        };
        result = super::resume::resumed(store, config, &resume, quiet)?;
        super::versions::heals_said(store, &result, false)?;
    }
    super::replay::said(&result, args.json, false)
}

/// How `replay --teach` goes on with run `run_id`: as `resume --teach`,
/// with the replay's secrets, describer and output.
pub(super) fn resume_args(run_id: &str, args: &crate::cli::ReplayArgs) -> crate::cli::ResumeArgs {
    crate::cli::ResumeArgs {
        run: run_id.to_owned(),
        from: None,
        strategy: None,
        secrets_file: args.secrets_file.clone(),
        describer: args.describer,
        release_held_keys: args.release_held_keys,
        teach: true,
        json: args.json,
    }
}

/// Teaches the run `run_query` names which twin its halted step meant.
fn taught(store: &mut Store, run_query: &str, pick: Pick) -> Result<Taught> {
    let run_id = store.resolve_run(run_query)?;
    let loaded = store.load_run(&run_id)?;
    taught_run(store, &run_id, loaded, pick)
}

/// Teaches run `run_id`, as loaded (the run and its steps), which twin its
/// halted step meant.
fn taught_run(
    store: &mut Store,
    run_id: &str,
    (run, steps): (RunRecord, Vec<RunStep>),
    pick: Pick,
) -> Result<Taught> {
    let refused = |why: String| UsageError(format!("run {run_id}: {why}; nothing was taught"));
    let (halted, twins) = halted_on_twins(run_id, &steps)?;
    let twins: Vec<&Candidate> = twins.iter().collect();
    let version = run.arguments.version.unwrap_or(1);
    let (bundle, _, program) = store.load_edited(&run.recording_id, Some(version))?;
    if program.is_some() {
        bail!(refused(format!(
            "version {version} of its recording has edited steps; teach applies to a recording's own steps"
        )));
    }
    let planned = crate::replay::recorded_steps(&bundle, &bundle.recording.parameter_names);
    let press = planned
        .get(halted.step_idx)
        .and_then(crate::replay::heal::recorded_press)
        .ok_or_else(|| refused("its halted step names no recorded element".into()))?;
    let recorded = press
        .element
        .as_deref()
        .expect("a recorded press names its element");
    let pick = match pick {
        Pick::Number(pick) => pick,
        Pick::Click => clicked(&twins)?,
        Pick::Ask => ask(&twins)?,
    };
    if !(1..=twins.len()).contains(&pick) {
        bail!(UsageError(format!(
            "--pick {pick}: the twins are numbered 1 to {}; nothing was taught",
            twins.len()
        )));
    }
    let ordinal = Ordinal {
        index: pick as u32,
        of: twins.len() as u32,
    };
    let chosen = twin_words(twins[pick - 1]);
    let change = TargetChange {
        step: halted.step_idx,
        at: press.timestamp,
        before: Some(recorded.clone()),
        after: reprise_models::ElementIdentity {
            ordinal: Some(ordinal),
            ..recorded.clone()
        },
        why: format!(
            "taught: {} twins in reading order ({chosen})",
            ordinal.words()
        ),
    };
    let note = format!("taught from run {run_id}");
    let new = store.add_version(
        &run.recording_id,
        version,
        &note,
        Some(run_id),
        vec![change],
    )?;
    store.repin_run(run_id, new)?;
    Ok(Taught {
        run_id: run_id.to_owned(),
        recording_id: run.recording_id,
        name: bundle.recording.name,
        step: halted.step_idx + 1,
        pick,
        of: twins.len(),
        chosen,
        rule: ordinal.words(),
        version: new,
    })
}

fn twin_words(twin: &Candidate) -> String {
    match twin.rect {
        Some(rect) => format!("{} at ({}, {})", twin.description, rect.left, rect.top),
        None => twin.description.clone(),
    }
}

/// How long `--click` waits for the click.
const CLICK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The person's pick among the twins, by a click on one of them: the click
/// must land in one twin's box as the run saw it, and the element there now
/// must be that twin (the screen as it was), else nothing is taught.
fn clicked(twins: &[&Candidate]) -> Result<usize> {
    let refused = |why: String| UsageError(format!("{why}; nothing was taught"));
    let listed = listed(twins);
    let ready = || {
        eprintln!(
            "the twins, in reading order:\n{}\nclick the one the step meant (the click goes to no application; the right button gives up, and so do {} s)",
            listed.join("\n"),
            CLICK_WAIT.as_secs()
        );
    };
    let Some((x, y)) = crate::platform::read_click(CLICK_WAIT, ready)
        .map_err(|err| refused(format!("no click could be read: {err}")))?
    else {
        bail!(refused("no click came".into()));
    };
    let at = format!("({}, {})", x.round(), y.round());
    let Some(pick) = twins
        .iter()
        .position(|twin| twin.rect.is_some_and(|rect| rect.contains(x, y)))
    else {
        bail!(refused(format!(
            "the click at {at} is on none of the twins:\n{}",
            listed.join("\n")
        )));
    };
    let twin = twins[pick];
    // The screen must still show that twin there.
    let live = crate::platform::element_reader()
        .and_then(|mut read| read((x, y), None))
        .map(|found| found.element);
    match live {
        Some(live) if live.label() == twin.description && Some(live.rect) == twin.rect => {
            Ok(pick + 1)
        }
        Some(live) => bail!(refused(format!(
            "at {at} the screen now shows {} at ({}, {}), not the twin the run saw there ({}): bring the screen back as it was when the run halted, or give --pick",
            live.label(),
            live.rect.left,
            live.rect.top,
            twin_words(twin)
        ))),
        None => bail!(refused(format!(
            "no accessibility tree says what is at {at}, so the click cannot be checked against the twins: give --pick"
        ))),
    }
}

fn listed(twins: &[&Candidate]) -> Vec<String> {
    twins
        .iter()
        .enumerate()
        .map(|(idx, twin)| format!("  {}. {}", idx + 1, twin_words(twin)))
        .collect()
}

/// The person's pick among the twins, asked at the terminal.
fn ask(twins: &[&Candidate]) -> Result<usize> {
    let listed = listed(twins);
    let question = format!(
        "the twins, in reading order:\n{}\nwhich one did you mean? [1-{}, or c to click it on the screen]",
        listed.join("\n"),
        twins.len()
    );
    let Some(answer) = super::output::ask(&question)? else {
        bail!(UsageError(format!(
            "which twin? give --pick N:\n{}\nnothing was taught",
            listed.join("\n")
        )));
    };
    if answer == "c" {
        return clicked(twins);
    }
    answer
        .parse()
        .map_err(|_| UsageError(format!("{answer:?} is not a number; nothing was taught")).into())
}
