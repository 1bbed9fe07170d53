//! `reprise bench capture`: the cost of each part of taking a frame, measured
//! in one run on the live display so that the figures compare with each other
//! (this machine is noisy; only same-run comparisons mean much).

use std::time::Instant;

use anyhow::{Context as _, Result};
use reprise_models::screenshot::content_hash;

use super::output::print_text;
use crate::cli::BenchCommand;
use crate::platform::capture::ScreenCapture;
use crate::store::frames::encode_png;

/// `reprise bench`.
pub fn run(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Segment { screen, window } => print_text(&segment(&screen, &window)?),
        BenchCommand::Capture { frames } => print_text(&capture(frames)?),
        BenchCommand::Window { reads } => print_text(&window(reads)?),
        #[cfg(feature = "test-support")]
        BenchCommand::ModelServer => model_server(),
        BenchCommand::Answers {
            app,
            samples,
            interval_ms,
        } => print_text(&answers(&app, samples, interval_ms)?),
    }
}

/// Milliseconds per call of `work`, the median of `n` calls.
fn median_ms<T>(n: usize, mut work: impl FnMut() -> Result<T>) -> Result<f64> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        std::hint::black_box(work()?);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[n / 2])
}

/// The active window read whole and its id alone, the median of `reads`
/// of each, in one run; a line.
pub fn window(reads: usize) -> Result<String> {
    let n = reads.max(3);
    let mut probe = crate::platform::WindowProbe::connect().context("connect to the display")?;
    let whole = median_ms(n, || Ok(probe.active_window()?))?;
    let id = median_ms(n, || Ok(probe.active_window_id()?))?;
    Ok(format!(
        "the active window, median of {n} reads: whole {whole:.3} ms, its id alone {id:.3} ms\n"
    ))
}

/// Samples an accessible application's answer times; returns a one-line
/// report: the median, the 95th percentile, the slowest, and how many got no
/// answer within the reader's deadline.
pub fn answers(app: &str, n_samples: usize, interval_ms: u64) -> Result<String> {
    let samples = crate::platform::answer_times(
        app,
        n_samples.max(1),
        std::time::Duration::from_millis(interval_ms),
    )
    .context("sample the application's answers")?;
    let mut answered: Vec<f64> = samples
        .iter()
        .flatten()
        .map(|took| took.as_secs_f64() * 1000.0)
        .collect();
    answered.sort_by(f64::total_cmp);
    let missed = samples.len() - answered.len();
    let at = |quantile: f64| -> String {
        if answered.is_empty() {
            return "-".into();
        }
        let idx = ((answered.len() - 1) as f64 * quantile).round() as usize;
        format!("{:.1}", answered[idx])
    };
    Ok(format!(
        "{app}: {} samples, median {} ms, p95 {} ms, max {} ms, {missed} without an answer in time\n",
        samples.len(),
        at(0.5),
        at(0.95),
        at(1.0),
    ))
}

/// How many times a comparison of the capture paths is taken again while
/// the screen changes under it.
const STILL_TRIES: usize = 10;

/// Measures capture, comparison, hashing and encoding; returns a report.
pub fn capture(n_frames: usize) -> Result<String> {
    let n = n_frames.max(3);
    let capture = ScreenCapture::desktop().context("find the screen")?;
    // xcap takes one monitor a frame, the recorder the whole desktop.
    anyhow::ensure!(
        capture.monitors().len() < 2,
        "this display has {} monitors: xcap captures one of them, so its frames cannot be compared with the recorder's; measure on a display with one",
        capture.monitors().len()
    );
    // The paths are compared on a still screen: a pass whose xcap frames
    // before and after differ (a window still drawing) is taken again, a
    // bounded number of times.
    let mut still = 0;
    let frame = loop {
        let frame = capture.capture_xcap()?;
        let raw = capture
            .capture_raw()
            .context("this display has no raw GetImage path to compare with xcap")??;
        let taken = capture.capture()?;
        let again = capture.capture_xcap()?;
        if frame.as_raw() != again.as_raw() && still < STILL_TRIES {
            still += 1;
            std::thread::sleep(std::time::Duration::from_millis(200));
            continue;
        }
        anyhow::ensure!(
            frame.as_raw() == raw.as_raw() && frame.as_raw() == taken.as_raw(),
            "xcap and GetImage disagree about the screen's pixels"
        );
        break frame;
    };
    let (width, height) = frame.dimensions();
    let xcap_ms = median_ms(n, || Ok(capture.capture_xcap()?))?;
    let raw_ms = median_ms(n, || Ok(capture.capture_raw().context("no raw path")??))?;
    let taken_ms = median_ms(n, || Ok(capture.capture()?))?;
    let copy = frame.clone();
    let compare_ms = median_ms(n, || {
        anyhow::ensure!(
            std::hint::black_box(copy.as_raw() == frame.as_raw()),
            "frames differ"
        );
        Ok(())
    })?;
    let hash_ms = median_ms(n, || Ok(content_hash(width, height, frame.as_raw())))?;
    let mut png_bytes = 0;
    let png_ms = median_ms(n, || {
        png_bytes = encode_png(&frame).len();
        Ok(())
    })?;
    Ok(format!(
        "screen {width}x{height}, median of {n} runs each\n\
         xcap capture           {xcap_ms:8.2} ms/frame  ({:.0} frames/s)\n\
         raw x11rb GetImage     {raw_ms:8.2} ms/frame  (the reference; byte-identical pixels)\n\
         the recorder's capture {taken_ms:8.2} ms/frame  (through {})\n\
         compare with previous  {compare_ms:8.2} ms\n\
         content hash (BLAKE3)  {hash_ms:8.2} ms\n\
         PNG encode (fast, up)  {png_ms:8.2} ms, {png_bytes} bytes\n",
        1000.0 / xcap_ms,
        capture.backend()
    ))
}

