//! SSIM against scikit-image's `structural_similarity` on committed pairs
//! (`strategies/testdata/ssim/`, made by `scripts/ssim-reference.py`).

use super::*;

#[test]
fn agrees_with_scikit_image_within_a_hundredth() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/ssim");
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).unwrap())
            .unwrap();
    let pairs = reference.as_object().unwrap();
    assert!(pairs.len() >= 6);
    for (name, expected) in pairs {
        let load = |suffix: &str| {
            Gray::from_luma8(
                &image::open(dir.join(format!("{name}_{suffix}.png")))
                    .unwrap()
                    .into_luma8(),
            )
        };
        let value = ssim(&load("a"), &load("b")).unwrap();
        let expected = expected.as_f64().unwrap();
        assert!(
            (value - expected).abs() < 0.01,
            "{name}: {value} against scikit-image's {expected}"
        );
    }
}

#[test]
fn identical_is_one_and_sizes_must_match() {
    let image = RgbaImage::from_fn(64, 48, |x, y| {
        image::Rgba([(x * 4) as u8, (y * 5) as u8, 7, 255])
    });
    assert!((ssim_images(&image, &image, 256) - 1.0).abs() < 1e-12);
    assert_eq!(ssim_images(&image, &RgbaImage::new(10, 10), 256), 0.0);
}

#[test]
fn the_direct_thumbnail_equals_luminance_then_downscale() {
    let image = RgbaImage::from_fn(333, 217, |x, y| {
        image::Rgba([
            (x * 7 % 256) as u8,
            (y * 3 % 256) as u8,
            ((x + y) % 256) as u8,
            255,
        ])
    });
    for side in [16, 64, 128, 400] {
        assert_eq!(
            Gray::luminance_downscaled(&image, side),
            Gray::luminance(&image).downscaled(side),
            "{side}"
        );
    }
}
