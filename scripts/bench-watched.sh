#!/usr/bin/env bash
# What recording costs the watched application (figures go to
# BENCHMARKS.md). For each application (a GTK form, a GTK list of 50,000
# rows, Firefox on a page of 20,000 paragraphs, LibreOffice Calc) it runs a
# person's short task twice, first without and then with `reprise record`
# running, while `reprise bench answers` samples how long the application
# takes to answer on the accessibility bus. Prints a Markdown table: answer
# times (median, p95, max, and samples without an answer in 500 ms) and the
# task's wall time, without and with the recorder, and how many input
# events the recording holds against those the task sent.
# Usage: bash scripts/bench-watched.sh   (after cargo build; Firefox is
# measured when firefox-esr is installed)
set -euo pipefail
cd "$(dirname "$0")/.."
reprise=$PWD/target/debug/reprise
[[ -x $reprise ]] || { echo "error: build first (cargo build)" >&2; exit 1; }

if [[ ${1:-} != --inside ]]; then
  source scripts/display.sh
  start_private_display 1280x800
  mkdir -p "$work/runtime"
  chmod 700 "$work/runtime"
  XDG_RUNTIME_DIR=$work/runtime WORK=$work dbus-run-session -- bash "$0" --inside 2>"$work/errors" || { tail -5 "$work/errors" >&2; exit 1; }
  exit
fi

export REPRISE=$reprise REPRISE_STORE=$WORK/store.sqlite OMP_THREAD_LIMIT=1
dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
  org.freedesktop.DBus.Properties.Get string:org.a11y.Status string:IsEnabled >/dev/null
source tests/scenarios/recording.sh
OUT=$WORK

# Clicks at (X, Y) inside the active window.
click_in() {
  local geometry
  eval "$(xdotool getactivewindow getwindowgeometry --shell)"
  press $((X + $1)) $((Y + $2))
}

# measure APP NAME TASK: the task without and with the recorder, each while
# the application's answers are sampled; one table row.
measure() {
  local app=$1 name=$2 task=$3
  local row=$name events=- label
  label=bench-$(echo "$name" | tr -cd 'a-z0-9')
  for recording in off on; do
    if [[ $recording == on ]]; then
      start_recording "$label"
    fi
    "$reprise" bench answers "$app" --samples 25 --interval-ms 200 >"$WORK/answers" &
    local sampler=$! started
    started=$(date +%s.%N)
    "$task"
    "$task"
    local took
    took=$(echo "$(date +%s.%N) - $started" | bc)
    wait "$sampler"
    if [[ $recording == on ]]; then
      stop_recording
      local events
      events=$("$reprise" list --json | grep -A8 "\"name\": \"$label\"" |
        grep -o '"n_events": [0-9]*' | grep -o '[0-9]*$')
    fi
    # "APP: N samples, median A ms, p95 B ms, max C ms, K without an answer in time"
    local figures
    figures=$(sed -E 's/.*median ([^ ]+) ms, p95 ([^ ]+) ms, max ([^ ]+) ms, ([0-9]+) without.*/\1 | \2 | \3 | \4/' "$WORK/answers")
    row="$row | $figures | $(printf %.1f "$took") s"
  done
  echo "| $row | $events |"
}

# The tasks: a few presses and some typing, as a person does them.
form_task() {
  click_in 200 75; xdotool type --delay 60 "alice"; xdotool key Tab
  xdotool type --delay 60 "Tromsø"; click_in 200 75; xdotool key ctrl+a
  xdotool type --delay 60 "bob"; sleep 2
}
list_task() {
  click_in 150 80; xdotool key Down Down Down; sleep 0.5
  click_in 150 120; xdotool key Page_Down Page_Down; sleep 0.5
  click_in 150 100; xdotool type --delay 60 "Row 4"; sleep 2
}
firefox_task() {
  click_in 400 300; xdotool key Page_Down Page_Down Page_Down; sleep 0.5
  click_in 400 200; xdotool key End; sleep 0.5; xdotool key Home; sleep 0.5
  click_in 400 250; xdotool key ctrl+f; xdotool type --delay 60 "paragraph 99"
  xdotool key Escape; sleep 2
}
calc_task() {
  press 164 224; xdotool type --delay 80 "42"; xdotool key Return
  press 164 258; xdotool type --delay 80 "=B3*2"; xdotool key Return
  press 19 31; sleep 0.8; xdotool key Escape
  press 246 224; xdotool type --delay 80 "hello"; xdotool key Return; sleep 2
}

wait_for_app() { # the accessible application's name
  "$reprise" bench answers "$1" --samples 1 --interval-ms 0 >/dev/null 2>&1 && return 0
  for _ in $(seq 100); do
    "$reprise" bench answers "$1" --samples 1 --interval-ms 0 >/dev/null 2>&1 && return 0
    sleep 0.3
  done
  echo "error: $1 never showed on the accessibility bus" >&2
  return 1
}

echo "| application | median off | p95 off | max off | no answer off | task off | median on | p95 on | max on | no answer on | task on | events recorded |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"

zenity --forms --title "Visitor" --add-entry Name --add-entry City --add-password Code >/dev/null 2>&1 &
app=$!
wait_for_app zenity && sleep 1 && measure zenity "GTK form (zenity --forms)" form_task | grep '^|'
kill $app; wait $app 2>/dev/null || true

seq 50000 | sed 's/.*/Row &\nCity &/' | zenity --list --title People --column Name --column City \
  --width 600 --height 500 >/dev/null 2>&1 &
app=$!
wait_for_app zenity && sleep 2 && measure zenity "GTK list, 50,000 rows (zenity --list)" list_task | grep '^|'
kill $app; wait $app 2>/dev/null || true

if command -v firefox-esr >/dev/null; then
  seq 20000 | sed 's/.*/<p>paragraph & of a long page<\/p>/' >"$WORK/long.html"
  GNOME_ACCESSIBILITY=1 firefox-esr --new-instance --no-remote \
    --profile "$(mktemp -d)" "file://$WORK/long.html" >/dev/null 2>&1 &
  app=$!
  wait_for_app Firefox && sleep 5 && measure Firefox "Firefox, 20,000 paragraphs" firefox_task | grep '^|'
  kill $app; wait $app 2>/dev/null || true
fi

export SAL_USE_VCLPLUGIN=gtk3 HOME=$WORK/home
mkdir -p "$HOME"
localc --norestore --nologo "-env:UserInstallation=file://$WORK/profile" >/dev/null 2>&1 &
wait_for_app soffice && sleep 3 && measure soffice "LibreOffice Calc 7.4 (2^31 cells)" calc_task | grep '^|'
pkill -f -- "-env:UserInstallation=file://$WORK/profile" || true
