//! `reprise segment` and `reprise screenshot`.

use anyhow::{Context as _, Result, bail};

use super::output::{print_json, print_text};
use crate::cli::{ScreenshotArgs, SegmentArgs};
use crate::settings::errors::UsageError;
use crate::store::Store;
use reprise_strategies::vision::{PixelRect, Segment};

pub fn segment(store_path: &std::path::Path, args: &SegmentArgs) -> Result<()> {
    let image = image::open(&args.image)
        .with_context(|| format!("read the image {}", args.image.display()))
        .map_err(|err| err.context(UsageError("the image must be a readable PNG".into())))?
        .into_rgba8();
    let target = args.target.as_deref().map(parse_target).transpose()?;
    let started = std::time::Instant::now();
    let segments = segmented(store_path, args, &image, target)?;
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
    let described = |segment: &Segment| {
        descriptions
            .as_ref()
            .map(|all| all[segment.id].text.clone())
    };
    if args.json {
        let listed: Vec<SegmentLine> = segments
            .iter()
            .map(|segment| SegmentLine {
                id: segment.id,
                kind: segment.kind,
                rect: segment.rect,
                centroid: segment.centroid,
                click_point: segment.click_point,
                parent: segment.parent,
                pixels: segment.mask.count(),
                description: described(segment),
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
        if let Some(description) = described(segment) {
            text.push_str(&format!("      {description}\n"));
        }
    }
    print_text(&text)
}

/// A segment as `reprise segment --json` lists it.
#[derive(serde::Serialize)]
struct SegmentLine {
    id: usize,
    kind: reprise_strategies::vision::SegmentKind,
    rect: PixelRect,
    centroid: (f64, f64),
    click_point: (u32, u32),
    parent: Option<usize>,
    pixels: u64,
    description: Option<String>,
}

/// `--target x,y,width,height`, in whole pixels.
fn parse_target(text: &str) -> Result<PixelRect> {
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
    Ok(PixelRect {
        x,
        y,
        width,
        height,
    })
}

/// The segments of `image`: from the store's cache where `--cache` finds
/// them, else from the segmenter (the server's, or the built-in one), kept
/// in the cache under the segmenter's own name where `--cache` is on.
fn segmented(
    store_path: &std::path::Path,
    args: &SegmentArgs,
    image: &image::RgbaImage,
    target: Option<PixelRect>,
) -> Result<Vec<Segment>> {
    let segmenter: Box<dyn reprise_strategies::vision::Segmenter> = match &args.server {
        Some(url) => Box::new(crate::vision::segment_server::HttpSegmenter::new(
            url,
            std::time::Duration::from_secs(60),
        )?),
        None => Box::new(reprise_strategies::vision::classical::ClassicalSegmenter::default()),
    };
    let name = segmenter.cache_name();
    let mut cache = if args.cache {
        let store = Store::open(store_path).context("open the store")?;
        Some(reprise_strategies::vision::cache::SegmentationCache::new(
            Box::new(crate::vision::cache::StoreRows::new(store)),
        ))
    } else {
        None
    };
    let probe = reprise_strategies::vision::cache::Probe::of(image);
    if let Some(cached) = cache
        .as_mut()
        .and_then(|cache| cache.lookup(&name, &probe, target))
    {
        eprintln!("cache hit: reusing segmentation {}", cached.id);
        return Ok(cached.segments.clone());
    }
    let segments = segmenter.segment(image)?;
    if let Some(cache) = cache.as_mut() {
        let id = cache.insert(&name, &probe, &segments);
        eprintln!(
            "cache miss: segmented and stored as segmentation {}",
            id.map_or("(not stored)".into(), |id| id.to_string())
        );
    }
    Ok(segments)
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
