//! The strategy a replay runs with, and what it needs: the model chain (with
//! the replay's accounting), the prompt templates, and for the visual
//! strategy its segmenter, describer and cache, the recording's steps
//! prepared (fingerprinted) before the first input.

use anyhow::{Context as _, Result};
use reprise_strategies::llm::SharedLlm;
use reprise_strategies::{NaiveStrategy, ReplayStrategy};

use super::{DescriberChoice, ReplayRequest, StrategyChoice};
use crate::settings::errors::UsageError;
use crate::store::Store;

/// The strategy `request` asks for, over the planned steps; the visual one
/// with `--instructions` applied to its steps through the model.
pub fn choose(
    store: &Store,
    bundle: &reprise_models::RecordingBundle,
    trees: Vec<reprise_models::ActionEvent>,
    request: &ReplayRequest,
    llm: &mut Option<SharedLlm>,
) -> Result<Box<dyn ReplayStrategy>> {
    Ok(match request.strategy {
        StrategyChoice::Naive if request.instructions.is_some() => anyhow::bail!(UsageError(
            "--instructions works with --strategy visual or vanilla".into()
        )),
        StrategyChoice::Naive => Box::new(NaiveStrategy::new(
            trees,
            bundle.window_states.clone(),
            request.speed,
        )),
        StrategyChoice::Visual => {
            let mut visual = visual_strategy(store, bundle, trees, request, llm.clone())?;
            if let (Some(instructions), Some(llm)) = (&request.instructions, llm.as_mut()) {
                let (steps, calls) = reprise_strategies::visual::instructions::apply_instructions(
                    llm,
                    &render_prompt(),
                    visual.steps(),
                    &bundle.recording.task_description,
                    instructions,
                    3,
                )
                .map_err(|err| {
                    anyhow::anyhow!(crate::llm::LlmFailure(format!(
                        "apply the instructions: {err}"
                    )))
                })?;
                tracing::info!(calls, "instructions applied");
                visual.set_steps(steps);
            }
            Box::new(visual)
        }
        StrategyChoice::Vanilla => Box::new(reprise_strategies::vanilla::VanillaStrategy::new(
            Box::new(llm.clone().expect("vanilla always has a model")),
            render_prompt(),
            &bundle.recording.task_description,
            &trees,
            request.instructions.as_deref(),
        )),
    })
}
/// The configured model providers, accounting into the store; refused
/// clearly when none is configured. `sent` says, once, what goes to them
/// (`screen images of this replay`).
pub fn model_chain(
    store: &Store,
    config: Option<&std::path::Path>,
    run_id: &str,
    sent: &str,
) -> Result<crate::llm::ChainLlm> {
    let file = crate::settings::config::config_file(config)?;
    let settings =
        crate::llm::settings::resolve(&Default::default(), &|var| std::env::var(var).ok(), &file)?;
    if settings.providers.is_empty() {
        anyhow::bail!(reprise_strategies::llm::LlmError::NotConfigured);
    }
    // Said once, before anything is sent: where the screen's images go.
    let receivers: Vec<String> = settings
        .providers
        .iter()
        .map(|provider| {
            let host = reqwest::Url::parse(&provider.base_url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned))
                .unwrap_or_else(|| provider.base_url.clone());
            format!("{} at {host}", provider.kind.name())
        })
        .collect();
    eprintln!(
        "{}",
        crate::present::terminal_safe(&format!(
            "{sent} are sent to the model provider {} (REPRISE_LLM_PROVIDERS sets which)",
            receivers.join(", then if it fails to ")
        ))
    );
    let accounting = Store::open(store.path()).context("open the store for model accounting")?;
    let mut chain = crate::llm::ChainLlm::new(settings, accounting)?;
    chain.run_id = Some(run_id.to_owned());
    Ok(chain)
}

/// The strategies' prompt renderer: the templates in prompts/.
fn render_prompt() -> reprise_strategies::vanilla::RenderPrompt {
    Box::new(|name, values| crate::llm::prompt::render(name, values).map_err(Into::into))
}

/// The visual strategy: the classical segmenter, the Tesseract describer (or
/// the model, through the replay's one chain), and the segmentation cache in
/// the store.
fn visual_strategy(
    store: &Store,
    bundle: &reprise_models::RecordingBundle,
    trees: Vec<reprise_models::ActionEvent>,
    request: &ReplayRequest,
    llm: Option<SharedLlm>,
) -> Result<reprise_strategies::visual::VisualStrategy> {
    use reprise_strategies::analysis::Vision;
    use reprise_strategies::visual::prepare;
    let cache_store =
        Store::open(store.path()).context("open the store for the segmentation cache")?;
    let describer: Box<dyn reprise_strategies::describe::Describer> = match request.describer {
        // Tesseract starts while the recording is prepared and the screen
        // settles (it is waited for where it is first needed: a segment
        // described, or the strategy's first decision).
        DescriberChoice::Offline => Box::new(reprise_strategies::describe::OfflineDescriber::new(
            crate::vision::ocr::TesseractReader::start(),
        )),
        DescriberChoice::Llm => Box::new(reprise_strategies::describe::LlmDescriber::new(
            Box::new(llm.expect("the model describer has a model")),
            render_prompt(),
        )),
    };
    let mut vision = Vision {
        segmenter: Box::new(reprise_strategies::vision::classical::ClassicalSegmenter::default()),
        describer,
        cache: Some(
            reprise_strategies::vision::cache::SegmentationCache::strict(Box::new(
                crate::vision::cache::StoreRows::new(cache_store),
            )),
        ),
        stats: Default::default(),
    };
    let mut frame_of = |id: u32| -> Option<reprise_strategies::Frame> {
        let shot = bundle.screenshots.get(id as usize)?;
        let image = store.image(&shot.content_hash).ok()?;
        Some(reprise_strategies::Frame {
            image,
            screen: shot.screen,
        })
    };
    let frame_times: Vec<f64> = bundle
        .screenshots
        .iter()
        .map(|shot| shot.timestamp)
        .collect();
    let started = std::time::Instant::now();
    let steps = prepare(
        trees,
        &bundle.window_states,
        &mut frame_of,
        &frame_times,
        &mut vision,
    )
    .map_err(|err| {
        let text = format!("prepare the recording for visual replay: {err}");
        match err {
            // The model's answers could not be used, or it did not answer:
            // the providers failed (exit 5).
            reprise_strategies::analysis::AnalysisError::Describe(
                reprise_strategies::describe::DescribeError::Model(_),
            ) => anyhow::Error::new(crate::llm::LlmFailure(text)),
            _ => anyhow::anyhow!(text),
        }
    })?;
    tracing::debug!(
        ms = started.elapsed().as_millis(),
        segmentations = vision.stats.segmentations,
        cache_hits = vision.stats.cache_hits,
        "prepared the recording for visual replay"
    );
    Ok(
        reprise_strategies::visual::VisualStrategy::new(steps, vision, request.speed)
            .with_rungs(request.rungs)
            .with_windows(&bundle.window_states),
    )
}
