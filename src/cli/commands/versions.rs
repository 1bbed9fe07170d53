//! The commands on a recording's versions: `versions`, `diff`.

use anyhow::{Result, bail};
use reprise_models::ElementIdentity;
use reprise_models::version::{TargetChange, differences};

use super::output::{print_json, print_text};
use crate::cli::{DiffArgs, VersionsArgs};
use crate::present::plural;
use crate::settings::errors::UsageError;
use crate::store::Store;

/// `reprise versions NAME`.
pub fn versions(store: &Store, args: &VersionsArgs) -> Result<()> {
    let (id, pinned) = store.resolve_versioned(&args.recording)?;
    if pinned.is_some() {
        bail!(UsageError(format!(
            "versions lists every version of a recording: name it without @ ({:?})",
            crate::store::split_version(&args.recording).0
        )));
    }
    let name = store.load(&id)?.recording.name;
    let versions = store.versions(&id)?;
    if args.json {
        return print_json(&serde_json::json!({
            "recording_id": id,
            "name": name,
            "latest": versions.last().map_or(1, |version| version.version),
            "versions": versions,
        }));
    }
    let mut text =
        format!("recording {id} {name:?}\nVERSION  CREATED                   STEPS CHANGED  WHY\n");
    text.push_str(&format!("{:<8} {:<25} {:<14} as recorded\n", 1, "", "-"));
    for version in &versions {
        text.push_str(&format!(
            "{:<8} {:<25} {:<14} {}\n",
            version.version,
            version.created,
            version.changes.len(),
            version.note
        ));
    }
    let latest = versions.last().map_or(1, |version| version.version);
    text.push_str(&format!(
        "`reprise replay {name}` replays version {latest}; `{name}@N` pins one\n"
    ));
    print_text(&text)
}

/// A step's target in one version: the change's, or the recording's.
fn target_in(
    changes: &[TargetChange],
    at: f64,
    recorded: Option<&ElementIdentity>,
) -> Option<ElementIdentity> {
    changes
        .iter()
        .find(|change| change.at == at)
        .map(|change| change.after.clone())
        .or_else(|| recorded.cloned())
}

/// `reprise diff NAME@A NAME@B`.
pub fn diff(store: &Store, args: &DiffArgs) -> Result<()> {
    let (from_id, from) = store.resolve_versioned(&args.from)?;
    let (to_id, to) = store.resolve_versioned(&args.to)?;
    if from_id != to_id {
        bail!(UsageError(format!(
            "{} and {} are different recordings ({from_id}, {to_id}): diff compares versions of one",
            args.from, args.to
        )));
    }
    let (from, from_changes) = store.version_changes(&from_id, from)?;
    let (to, to_changes) = store.version_changes(&to_id, to)?;
    // Every press either version changed, with the recording's own target.
    let mut presses: Vec<(usize, f64, Option<ElementIdentity>, String)> = Vec::new();
    for change in from_changes.iter().chain(&to_changes) {
        if !presses.iter().any(|(_, at, _, _)| *at == change.at) {
            presses.push((change.step, change.at, change.before.clone(), String::new()));
        }
    }
    for press in &mut presses {
        if let Some(change) = to_changes.iter().find(|change| change.at == press.1) {
            press.3 = change.why.clone();
        }
    }
    presses.sort_by_key(|press| press.0);
    let mut changed = Vec::new();
    for (step, at, recorded, why) in presses {
        let before = target_in(&from_changes, at, recorded.as_ref());
        let after = target_in(&to_changes, at, recorded.as_ref());
        let fields = match (&before, &after) {
            (Some(before), Some(after)) => differences(before, after),
            _ => vec!["target"],
        };
        if !fields.is_empty() {
            changed.push(ChangedStep {
                step: step + 1,
                changed: fields,
                before,
                after,
                why,
            });
        }
    }
    let name = store.load(&from_id)?.recording.name;
    if args.json {
        return print_json(&Diff {
            recording_id: from_id,
            from,
            to,
            steps: changed,
        });
    }
    print_text(&diff_text(&name, from, to, &changed))
}

/// `reprise diff --json`: the steps two versions of a recording target
/// differently.
#[derive(serde::Serialize)]
struct Diff {
    recording_id: String,
    from: u32,
    to: u32,
    steps: Vec<ChangedStep>,
}

/// A step whose target differs between two versions: which of its fields
/// (counted from 1), before and after, and why the later version says.
#[derive(serde::Serialize)]
struct ChangedStep {
    step: usize,
    changed: Vec<&'static str>,
    before: Option<ElementIdentity>,
    after: Option<ElementIdentity>,
    why: String,
}

/// `diff`'s words: each changed step, before and after.
fn diff_text(name: &str, from: u32, to: u32, changed: &[ChangedStep]) -> String {
    let shown = |identity: &Option<ElementIdentity>| -> String {
        identity.as_ref().map_or_else(
            || "(none)".into(),
            |identity| match identity.window.name.as_deref() {
                Some(window) => format!("{} in {window:?}", identity.label()),
                None => identity.label(),
            },
        )
    };
    let mut text = format!(
        "{name}@{from} → {name}@{to}: {} changed\n",
        plural(changed.len(), "step")
    );
    for step in changed {
        text.push_str(&format!(
            "step {}: its {}\n  - {}\n  + {}\n",
            step.step,
            step.changed.join(", "),
            shown(&step.before),
            shown(&step.after),
        ));
        if !step.why.is_empty() {
            text.push_str(&format!("    ({})\n", step.why));
        }
    }
    text
}

/// What a replay says of its heals at its end: each listed, and saved as
/// a new version only when asked (`--save-healed`).
pub(super) fn heals_said(
    store: &mut Store,
    result: &crate::replay::ReplayResult,
    save: bool,
) -> Result<Option<u32>> {
    if result.heals.is_empty() {
        if save {
            eprintln!("nothing to heal: every proven step found the target the recording names");
        }
        return Ok(None);
    }
    for change in &result.heals {
        eprintln!("heal: step {}: {}", change.step + 1, change.why);
    }
    let name = store.load(&result.recording_id)?.recording.name;
    if !save {
        eprintln!(
            "{} found a changed target; `--save-healed` saves {} as a new version of {name:?} to review",
            plural(result.heals.len(), "step"),
            if result.heals.len() == 1 {
                "it"
            } else {
                "them"
            }
        );
        return Ok(None);
    }
    let version = store.add_version(
        &result.recording_id,
        result.version,
        &format!("healed from run {}", result.run_id),
        Some(&result.run_id),
        result.heals.clone(),
    )?;
    eprintln!(
        "saved {} as version {version} of {name:?}: `reprise diff {name}@{} {name}@{version}` shows it",
        plural(result.heals.len(), "healed step"),
        result.version
    );
    Ok(Some(version))
}
