//! `reprise llm` and `reprise config show`.

use anyhow::{Context as _, Result, bail};

use super::output::{print_json, print_text};
use crate::present;
use crate::settings::errors::UsageError;
use crate::store::Store;

pub fn llm(
    store_path: &std::path::Path,
    config: Option<&std::path::Path>,
    command: crate::cli::LlmCommand,
) -> Result<()> {
    use crate::cli::LlmCommand;
    let file = crate::settings::config::config_file(config)?;
    match command {
        LlmCommand::Ping { provider, no_cache } => ping(
            store_path,
            &file,
            crate::llm::LlmFlags { provider, no_cache },
        ),
        LlmCommand::Usage { run, json } => usage(store_path, run, json),
        LlmCommand::Prune { older_than_days } => {
            // At most a century: past that, converting to a duration panics.
            if !(older_than_days.is_finite() && (0.0..=36_500.0).contains(&older_than_days)) {
                bail!(UsageError(
                    "--older-than-days must be a number of days, from 0 to 36500".into()
                ));
            }
            let age = std::time::Duration::from_secs_f64(older_than_days * 86_400.0);
            let mut store = Store::open(store_path).context("open the store")?;
            let n = store.prune_llm_cache(age)?;
            println!("deleted {n} cached answers");
            Ok(())
        }
    }
}

/// `reprise llm ping`: one small request through the chain, its answer
/// and what it cost; an error unless the answer is the JSON asked for.
fn ping(
    store_path: &std::path::Path,
    file: &crate::settings::config::FileConfig,
    flags: crate::llm::LlmFlags,
) -> Result<()> {
    use reprise_strategies::llm::{Llm as _, LlmRequest, Message};
    let settings = crate::llm::settings::resolve(&flags, &|var| std::env::var(var).ok(), file)?;
    let store = Store::open(store_path).context("open the store")?;
    let mut chain = crate::llm::ChainLlm::new(settings, store)?;
    let prompt = crate::llm::prompt::render("ping", &Default::default())?;
    let request = LlmRequest {
        purpose: "ping".into(),
        system: "You are a health check.".into(),
        messages: vec![Message::user_text(prompt)],
        max_output_tokens: 20,
    };
    let reply = chain.complete(&request)?;
    let answer = reprise_strategies::llm::extract_json(&reply.text);
    println!(
        "{} {}: answered in {} ms{} ({} tokens in, {} out): {}",
        reply.provider,
        reply.model,
        reply.latency_ms,
        if reply.cached { " from the cache" } else { "" },
        reply.usage.input_tokens,
        reply.usage.output_tokens,
        reply.text.trim()
    );
    match answer {
        Ok(value) if value["ok"] == true => Ok(()),
        _ => bail!(crate::llm::LlmFailure(
            "the provider answered, but not with the JSON it was asked for".into()
        )),
    }
}

/// `reprise llm usage`: the model calls by provider and model, of one run
/// or of all.
fn usage(store_path: &std::path::Path, run: Option<String>, json: bool) -> Result<()> {
    let store = Store::open(store_path).context("open the store")?;
    let run_id = run.map(|run| store.resolve_run(&run)).transpose()?;
    let totals = store.llm_usage(run_id.as_deref())?;
    if json {
        return print_json(&totals);
    }
    if totals.is_empty() {
        return print_text("no model calls yet\n");
    }
    let mut text = format!(
        "{:<10} {:<28} {:>6} {:>6} {:>8} {:>10} {:>10} {:>10}\n",
        "PROVIDER", "MODEL", "CALLS", "CACHED", "FAILED", "TOKENS IN", "TOKENS OUT", "COST USD"
    );
    for total in &totals {
        text.push_str(&format!(
            "{:<10} {:<28} {:>6} {:>6} {:>8} {:>10} {:>10} {:>10.4}\n",
            total.provider,
            total.model,
            total.calls,
            total.cache_hits,
            total.failures,
            total.input_tokens,
            total.output_tokens,
            total.cost_usd
        ));
    }
    print_text(&text)
}

/// `reprise config show`: every setting in effect and where it came from;
/// then the settings are checked as a command using them would, and a
/// refusal is the command's error (exit 2).
pub fn config_show(
    store: &std::path::Path,
    config: Option<&std::path::Path>,
    json: bool,
) -> Result<()> {
    use crate::llm::settings::Explained;
    let env = |var: &str| std::env::var(var).ok();
    let row = |setting: &str, value: String, from: &str| Explained {
        setting: setting.to_owned(),
        value,
        from: from.to_owned(),
    };
    let given = |var: &str, value: &std::path::Path| {
        if env(var).is_some_and(|set| std::path::Path::new(&set) == value) {
            var.to_owned()
        } else {
            format!("--{}", var.trim_start_matches("REPRISE_").to_lowercase())
        }
    };
    let mut rows = vec![row(
        "store",
        store.display().to_string(),
        &if store == Store::default_path() && env("REPRISE_STORE").is_none() {
            "default".to_owned()
        } else {
            given("REPRISE_STORE", store)
        },
    )];
    let default_config = crate::settings::config::default_path();
    rows.push(match (config, &default_config) {
        (Some(path), _) => row(
            "config file",
            path.display().to_string(),
            &given("REPRISE_CONFIG", path),
        ),
        (None, Some(path)) if path.exists() => {
            row("config file", path.display().to_string(), "default")
        }
        (None, Some(path)) => row(
            "config file",
            format!("none ({} does not exist)", path.display()),
            "default",
        ),
        (None, None) => row("config file", "none".to_owned(), "default"),
    });
    let file = crate::settings::config::read(config);
    let checked = file
        .as_ref()
        .map_err(crate::settings::errors::one_line)
        .and_then(|file| {
            rows.extend(crate::llm::settings::explain(&env, &file.llm));
            let (value, from) = match (env("REPRISE_RUNS_KEEP_DAYS"), file.runs.keep_days) {
                (Some(days), _) => (days, "REPRISE_RUNS_KEEP_DAYS"),
                (None, Some(days)) => (days.to_string(), "config file"),
                (None, None) => (
                    crate::settings::config::DEFAULT_RUNS_KEEP_DAYS.to_string(),
                    "default",
                ),
            };
            rows.push(row("runs.keep_days", value, from));
            crate::llm::settings::resolve(&Default::default(), &env, &file.llm)
                .map(drop)
                .and_then(|()| crate::settings::config::runs_keep_days(config, &env).map(drop))
                .map_err(|err| crate::settings::errors::one_line(&err))
        });
    if json {
        print_json(&rows)?;
    } else {
        print_text(&settings_table(&rows))?;
    }
    checked.map_err(|reason| crate::settings::errors::ConfigError(reason).into())
}

/// Settings as aligned columns: setting, value, where it came from.
fn settings_table(rows: &[crate::llm::settings::Explained]) -> String {
    let width = |pick: fn(&crate::llm::settings::Explained) -> &str| {
        rows.iter()
            .map(|row| pick(row).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (setting_width, value_width) = (width(|row| &row.setting), width(|row| &row.value));
    let mut text = String::new();
    for row in rows {
        text.push_str(&present::terminal_safe(
            format!(
                "{:<setting_width$}  {:<value_width$}  {}",
                row.setting, row.value, row.from
            )
            .trim_end(),
        ));
        text.push('\n');
    }
    text
}
