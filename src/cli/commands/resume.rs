//! `reprise resume`: a halted run, gone on with from its halted step.

use anyhow::Result;

use crate::cli::ResumeArgs;
use crate::replay::resume::plan;
use crate::replay::{ReplayRequest, StrategyChoice};
use crate::settings::errors::UsageError;
use crate::store::Store;

pub fn resume(
    store: &mut Store,
    config: Option<&std::path::Path>,
    args: &ResumeArgs,
    quiet: bool,
) -> Result<()> {
    let result = resumed(store, config, args, quiet)?;
    if args.teach {
        return super::teach::taught_and_gone_on(store, config, result, args, quiet);
    }
    // Listed, never saved here: `replay --save-healed` saves heals.
    super::versions::heals_said(store, &result, false)?;
    super::replay::said(&result, args.json, false)
}

/// The run `args` names, gone on with: its result.
pub(super) fn resumed(
    store: &mut Store,
    config: Option<&std::path::Path>,
    args: &ResumeArgs,
    quiet: bool,
) -> Result<crate::replay::ReplayResult> {
    let run_id = store.resolve_run(&args.run)?;
    let (run, steps) = store.load_run(&run_id)?;
    // A run or a step that is not there to resume: the command line named
    // the wrong thing (exit 2), and nothing was changed.
    let resume = plan(&run, &steps, args.from).map_err(|err| UsageError(err.to_string()))?;
    let strategy = match (args.strategy, run.strategy.as_str()) {
        (Some(StrategyChoice::Vanilla), _) => {
            return Err(UsageError("--strategy vanilla cannot resume a run".into()).into());
        }
        (Some(strategy), _) => strategy,
        (None, "naive") => StrategyChoice::Naive,
        (None, _) => StrategyChoice::Visual,
    };
    let arguments = &run.arguments;
    let from = resume.from;
    let request = ReplayRequest {
        // The run's recording, by its id: the version it was replaying.
        recording: run.recording_id.clone(),
        strategy,
        rungs: reprise_strategies::visual::Rungs {
            structural: arguments.rungs.structural,
            visual: arguments.rungs.visual,
        },
        speed: arguments.speed,
        options: reprise_strategies::ReplayOptions {
            max_steps: arguments.max_steps,
            max_retries: arguments.max_retries,
            skip_failures: arguments.skip_failures,
            dry_run: false,
            require_verified: arguments.require_verified,
            ..Default::default()
        },
        replacements: arguments.replacements.clone(),
        instructions: arguments.instructions.clone(),
        config: config.map(std::path::Path::to_path_buf),
        describer: args.describer,
        release_held: args.release_held_keys,
        launch: false,
        progress: crate::replay::Progress {
            banner: Some(format!(
                "resuming run {run_id} at step {} ({}): move the pointer into a screen corner or press {} to abort",
                from + 1,
                resume.halted,
                crate::replay::ABORT_KEYS
            )),
            lines: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !quiet,
            json: args.json,
        },
        secrets_file: args.secrets_file.clone(),
        parameters: arguments.parameters.clone(),
        secret_overrides: Default::default(),
        batch: arguments.batch.clone(),
        hooks: Default::default(),
        resume: Some(resume),
    };
    crate::replay::replay(store, &request)
}
