#!/usr/bin/env bash
# Inside a D-Bus session and on $DISPLAY: starts gtk3-widget-factory, shows
# page PAGE (1 to 3), and writes OUT/window.png (its window, taken by
# $REPRISE screenshot) and OUT/truth.json (its visible interactive widgets
# from AT-SPI, in window coordinates; scripts/a11y-truth.py). Used by the
# segmentation test and scripts/bench-gtk-recall.sh. GDK_SCALE and GTK_THEME
# pass through to the application.
# Usage: dbus-run-session -- scripts/gtk-capture.sh PAGE OUT
set -euo pipefail
page=$1 out=$2
reprise=${REPRISE:-reprise}
here=$(dirname "$0")
source "$here/gtk-app.sh"
trap 'kill ${app:-} 2>/dev/null || true' EXIT
start_widget_factory
xdotool windowactivate --sync "$win" 2>/dev/null || true
geometry() { xwininfo -id "$win" | awk -v key="$1" '$0 ~ key {print $NF}'; }
ox=$(geometry "Absolute upper-left X") oy=$(geometry "Absolute upper-left Y")
w=$(geometry "Width:") h=$(geometry "Height:")
if ((page > 1)); then # the page tabs sit in the header bar, 120 px apart (at scale 1)
  scale=${GDK_SCALE:-1}
  xdotool mousemove $((ox + w / 2 + (page - 2) * 120 * scale)) $((oy + 26 * scale)) click 1
fi
sleep 1.5
/usr/bin/python3 "$here/a11y-truth.py" gtk3-widget-factory "$ox" "$oy" "$w" "$h" "${GDK_SCALE:-1}" >"$out/truth.json"
"$reprise" screenshot --active-window -o "$out/window.png" >/dev/null
