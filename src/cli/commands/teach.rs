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
use crate::store::Store;

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

pub fn teach(store: &mut Store, args: &TeachArgs) -> Result<()> {
    let run_id = store.resolve_run(&args.run)?;
    let (run, steps) = store.load_run(&run_id)?;
    let refused = |why: String| UsageError(format!("run {run_id}: {why}; nothing was taught"));
    let (halted, twins) = halted_on_twins(&run_id, &steps)?;
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
    let pick = match (args.pick, args.click) {
        (Some(pick), _) => pick,
        (None, true) => clicked(&twins)?,
        (None, false) => ask(&twins)?,
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
        Some(&run_id),
        vec![change],
    )?;
    store.repin_run(&run_id, new)?;
    if args.json {
        return print_json(&serde_json::json!({
            "run_id": run_id,
            "recording_id": run.recording_id,
            "step": halted.step_idx + 1,
            "pick": pick,
            "of": twins.len(),
            "version": new,
        }));
    }
    print_text(&format!(
        "taught step {}: {} twins in reading order, {chosen}\nsaved as version {new} of {:?}; `reprise resume {run_id}` goes on with it, and later runs choose it alone\n",
        halted.step_idx + 1,
        ordinal.words(),
        bundle.recording.name
    ))
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
        "the twins, in reading order:\n{}\nwhich one did you mean? [1-{}]",
        listed.join("\n"),
        twins.len()
    );
    let Some(answer) = super::output::ask(&question)? else {
        bail!(UsageError(format!(
            "which twin? give --pick N:\n{}\nnothing was taught",
            listed.join("\n")
        )));
    };
    answer
        .parse()
        .map_err(|_| UsageError(format!("{answer:?} is not a number; nothing was taught")).into())
}
