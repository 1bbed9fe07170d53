//! Structural similarity as defined by Wang et al. (2004): an 11x11 Gaussian
//! window (sigma 1.5), K1 = 0.01, K2 = 0.03, on luminance, averaged over the
//! image less a 5-pixel border. It matches scikit-image's
//! `structural_similarity(gaussian_weights=True, sigma=1.5,
//! use_sample_covariance=False, data_range=255)`, whose filter reflects at
//! the edges. Images are downscaled first for speed.

use super::luma;
use image::RgbaImage;

/// A grayscale image of `f64` values in 0..=255.
#[derive(Debug, Clone, PartialEq)]
pub struct Gray {
    pub width: usize,
    pub height: usize,
    pub values: Vec<f64>,
}

/// The integer factor that brings the longer side within `max_side`.
fn shrink_factor(width: usize, height: usize, max_side: usize) -> usize {
    width.max(height).div_ceil(max_side.max(1)).max(1)
}

/// Area averages of `factor` x `factor` blocks of a `width` x `height` image
/// whose value at a pixel index is `value_at(index)`.
fn block_averages(
    width: usize,
    height: usize,
    factor: usize,
    value_at: impl Fn(usize) -> f64,
) -> Gray {
    let (small_width, small_height) = (width / factor, height / factor);
    let mut values = vec![0.0; small_width * small_height];
    for y in 0..small_height {
        for x in 0..small_width {
            let mut sum = 0.0;
            for dy in 0..factor {
                let row = (y * factor + dy) * width;
                for dx in 0..factor {
                    sum += value_at(row + x * factor + dx);
                }
            }
            values[y * small_width + x] = sum / (factor * factor) as f64;
        }
    }
    Gray {
        width: small_width,
        height: small_height,
        values,
    }
}

impl Gray {
    /// Luminance with the ITU-R BT.601 weights.
    pub fn luminance(image: &RgbaImage) -> Gray {
        let values = image
            .pixels()
            .map(|pixel| {
                let [r, g, b, _] = pixel.0;
                luma(r, g, b)
            })
            .collect();
        Gray {
            width: image.width() as usize,
            height: image.height() as usize,
            values,
        }
    }

    /// `Gray::luminance(image).downscaled(max_side)`, value for value, without
    /// the full-size luminance image in between (a thumbnail of a 1080p frame
    /// would otherwise allocate 16 MB).
    pub fn luminance_downscaled(image: &RgbaImage, max_side: usize) -> Gray {
        let (width, height) = (image.width() as usize, image.height() as usize);
        let factor = shrink_factor(width, height, max_side);
        if factor == 1 {
            return Gray::luminance(image);
        }
        let raw = image.as_raw();
        block_averages(width, height, factor, |idx| {
            luma(raw[idx * 4], raw[idx * 4 + 1], raw[idx * 4 + 2])
        })
    }

    pub fn from_luma8(image: &image::GrayImage) -> Gray {
        Gray {
            width: image.width() as usize,
            height: image.height() as usize,
            values: image.pixels().map(|pixel| f64::from(pixel.0[0])).collect(),
        }
    }

    /// Shrunk by an integer factor (area average) so that no side exceeds
    /// `max_side`; unchanged when already small enough.
    pub fn downscaled(&self, max_side: usize) -> Gray {
        let factor = shrink_factor(self.width, self.height, max_side);
        if factor == 1 {
            return self.clone();
        }
        block_averages(self.width, self.height, factor, |idx| self.values[idx])
    }
}

const SIGMA: f64 = 1.5;
/// scikit-image's `truncate=3.5` gives a radius of int(3.5 * 1.5 + 0.5) = 5.
const RADIUS: usize = 5;

fn kernel() -> [f64; 2 * RADIUS + 1] {
    let mut weights = [0.0; 2 * RADIUS + 1];
    for (idx, weight) in weights.iter_mut().enumerate() {
        let x = idx as f64 - RADIUS as f64;
        *weight = (-x * x / (2.0 * SIGMA * SIGMA)).exp();
    }
    let total: f64 = weights.iter().sum();
    weights.map(|weight| weight / total)
}

