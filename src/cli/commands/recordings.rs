//! The commands on stored recordings: `list`, `show`, `params`,
//! `visualize`, `delete`, `export`, `import`.

use anyhow::{Context as _, Result, bail};
use reprise_models::{ReduceOptions, reduce};

use super::StoreAt;
use super::output::{print_json, print_text, write_atomically};
use super::runs::delete_with_room;
use crate::cli::{
    DeleteArgs, ExportArgs, ImportArgs, ListArgs, ParamsArgs, ShowArgs, VisualizeArgs,
};
use crate::present::{self, plural};
use crate::settings::errors::UsageError;
use crate::store::{Store, archive};

/// `reprise list`.
pub fn list(store: &Store, args: &ListArgs) -> Result<()> {
    let summaries = store.list_recordings()?;
    if args.json {
        print_json(&summaries)
    } else {
        print_text(&present::summaries_table(&summaries))
    }
}

/// `reprise params`: a recording's parameters, renamed first when asked.
pub fn params(store: &StoreAt, args: &ParamsArgs) -> Result<()> {
    if args.rename.is_empty() {
        return print_params(&store.open_to_read()?, args);
    }
    let mut store = store.open()?;
    rename_params(&mut store, args)?;
    print_params(&store, args)
}

/// `reprise visualize`: a recording's page.
pub fn visualize(store: &Store, args: &VisualizeArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let html = crate::present::report::recording_page(store, &id)?;
    write_atomically(&args.output, html.as_bytes())?;
    println!("wrote recording {id} to {}", args.output.display());
    Ok(())
}

/// `reprise delete`.
pub fn delete(store_path: &std::path::Path, args: &DeleteArgs) -> Result<()> {
    let (id, freed) = delete_with_room(store_path, |store| {
        let id = store.resolve(&args.recording)?;
        store.delete_recording(&id)?;
        Ok(Some(id))
    })?;
    let id = id.expect("a delete names the recording it deleted");
    if args.json {
        return print_json(&serde_json::json!({
            "id": id,
            "bytes_given_back": if freed.given_back { freed.bytes } else { 0 },
        }));
    }
    if freed.given_back {
        println!(
            "deleted recording {id} ({} given back to the disk)",
            present::bytes(freed.bytes)
        );
    } else {
        println!(
            "deleted recording {id} (its space stays in the store for new recordings; \
             the next deletion tries again to give it back)"
        );
    }
    Ok(())
}

pub fn show(store: &Store, args: &ShowArgs) -> Result<()> {
    let (id, version) = store.resolve_versioned(&args.recording)?;
    let (bundle, version, program) = store
        .load_edited(&id, version)
        .with_context(|| format!("read recording {}", args.recording))?;
    let options = ReduceOptions {
        double_click: bundle.recording.double_click,
    };
    let trees = reduce(bundle.events.clone(), &options);
    if args.json {
        print_json(&present::ShowJson {
            recording: &bundle.recording,
            events: &trees,
            screenshots: &bundle.screenshots,
            window_states: &bundle.window_states,
            program: program.as_ref(),
        })
    } else {
        let latest = store.latest_version(&id)?;
        // The steps as replay counts them: a typed word is one step.
        let mut text = present::recording_text(&bundle, &present::planned_steps(&bundle));
        let added = program
            .as_ref()
            .map(present::steps::added_entries)
            .unwrap_or_default();
        if !added.is_empty() {
            text.push_str(&format!(
                "version {version} adds to these steps (`reprise steps {}` shows them all):\n",
                bundle.recording.name
            ));
            for line in added {
                text.push_str(&format!("  {line}\n"));
            }
        }
        if latest > 1 {
            text = format!(
                "version {version} of {latest} (1: as recorded; `reprise versions {}`)\n{text}",
                bundle.recording.name
            );
        }
        print_text(&text)
    }
}

