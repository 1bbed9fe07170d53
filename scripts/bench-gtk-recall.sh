#!/usr/bin/env bash
# Segmentation quality on a third-party application: gtk3-widget-factory
# (Debian's gtk-3-examples), with the ground truth read from its AT-SPI tree
# (scripts/a11y-truth.py). Recall: the share of visible interactive widgets
# that some segment matches with IoU >= 0.5; precision in the same terms.
# Each page as it is, in the dark theme, and at scale 2 (GDK_SCALE=2: a
# HiDPI window of twice the pixels); the segmenter is tuned on none of these
# but the first.
# Usage: [BASELINE=older-reprise] scripts/bench-gtk-recall.sh [release|debug]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
bash scripts/setup-debian.sh # gtk-3-examples and python3-pyatspi among the rest
if [[ $profile == release ]]; then cargo build --release --locked --bin reprise; else cargo build --locked --bin reprise; fi
reprise=$PWD/target/$profile/reprise
source scripts/display.sh
start_private_display 3200x1800 # room for the window at scale 2

measure() { # label, page (1 to 3), then NAME=VALUE settings for the application
  local label=$1 page=$2 w h
  shift 2
  # The application and the reader of its tree share one session bus.
  env "$@" REPRISE="$reprise" dbus-run-session -- bash scripts/gtk-capture.sh "$page" "$work" 2>/dev/null
  read -r w h < <(python3 -c "import struct, sys; d = open(sys.argv[1], 'rb').read(24); print(*struct.unpack('>II', d[16:24]))" "$work/window.png")
  local started ended bin tag
  # With BASELINE=older-reprise, that build segments the same capture too.
  for bin in "$reprise" ${BASELINE:+"$BASELINE"}; do
  tag=$([[ $bin == "$reprise" ]] && echo "" || echo " (before)")
  started=$(date +%s.%N)
  "$bin" segment "$work/window.png" --json >"$work/segments.json"
  ended=$(date +%s.%N)
  python3 - "$work/truth.json" "$work/segments.json" "$label$tag" "${w}x${h}" "$(echo "($ended - $started) * 1000" | bc | cut -d. -f1)" <<'PY'
import collections, json, sys
truth = json.load(open(sys.argv[1]))
segments = [s["rect"] for s in json.load(open(sys.argv[2]))]
boxes = [[r["x"], r["y"], r["width"], r["height"]] if isinstance(r, dict) else r for r in segments]
def iou(a, b):
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    overlap = max(0, x1 - x0) * max(0, y1 - y0)
    return overlap / (a[2] * a[3] + b[2] * b[3] - overlap)
found = [t for t in truth if any(iou(t["rect"], b) >= 0.5 for b in boxes)]
matching = [b for b in boxes if any(iou(t["rect"], b) >= 0.5 for t in truth)]
by_role = collections.Counter(t["role"] for t in truth)
found_by_role = collections.Counter(t["role"] for t in found)
roles = ", ".join(f"{role} {found_by_role[role]}/{n}" for role, n in by_role.most_common())
print(f"| {sys.argv[3]} | {sys.argv[4]} | {len(truth)} | {len(found) / len(truth):.2f} | {len(matching) / len(boxes):.2f} | {sys.argv[5]} ms | {roles} |")
PY
  done
}
echo "| gtk3-widget-factory | window | widgets | recall | precision | segmentation (with process start) | found per role |"
echo "|---|---|---|---|---|---|---|"
for page in 1 2 3; do measure "page $page" $page; done
for page in 1 2 3; do measure "page $page, dark theme" $page GTK_THEME=Adwaita:dark; done
for page in 1 2 3; do measure "page $page, scale 2" $page GDK_SCALE=2; done
