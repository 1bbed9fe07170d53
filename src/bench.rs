//! `reprise bench capture`: the cost of each part of taking a frame, measured
//! in one run on the live display so that the figures compare with each other
//! (this machine is noisy; only same-run comparisons mean much).

use std::time::Instant;

use anyhow::{Context as _, Result};
use reprise_models::screenshot::content_hash;

use crate::platform::WindowProbe;
use crate::platform::capture::ScreenCapture;
use crate::record::encode_png;

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

/// Measures capture, comparison, hashing and encoding; returns a report.
pub fn capture(n_frames: usize) -> Result<String> {
    let n = n_frames.max(3);
    let capture = ScreenCapture::primary().context("find the screen")?;
    let probe = WindowProbe::connect().context("connect to the display")?;
    let frame = capture.capture()?;
    let raw = probe.capture_raw()?;
    anyhow::ensure!(
        frame.as_raw() == raw.as_raw(),
        "xcap and GetImage disagree about the screen's pixels"
    );
    let (width, height) = frame.dimensions();
    let xcap_ms = median_ms(n, || Ok(capture.capture()?))?;
    let raw_ms = median_ms(n, || Ok(probe.capture_raw()?))?;
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
         compare with previous  {compare_ms:8.2} ms\n\
         content hash (SHA-256) {hash_ms:8.2} ms\n\
         PNG encode (fast, up)  {png_ms:8.2} ms, {png_bytes} bytes\n",
        1000.0 / xcap_ms
    ))
}
