#!/usr/bin/env bash
# Records File → Save As in a third-party Qt 5 editor (FeatherPad): a click
# into the text, typing, a click on the File menu, a click on "Save As" in
# the menu's popup (an override-redirect window of its own), the file's path
# typed into the save dialog. Then replays it on a fresh FeatherPad whose
# window moved (case "replay"), and with DRIFTS=1, also at 1.25 times the
# scale ("scaled") and with larger fonts ("font"); DRIFTS=scaled, the
# first of these alone. Runs inside
# dbus-run-session on $DISPLAY; writes the saved files (recorded.txt,
# CASE.txt), each replay's exit code (CASE.code) and messages (CASE.err)
# into $OUT. RUNGS chooses the ladder.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/featherpad.sh"

mkdir -p "$OUT/Menu Notes"
editor 60 60
start_recording menu
press $(find_element text "")
xdotool type --delay 60 "hello menu"
sleep 0.5
press $(find_element "menu item" File)
sleep 0.8
press $(find_element "menu item" "Save As")
sleep 1.5
xdotool type --delay 60 "$OUT/Menu Notes/recorded.txt"
xdotool key Return
stop_recording
finish

mv "$OUT/Menu Notes/recorded.txt" "$OUT/recorded.txt"

# replay CASE X Y: the recording replayed on a fresh FeatherPad at (X, Y);
# the file it saved becomes $OUT/CASE.txt.
replay() {
  editor "$2" "$3"
  replay_as "$1" menu
  sleep 1
  finish
  if [[ -e "$OUT/Menu Notes/recorded.txt" ]]; then
    mv "$OUT/Menu Notes/recorded.txt" "$OUT/$1.txt"
  fi
}
replay replay 420 200
if [[ ${DRIFTS:-} == 1 || ${DRIFTS:-} == scaled ]]; then
  LOOK="QT_SCALE_FACTOR=1.25" replay scaled 200 60
fi
if [[ ${DRIFTS:-} == 1 ]]; then
  LOOK="QT_FONT_DPI=144" replay font 300 120
fi
