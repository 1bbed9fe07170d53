#!/usr/bin/env bash
# openadapt-flow's qualification, for record/replay: a text typed into an
# entry and saved by a button (scripts/save-entry.py, GTK 3), recorded
# once, then replayed on the window as recorded (clean), with a twin Save
# button nothing tells apart (twin: it must refuse), with the button in
# another container and place (replaced), and with the button shown 2 s
# after the window (late), and disabled (a press saves nothing: the run
# must not say it did); ROUNDS times each (default 1). Runs inside
# dbus-run-session on $DISPLAY; judged by the file the application wrote:
# $OUT/CASE-ROUND.saved (absent when nothing was saved), with each replay's
# exit code (.code), messages (.err) and steps (.stdout). Used by
# tests/trust.rs and scripts/bench-qualification.sh.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
find_element() { "$SCRIPTS/a11y-find.py" save-entry.py "$@"; }

accessibility_bus

# app CASE MODE: the window in MODE, saving into $OUT/CASE.saved. Sets app_pid.
app() {
  "$SCRIPTS/save-entry.py" "$OUT/$1.saved" "$2" 2>>"$OUT/app.err" &
  app_pid=$!
  find_element text "" >/dev/null
  if [[ $2 != late ]]; then find_element "push button" Save >/dev/null; fi
}

app recorded clean
start_recording save
press $(find_element text "")
sleep 0.5
xdotool type --delay 80 "hello qual"
sleep 0.8
press $(find_element "push button" Save)
stop_recording
ended "$app_pid" 1

# clean CASE: the unchanged case.
clean() {
  app "$1" clean
  replay_as "$1" save --json
  ended "$app_pid" 1
}
pace clean
for ((round = 1; round <= ${ROUNDS:-1}; round++)); do
  for mode in clean twin replaced late disabled; do
    app "$mode-$round" "$mode"
    replay_as "$mode-$round" save --json
    ended "$app_pid" 1
  done
done
