#!/usr/bin/env bash
# Redraws the segmentation overlays under docs/ (outlines, ids and click
# points of every segment, drawn by `reprise segment --overlay`) for a person
# to check: the fixture, xcalc and gtk3-widget-factory (its first page), each
# on a private Xvfb.
# Usage: scripts/docs-overlays.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/display.sh
cargo build --release --locked --bin reprise
cargo build --locked -p reprise-fixture
built release
start_private_display 1600x1000

overlay() { # name: segments the active window's screenshot
  "$reprise" screenshot --active-window -o "$work/$1.png" >/dev/null
  "$reprise" segment "$work/$1.png" --overlay "docs/segments-$1.png" >/dev/null
  echo "docs/segments-$1.png"
}

target/debug/reprise-fixture >/dev/null 2>&1 &
pids+=($!)
sleep 2
overlay fixture
kill "${pids[-1]}"

xcalc >/dev/null 2>&1 &
pids+=($!)
wait_for 30 "xcalc's window" xdotool search --onlyvisible --class xcalc
xdotool windowactivate --sync "$(xdotool search --onlyvisible --class xcalc | head -1)" 2>/dev/null || true
sleep 0.5
overlay xcalc
kill "${pids[-1]}"

REPRISE=$reprise dbus-run-session -- bash scripts/gtk-capture.sh 1 "$work" 2>/dev/null
"$reprise" segment "$work/window.png" --overlay docs/segments-gtk3-widget-factory.png >/dev/null
echo docs/segments-gtk3-widget-factory.png