/// Measures segmentation against a plain Canny on the same image, SSIM, and a
/// cache lookup among 1,000 cached segmentations; returns a report.
pub fn segment(image_path: &std::path::Path, window_path: &std::path::Path) -> Result<String> {
    use reprise_strategies::vision::Segmenter as _;
    let mut report = String::new();
    let segmenter = reprise_strategies::vision::classical::ClassicalSegmenter::default();
    for path in [image_path, window_path] {
        let image = image::open(path)
            .with_context(|| format!("read {}", path.display()))?
            .into_rgba8();
        let gray = image::imageops::grayscale(&image);
        let mut n_segments = 0;
        let segment_ms = median_ms(7, || {
            let segments = segmenter.segment(&image)?;
            n_segments = segments.len();
            Ok(segments)
        })?;
        let canny_ms = median_ms(7, || Ok(imageproc::edges::canny(&gray, 50.0, 100.0)))?;
        report.push_str(&format!(
            "{} ({}x{}): segmentation {segment_ms:.1} ms ({n_segments} segments); imageproc canny(50, 100) {canny_ms:.1} ms\n",
            path.display(),
            image.width(),
            image.height()
        ));
    }
    let window = image::open(window_path)?.into_rgba8();
    let mut changed = window.clone();
    for x in 10..60 {
        changed.put_pixel(x, 10, image::Rgba([0, 0, 0, 255]));
    }
    let ssim_ms = median_ms(15, || {
        Ok(reprise_strategies::vision::ssim::ssim_images(
            &window, &changed, 128,
        ))
    })?;
    report.push_str(&format!(
        "SSIM of two {}x{} window images (on 128-pixel thumbnails): {ssim_ms:.2} ms\n",
        window.width(),
        window.height()
    ));

    let dir = tempfile_dir()?;
    let store_path = dir.join("bench-cache.sqlite");
    let store = crate::store::Store::open(&store_path)?;
    let mut cache = reprise_strategies::vision::cache::SegmentationCache::new(Box::new(
        crate::vision::cache::StoreRows::new(store),
    ));
    let probe_of = reprise_strategies::vision::cache::Probe::of;
    let segments = segmenter.segment(&window)?;
    let variant = |seed: u32| {
        let mut image = window.clone();
        // A different small mark in each: near-identical screens, as a cache
        // fills up over many replays.
        for dx in 0..8 {
            let x = (seed * 7 + dx) % image.width();
            let y = (seed * 13) % image.height();
            image.put_pixel(x, y, image::Rgba([(seed % 255) as u8, 0, 0, 255]));
        }
        image
    };
    for seed in 0..1000 {
        let image = variant(seed);
        cache.insert("bench", &probe_of(&image), &segments);
    }
    let bytes = std::fs::metadata(&store_path)?.len()
        + std::fs::metadata(store_path.with_extension("sqlite-wal")).map_or(0, |meta| meta.len());
    let probe = variant(5000);
    // A lookup's cost includes its probe (thumbnail and hash).
    let lookup_ms = median_ms(15, || Ok(cache.lookup("bench", &probe_of(&probe), None)))?;
    let hit = cache.lookup("bench", &probe_of(&probe), None).is_some();
    report.push_str(&format!(
        "cache lookup among 1,000 cached segmentations: {lookup_ms:.2} ms ({}); store {:.1} KiB per cached segmentation (image, thumbnail, segments)\n",
        if hit { "hit" } else { "miss" },
        bytes as f64 / 1000.0 / 1024.0
    ));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(report)
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("reprise-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Serves the stand-in model ([`crate::testing::stand_in_model`]) until the
/// process is stopped; prints its base URL first.
#[cfg(feature = "test-support")]
pub fn model_server() -> Result<()> {
    use reprise_strategies::describe::TextReader as _;
    let mut reader = crate::vision::ocr::TesseractReader::new()?;
    let server =
        crate::testing::ScriptedServer::answering(crate::testing::stand_in_model(move |crop| {
            reader.read(crop)
        }));
    println!("{}", server.url);
    std::io::Write::flush(&mut std::io::stdout())?;
    loop {
        std::thread::park();
    }
}
