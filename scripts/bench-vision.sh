#!/usr/bin/env bash
# The vision engine's benchmark (figures in BENCHMARKS.md): segmentation of a
# 1920x1080 screenshot and of an 800x600 window against a plain imageproc Canny
# on the same images in the same run, SSIM, and a cache lookup among 1,000
# cached segmentations. The images are taken on a private Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --bin reprise
cargo build --locked -p reprise-fixture
source scripts/display.sh
built release
start_private_display 1920x1080
xcalc -geometry +1300+100 >/dev/null 2>&1 & pids+=($!)
xterm -geometry 80x24+1000+600 >/dev/null 2>&1 & pids+=($!)
sleep 0.5
target/debug/reprise-fixture --x 150 --y 100 --width 800 --height 600 >/dev/null 2>&1 & pids+=($!)
sleep 2
"$reprise" screenshot -o "$work/screen.png"
"$reprise" screenshot --active-window -o "$work/window.png"
"$reprise" bench segment "$work/screen.png" "$work/window.png"
