#!/usr/bin/env bash
# Records a save in a third-party Qt 5 editor (FeatherPad): a click into the
# text, typing, a click on the toolbar's Save button, the file's path typed
# into Qt's save dialog. Then replays it on a fresh FeatherPad whose window
# moved, the file's path typed with capitals. Runs inside dbus-run-session on $DISPLAY; writes the saved files
# (recorded.txt, replayed.txt), the replay's exit code (replay.code) and
# messages (replay.err) into $OUT. RUNGS chooses the ladder.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/featherpad.sh"

# The file goes into a folder whose name has capitals: typing it holds Shift.
mkdir -p "$OUT/Saved Notes"
editor 60 60
start_recording save
press $(find_element text "")
xdotool type --delay 60 "hello qt"
sleep 0.5
press $(find_element "push button" Save)
sleep 1.5
xdotool type --delay 60 "$OUT/Saved Notes/recorded.txt"
xdotool key Return
stop_recording
finish

# The replay writes the file the recording named: move the recorded one out.
mv "$OUT/Saved Notes/recorded.txt" "$OUT/recorded.txt"
editor 420 200
replay_as replay save
sleep 1
finish
# What the replay saved, if anything.
if [[ -e "$OUT/Saved Notes/recorded.txt" ]]; then
  mv "$OUT/Saved Notes/recorded.txt" "$OUT/replayed.txt"
fi