/// scipy's "reflect" mode: (d c b a | a b c d | d c b a).
fn reflect(idx: isize, len: usize) -> usize {
    let len = len as isize;
    let period = 2 * len;
    let mut idx = idx.rem_euclid(period);
    if idx >= len {
        idx = period - 1 - idx;
    }
    idx as usize
}

/// For each position along an axis of `len`, the reflected index of each
/// kernel tap: computed once, not per tap and pixel.
fn tap_indices(len: usize) -> Vec<[usize; 2 * RADIUS + 1]> {
    (0..len)
        .map(|at| std::array::from_fn(|k| reflect(at as isize + k as isize - RADIUS as isize, len)))
        .collect()
}

fn gaussian(values: &[f64], width: usize, height: usize) -> Vec<f64> {
    let weights = kernel();
    let (columns, rows) = (tap_indices(width), tap_indices(height));
    let mut horizontal = vec![0.0; values.len()];
    for y in 0..height {
        let row = &values[y * width..(y + 1) * width];
        for (x, taps) in columns.iter().enumerate() {
            let mut sum = 0.0;
            for (weight, &xx) in weights.iter().zip(taps) {
                sum += weight * row[xx];
            }
            horizontal[y * width + x] = sum;
        }
    }
    let mut out = vec![0.0; values.len()];
    for (y, taps) in rows.iter().enumerate() {
        for x in 0..width {
            let mut sum = 0.0;
            for (weight, &yy) in weights.iter().zip(taps) {
                sum += weight * horizontal[yy * width + x];
            }
            out[y * width + x] = sum;
        }
    }
    out
}

/// The mean SSIM of two grayscale images of the same size; `None` when the
/// sizes differ or the images are too small for the window.
pub fn ssim(a: &Gray, b: &Gray) -> Option<f64> {
    if a.width != b.width || a.height != b.height || a.width <= 2 * RADIUS || a.height <= 2 * RADIUS
    {
        return None;
    }
    let (width, height) = (a.width, a.height);
    let product = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(p, q)| p * q).collect::<Vec<_>>();
    let mean_a = gaussian(&a.values, width, height);
    let mean_b = gaussian(&b.values, width, height);
    let mean_aa = gaussian(&product(&a.values, &a.values), width, height);
    let mean_bb = gaussian(&product(&b.values, &b.values), width, height);
    let mean_ab = gaussian(&product(&a.values, &b.values), width, height);
    let c1 = (0.01f64 * 255.0).powi(2);
    let c2 = (0.03f64 * 255.0).powi(2);
    let mut total = 0.0;
    let mut n = 0usize;
    for y in RADIUS..height - RADIUS {
        for x in RADIUS..width - RADIUS {
            let idx = y * width + x;
            let (ua, ub) = (mean_a[idx], mean_b[idx]);
            let va = mean_aa[idx] - ua * ua;
            let vb = mean_bb[idx] - ub * ub;
            let cov = mean_ab[idx] - ua * ub;
            total += ((2.0 * ua * ub + c1) * (2.0 * cov + c2))
                / ((ua * ua + ub * ub + c1) * (va + vb + c2));
            n += 1;
        }
    }
    Some(total / n as f64)
}

/// The SSIM of two window images on their luminance, downscaled so that no
/// side exceeds `max_side`; 0 when their sizes differ.
pub fn ssim_images(a: &RgbaImage, b: &RgbaImage, max_side: usize) -> f64 {
    if a.dimensions() != b.dimensions() {
        return 0.0;
    }
    let a = Gray::luminance_downscaled(a, max_side);
    let b = Gray::luminance_downscaled(b, max_side);
    ssim(&a, &b).unwrap_or_else(|| if a == b { 1.0 } else { 0.0 })
}

#[cfg(test)]
mod tests;