/// `params ID --rename OLD=NEW`: every rename checked, then all stored.
fn rename_params(store: &mut Store, args: &ParamsArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let bundle = store
        .load(&id)
        .with_context(|| format!("read recording {id}"))?;
    let mut names = bundle.recording.parameter_names.clone();
    for pair in &args.rename {
        let Some((old, new)) = pair.split_once('=') else {
            bail!(UsageError(format!("--rename takes OLD=NEW, not {pair:?}")));
        };
        // Each rename sees the ones before it.
        let params = crate::replay::parameters_in(&bundle, &names);
        reprise_strategies::params::rename(&params, &mut names, old, new)
            .map_err(|err| UsageError(err.to_string()))?;
    }
    store.set_parameter_names(&id, &names)?;
    Ok(())
}

fn print_params(store: &Store, args: &ParamsArgs) -> Result<()> {
    let params = crate::replay::parameters_of(store, &args.recording)?;
    if args.json {
        return print_json(&params);
    }
    if params.is_empty() {
        return print_text("the recording types no text and no secret\n");
    }
    let mut text = String::new();
    for param in &params {
        let what = match &param.kind {
            reprise_strategies::params::ParameterKind::Text { recorded } => {
                format!("= {}", present::terminal_safe(&format!("{recorded:?}")))
            }
            reprise_strategies::params::ParameterKind::Secret => format!(
                "secret, from {}",
                crate::replay::secrets::env_name(&param.name)
            ),
        };
        let field = param
            .field
            .as_deref()
            .map(|field| format!(", typed into {}", present::terminal_safe(field)))
            .unwrap_or_default();
        text.push_str(&format!(
            "{{{}}} {what} (step {}{field})\n",
            present::terminal_safe(&param.name),
            param.step + 1
        ));
    }
    print_text(&text)
}

pub fn export(store: &Store, args: &ExportArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let bundle = store
        .load(&id)
        .with_context(|| format!("read recording {id}"))?;
    let bytes = archive::export(store, &bundle)?;
    write_atomically(&args.output, &bytes)?;
    if args.json {
        let said = serde_json::json!({
            "id": id,
            "name": bundle.recording.name,
            "events": bundle.events.len(),
            "screenshots": bundle.screenshots.len(),
            "bytes": bytes.len(),
            "path": args.output,
        });
        let mut text = serde_json::to_string_pretty(&said)?;
        text.push('\n');
        // The export itself may be on stdout: the words go beside it.
        if super::output::is_stream(&args.output) {
            eprint!("{text}");
            return Ok(());
        }
        return print_text(&text);
    }
    let said = format!(
        "exported recording {id} ({}, {}, {}) to {}",
        plural(bundle.events.len(), "event"),
        plural(bundle.screenshots.len(), "screenshot"),
        plural(bytes.len(), "byte"),
        args.output.display()
    );
    if super::output::is_stream(&args.output) {
        eprintln!("{said}");
    } else {
        println!("{said}");
    }
    Ok(())
}

pub fn import(store: &mut Store, args: &ImportArgs) -> Result<()> {
    let file =
        std::fs::File::open(&args.file).with_context(|| format!("read {}", args.file.display()))?;
    let mut archive = archive::read(std::io::BufReader::new(file))
        .with_context(|| format!("import {}: the store was not changed", args.file.display()))?;
    if let Some(name) = &args.as_name {
        reprise_models::recording::check_name(name).map_err(|err| UsageError(err.to_string()))?;
        archive.bundle.recording.id = uuid::Uuid::new_v4().to_string();
        archive.bundle.recording.name = name.clone();
    }
    store
        .import(&archive.bundle, &archive.images)
        .with_context(|| format!("import {}: the store was not changed", args.file.display()))?;
    store.import_versions(&archive.bundle.recording.id, &archive.versions)?;
    let recording = &archive.bundle.recording;
    if args.json {
        return print_json(&serde_json::json!({
            "id": recording.id,
            "name": recording.name,
            "events": archive.bundle.events.len(),
            "screenshots": archive.bundle.screenshots.len(),
        }));
    }
    println!(
        "imported recording {} (\"{}\", {}, {})",
        recording.id,
        present::terminal_safe(&recording.name),
        plural(archive.bundle.events.len(), "event"),
        plural(archive.bundle.screenshots.len(), "screenshot")
    );
    Ok(())
}
