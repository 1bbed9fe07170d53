#!/usr/bin/env bash
# Records a save in a third-party Qt 5 editor (FeatherPad): a click into the
# text, typing, the text marked as the outcome (the mark key, the pointer
# on it), a click on the toolbar's Save button, the file's path typed into
# Qt's save dialog. Then replays it on a fresh FeatherPad whose window
# moved, the file's path typed with capitals, and on one whose editor
# already holds a draft (the outcome check must halt the run before Save).
# Runs inside dbus-run-session on $DISPLAY; writes the saved files
# (recorded.txt, replayed.txt, drafted.txt), each replay's exit code
# (replay.code, drafted.code) and messages (replay.err, drafted.err) and
# the recorder's (recorded.err) into $OUT. RUNGS chooses the ladder.
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
xdotool key Scroll_Lock
sleep 1
press $(find_element "push button" Save)
sleep 1.5
xdotool type --delay 60 "$OUT/Saved Notes/recorded.txt"
xdotool key Return
stop_recording
finish
cp "$OUT/record.err" "$OUT/recorded.err"

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

# A draft already in the editor: the typing lands after it, and every
# step's own check passes (the text holds what was typed); the outcome
# check halts the run before Save.
editor 420 200
press $(find_element text "")
xdotool type --delay 60 "draft "
replay_as drafted save
sleep 1
finish
if [[ -e "$OUT/Saved Notes/recorded.txt" ]]; then
  mv "$OUT/Saved Notes/recorded.txt" "$OUT/drafted.txt"
fi
