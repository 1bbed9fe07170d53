#!/usr/bin/env python3
"""Makes the SSIM test pairs and scikit-image's reference values for them.

Run once (needs `pip install scikit-image`); the pairs and reference.json are
committed under strategies/testdata/ssim/, and the Rust tests compare with them.
"""
import json
import pathlib

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

out = pathlib.Path(__file__).resolve().parent.parent / "strategies" / "testdata" / "ssim"
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261130)
h, w = 64, 96


def ui():
    """A window-like image: panels, buttons, text-like strokes."""
    img = np.full((h, w), 240, np.uint8)
    img[8:20, 6:40] = 200
    img[8:20, 50:90] = 255
    img[30:44, 6:30] = 180
    for x in range(10, 36, 3):
        img[12:16, x] = 40
    for x in range(54, 80, 4):
        img[11:17, x:x + 2] = 30
    img[50:52, 4:92] = 120
    return img


def blur(img):
    padded = np.pad(img.astype(float), 1, mode="edge")
    acc = sum(padded[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3))
    return (acc / 9).round().astype(np.uint8)


gradient = np.tile(np.linspace(0, 255, w), (h, 1)).astype(np.uint8)
checker = ((np.indices((h, w)).sum(axis=0) // 4) % 2 * 255).astype(np.uint8)
pairs = {
    "identical": (ui(), ui()),
    "noise": (gradient, np.clip(gradient + rng.normal(0, 12, (h, w)), 0, 255).astype(np.uint8)),
    "shifted": (ui(), np.roll(ui(), 2, axis=1)),
    "brighter": (ui(), np.clip(ui().astype(int) + 30, 0, 255).astype(np.uint8)),
    "inverted": (ui(), 255 - ui()),
    "blurred": (checker, blur(checker)),
    "random": (rng.integers(0, 256, (h, w), dtype=np.uint8), rng.integers(0, 256, (h, w), dtype=np.uint8)),
    "button_changed": (ui(), np.where(np.arange(w)[None, :] < 45, ui(), 250).astype(np.uint8)),
}
reference = {}
for name, (a, b) in pairs.items():
    Image.fromarray(a).save(out / f"{name}_a.png")
    Image.fromarray(b).save(out / f"{name}_b.png")
    reference[name] = float(
        structural_similarity(a, b, gaussian_weights=True, sigma=1.5, use_sample_covariance=False, data_range=255)
    )
(out / "reference.json").write_text(json.dumps(reference, indent=2, sort_keys=True) + "\n")
print(json.dumps(reference, indent=2, sort_keys=True))
