#!/usr/bin/env bash
# Records a person's task in LibreOffice Calc, whose sheet reports 2^31
# cells: a click on cell B3, a number typed, a click on B4, a formula typed,
# File → Save As… from the menu, the file's path typed into GTK's file
# chooser. While recording, Calc's answer times on the accessibility bus are
# sampled (answers.during), and once more after (answers.after). Then the
# task is replayed on a fresh Calc, whose sheet reports its boxes from a
# stale origin until its first click. Runs inside dbus-run-session on
# $DISPLAY; writes the saved files (recorded.ods, replayed.ods), the replay's
# exit code and messages (replay.code, replay.err) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
find_element() { "$SCRIPTS/a11y-find.py" soffice "$@"; }

accessibility_bus
export SAL_USE_VCLPLUGIN=gtk3 HOME=$OUT/home
mkdir -p "$HOME" "$OUT/Sheets"

# calc: a fresh Calc on a new sheet, maximized (as it opens on a screen this
# size), once its menu bar answers.
calc() {
  localc --norestore --nologo "-env:UserInstallation=file://$OUT/profile" \
    >>"$OUT/calc.log" 2>&1 &
  calc_pid=$!
  find_element menu File >/dev/null
  sleep 1
}
# saved FILE: waits (bounded) for Calc to write FILE, which it does a moment
# after its dialog closes.
saved() {
  for _ in $(seq 50); do
    [[ -s $1 ]] && return 0
    sleep 0.2
  done
}
# finish: ends Calc, its launcher and the office process it started (which
# would otherwise take the next Calc's window into itself), and its locks.
finish() {
  local profile="-env:UserInstallation=file://$OUT/profile"
  pkill -TERM -f -- "$profile" 2>/dev/null || true
  for _ in $(seq 50); do
    pgrep -f -- "$profile" >/dev/null || break
    sleep 0.2
  done
  pkill -KILL -f -- "$profile" 2>/dev/null || true
  wait "$calc_pid" 2>/dev/null || true
  rm -f "$OUT/Sheets/".~lock.*
}

# The task, as a person does it. The cells are where the screen shows
# them: Calc's own boxes for them are wrong until the first click.
task() {
  press 164 224 # B3
  sleep 0.4
  xdotool type --delay 80 "42"
  xdotool key Return
  sleep 0.4
  press 164 241 # B4
  sleep 0.4
  xdotool type --delay 80 "=B3*2"
  xdotool key Return
  sleep 0.4
  press $(find_element menu File)
  sleep 0.8
  press $(find_element "menu item" "Save As...")
  sleep 2
  xdotool type --delay 40 "$OUT/Sheets/recorded.ods"
  xdotool key Return
  # A person stops once the window shows the saved file's name.
  for _ in $(seq 50); do
    xdotool search --name "^recorded.ods - LibreOffice Calc" >/dev/null 2>&1 && break
    sleep 0.2
  done
  sleep 0.5
}

calc
"$SCRIPTS/a11y-answers.py" soffice 120 0.25 "$OUT/recorded.stop" >"$OUT/answers.during" &
answers=$!
start_recording calc
task
touch "$OUT/recorded.stop"
stop_recording
wait "$answers"
"$SCRIPTS/a11y-answers.py" soffice 2 0.25 >"$OUT/answers.after"
saved "$OUT/Sheets/recorded.ods"
finish
mv "$OUT/Sheets/recorded.ods" "$OUT/recorded.ods"

calc
replay_as replay calc
saved "$OUT/Sheets/recorded.ods"
finish
if [[ -e "$OUT/Sheets/recorded.ods" ]]; then
  mv "$OUT/Sheets/recorded.ods" "$OUT/replayed.ods"
fi
