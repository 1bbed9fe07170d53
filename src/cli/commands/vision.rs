//! `reprise segment` and `reprise screenshot`.

use anyhow::{Context as _, Result, bail};

use super::output::{print_json, print_text};
use crate::cli::{ScreenshotArgs, SegmentArgs};
use crate::settings::errors::UsageError;
use crate::store::Store;

pub fn segment(store_path: &std::path::Path, args: &SegmentArgs) -> Result<()> {
    let image = image::open(&args.image)
        .with_context(|| format!("read the image {}", args.image.display()))
        .map_err(|err| err.context(UsageError("the image must be a readable PNG".into())))?
        .into_rgba8();
    let target = match &args.target {
        None => None,
        Some(text) => {
            let numbers: Vec<u32> = text
                .split(',')
                .map(|part| part.trim().parse())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    UsageError(format!(
                        "--target takes x,y,width,height in whole pixels, not {text:?}"
                    ))
                })?;
            let [x, y, width, height] = numbers[..] else {
                bail!(UsageError(format!(
                    "--target takes four numbers, not {text:?}"
                )));
            };
            Some(reprise_strategies::vision::PixelRect {
                x,
                y,
                width,
                height,
            })
        }
    };
    let started = std::time::Instant::now();
    let segmenter: Box<dyn reprise_strategies::vision::Segmenter> = match &args.server {
        Some(url) => Box::new(crate::vision::segment_server::HttpSegmenter::new(
            url,
            std::time::Duration::from_secs(60),
        )?),
        None => Box::new(reprise_strategies::vision::classical::ClassicalSegmenter::default()),
    };
    // The cache name is the segmenter's own: masks from a server are kept
    // apart from the built-in ones.
    let name = segmenter.cache_name();
    let mut cache = if args.cache {
        let store = Store::open(store_path).context("open the store")?;
        Some(reprise_strategies::vision::cache::SegmentationCache::new(
            Box::new(crate::vision::cache::StoreRows::new(store)),
        ))
    } else {
        None
    };
    let probe = reprise_strategies::vision::cache::Probe::of(&image);
    let cached = cache
        .as_mut()
        .and_then(|cache| cache.lookup(&name, &probe, target));
    let segments = match &cached {
        Some(cached) => {
            eprintln!("cache hit: reusing segmentation {}", cached.id);
            cached.segments.clone()
        }
        None => {
            let segments = segmenter.segment(&image)?;
            if let Some(cache) = cache.as_mut() {
                let id = cache.insert(&name, &probe, &segments);
                eprintln!(
                    "cache miss: segmented and stored as segmentation {}",
                    id.map_or("(not stored)".into(), |id| id.to_string())
                );
            }
            segments
        }
    };
    let elapsed = started.elapsed();
    let descriptions = if args.describe {
        use reprise_strategies::describe::Describer as _;
        let reader = crate::vision::ocr::TesseractReader::new()?;
        let mut describer = reprise_strategies::describe::OfflineDescriber::new(reader);
        Some(describer.describe(&image, &segments)?)
    } else {
        None
    };
    if let Some(path) = &args.overlay {
        crate::present::overlay::draw(&image, &segments)
            .save_with_format(path, image::ImageFormat::Png)
            .with_context(|| format!("write {}", path.display()))?;
    }
    if args.json {
        let listed: Vec<serde_json::Value> = segments
            .iter()
            .map(|segment| {
                serde_json::json!({
                    "id": segment.id,
                    "kind": segment.kind,
                    "rect": segment.rect,
                    "centroid": segment.centroid,
                    "click_point": segment.click_point,
                    "parent": segment.parent,
                    "pixels": segment.mask.count(),
                    "description": descriptions.as_ref().map(|all| all[segment.id].text.clone()),
                })
            })
            .collect();
        return print_json(&listed);
    }
    let mut text = format!(
        "{} segments in {:.1} ms\n",
        segments.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    for segment in &segments {
        let rect = segment.rect;
        text.push_str(&format!(
            "{:>4}  {:<17} {:>5},{:<5} {:>4}x{:<4} click {},{}{}\n",
            segment.id,
            format!("{:?}", segment.kind),
            rect.x,
            rect.y,
            rect.width,
            rect.height,
            segment.click_point.0,
            segment.click_point.1,
            segment
                .parent
                .map_or(String::new(), |parent| format!("  in {parent}"))
        ));
        if let Some(all) = &descriptions {
            text.push_str(&format!("      {}\n", all[segment.id].text));
        }
    }
    print_text(&text)
}

pub fn screenshot(args: &ScreenshotArgs) -> Result<()> {
    let capture = crate::platform::capture::ScreenCapture::desktop()
        .context("find the screen (is DISPLAY set?)")?;
    let mut image = capture.capture()?;
    if args.active_window {
        let mut probe = crate::platform::WindowProbe::connect()?;
        let window = probe.active_window()?.context("no window is active")?;
        let (crop, _) = reprise_strategies::vision::scale::window_crop(
            &capture.geometry(),
            image.dimensions(),
            &window.rect,
        )
        .context("the active window is off the screen")?;
        image =
            image::imageops::crop_imm(&image, crop.x, crop.y, crop.width, crop.height).to_image();
    }
    image
        .save_with_format(&args.output, image::ImageFormat::Png)
        .with_context(|| format!("write {}", args.output.display()))?;
    println!(
        "wrote {}x{} pixels to {}",
        image.width(),
        image.height(),
        args.output.display()
    );
    Ok(())
}
