//! A segmenter that asks an external segmentation server over HTTP, for users
//! who run a SAM/FastSAM/OmniParser-style model. The window image goes out as
//! base64 PNG in JSON; masks come back either as a colour-coded PNG (one
//! colour per mask, black for none) or as polygons. A lossy image is refused:
//! compression invents colours, and so masks.

use base64::Engine as _;
use image::RgbaImage;
use reprise_strategies::vision::masks::{mask_from_polygon, masks_from_colours};
use reprise_strategies::vision::refine::{RefineOptions, refine};
use reprise_strategies::vision::{Mask, Segment, SegmentKind, Segmenter, VisionError, finish};
use serde_json::{Value, json};

pub struct HttpSegmenter {
    url: String,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

reprise_models::debug_showing!(HttpSegmenter, url);

impl HttpSegmenter {
    pub fn new(url: &str, timeout: std::time::Duration) -> anyhow::Result<HttpSegmenter> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = crate::llm::http::client_builder()
            .timeout(timeout)
            .build()?;
        Ok(HttpSegmenter {
            url: url.to_owned(),
            runtime,
            client,
        })
    }
}

/// Masks from the server's answer.
pub fn parse_answer(answer: &Value, width: u32, height: u32) -> Result<Vec<Mask>, VisionError> {
    let bad = |reason: &str| VisionError::BadMasks(reason.to_owned());
    match answer["format"].as_str() {
        Some("png_masks") => {
            let encoded = answer["masks"]
                .as_str()
                .ok_or_else(|| bad("no \"masks\" image"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|err| bad(&err.to_string()))?;
            if bytes.starts_with(&[0xFF, 0xD8]) {
                return Err(bad(
                    "the mask image is a JPEG: lossy compression invents colours; send a lossless PNG",
                ));
            }
            let image = crate::store::frames::decode_png(&bytes)
                .map_err(|err| bad(&format!("the mask image is not a PNG: {err}")))?;
            if image.dimensions() != (width, height) {
                return Err(bad(&format!(
                    "the mask image is {}x{}, the window {width}x{height}",
                    image.width(),
                    image.height()
                )));
            }
            masks_from_colours(&image)
        }
        Some("polygons") => {
            let polygons = answer["polygons"]
                .as_array()
                .ok_or_else(|| bad("no \"polygons\" list"))?;
            polygons
                .iter()
                .map(|polygon| {
                    let points: Vec<(f64, f64)> = polygon
                        .as_array()
                        .ok_or_else(|| bad("a polygon is not a list of points"))?
                        .iter()
                        .map(|point| Some((point[0].as_f64()?, point[1].as_f64()?)))
                        .collect::<Option<_>>()
                        .ok_or_else(|| bad("a point is not [x, y]"))?;
                    mask_from_polygon(&points, width, height)
                        .ok_or_else(|| bad("a polygon has no area inside the image"))
                })
                .collect()
        }
        other => Err(bad(&format!(
            "unknown format {other:?}: use png_masks or polygons"
        ))),
    }
}

impl Segmenter for HttpSegmenter {
    /// Masks from a server are cached apart from the built-in ones, and
    /// apart from another server's.
    fn cache_name(&self) -> String {
        format!("server:{}", self.url)
    }

    fn segment(&self, image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
        let (width, height) = image.dimensions();
        if width == 0 || height == 0 {
            return Err(VisionError::EmptyImage);
        }
        let png = crate::store::frames::encode_png(image);
        let body = json!({"image": base64::engine::general_purpose::STANDARD.encode(png), "width": width, "height": height});
        let answer: Value = self.runtime.block_on(async {
            let response = self
                .client
                .post(&self.url)
                .json(&body)
                .send()
                .await
                .map_err(|err| VisionError::Server(err.to_string()))?;
            let status = response.status();
            let text = response
                .text()
                .await
                .map_err(|err| VisionError::Server(err.to_string()))?;
            if !status.is_success() {
                return Err(VisionError::Server(format!(
                    "HTTP {}: {}",
                    status.as_u16(),
                    text.chars().take(200).collect::<String>()
                )));
            }
            serde_json::from_str(&text)
                .map_err(|err| VisionError::BadMasks(format!("the answer is not JSON: {err}")))
        })?;
        let candidates = parse_answer(&answer, width, height)?
            .into_iter()
            .filter_map(|mask| Segment::from_mask(SegmentKind::Region, mask))
            .collect();
        Ok(finish(refine(
            candidates,
            width,
            height,
            &RefineOptions::default(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Reply, ScriptedServer};
    use reprise_strategies::vision::PixelRect;

    /// A mask image of one red box (the masks' own tests are strategies').
    fn one_box() -> RgbaImage {
        RgbaImage::from_fn(100, 60, |x, y| {
            let inside = (10..40).contains(&x) && (10..30).contains(&y);
            image::Rgba(if inside {
                [255, 0, 0, 255]
            } else {
                [0, 0, 0, 255]
            })
        })
    }

    #[test]
    fn a_colour_coded_mask_over_real_http() {
        let mut png = Vec::new();
        one_box()
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let answer = json!({"format": "png_masks", "masks": base64::engine::general_purpose::STANDARD.encode(&png)});
        let server = ScriptedServer::start(vec![Reply::json(200, answer)]);
        let segmenter = HttpSegmenter::new(&server.url, std::time::Duration::from_secs(5)).unwrap();
        let segments = segmenter.segment(&RgbaImage::new(100, 60)).unwrap();
        let rects: Vec<PixelRect> = segments.iter().map(|segment| segment.rect).collect();
        let expected = PixelRect {
            x: 10,
            y: 10,
            width: 30,
            height: 20,
        };
        assert_eq!(rects, [expected]);
        let sent: Value = serde_json::from_str(&server.received()[0].body).unwrap();
        assert_eq!(
            (sent["width"].as_u64(), sent["height"].as_u64()),
            (Some(100), Some(60))
        );
    }

    #[test]
    fn polygons_and_refusals() {
        let triangle = json!({"format": "polygons", "polygons": [[[10, 10], [50, 10], [10, 50]]]});
        let masks = parse_answer(&triangle, 100, 100).unwrap();
        assert_eq!(masks.len(), 1);
        assert!(masks[0].get(12, 12) && !masks[0].get(45, 45));
        let jpeg = json!({"format": "png_masks", "masks": base64::engine::general_purpose::STANDARD.encode([0xFF, 0xD8, 0xFF, 0xE0])});
        assert!(
            parse_answer(&jpeg, 100, 100)
                .unwrap_err()
                .to_string()
                .contains("lossy")
        );
        let server =
            ScriptedServer::start(vec![Reply::json(500, json!({"error": "model not loaded"}))]);
        let segmenter = HttpSegmenter::new(&server.url, std::time::Duration::from_secs(5)).unwrap();
        assert!(
            segmenter
                .segment(&RgbaImage::new(10, 10))
                .unwrap_err()
                .to_string()
                .contains("HTTP 500")
        );
    }
}
