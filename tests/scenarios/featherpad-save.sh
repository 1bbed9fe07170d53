#!/usr/bin/env bash
# Records a save in a third-party Qt 5 editor (FeatherPad): a click into the
# text, typing, the text marked as the outcome (the mark key, the pointer
# on it), a click on the toolbar's Save button, the file's path typed into
# Qt's save dialog. Then replays it on a fresh FeatherPad whose window
# moved, the file's path typed with capitals, and on one whose editor
# already holds a draft (the outcome check must halt the run before Save).
# Then replays it where the save dialog is closed (Escape) once Save opened
# it, before the path is typed (the run must halt there, the path typed
# nowhere), brings the dialog back and resumes the run (`dismissed`, then
# `resumed`: the file holds the text typed once). Runs inside
# dbus-run-session on $DISPLAY; writes the saved files (recorded.txt,
# replayed.txt, drafted.txt, resumed.txt), each replay's exit code (CASE.code)
# and messages (CASE.err) and the recorder's (recorded.err) into $OUT.
# RUNGS chooses the ladder.
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

# The save dialog closed (Escape, as a person or another program might)
# once the replay says the press on Save opened it (its 5th step's line),
# before the path is typed: the replay runs at half the recorded pace, so
# the close comes in the 3 s before the path.
editor 420 200
(
  for _ in $(seq 600); do
    if grep -qE '"step": ?4,' "$OUT/dismissed.stdout" 2>/dev/null; then
      dialog=$(xdotool search --onlyvisible --name "^Save as" 2>/dev/null | head -1) || true
      [[ -n $dialog ]] && xdotool windowactivate --sync "$dialog" key Escape
      break
    fi
    sleep 0.05
  done
) &
closer=$!
replay_as dismissed save --json --speed 0.5
wait "$closer" 2>/dev/null || true
ls "$OUT/Saved Notes" >"$OUT/dismissed.saved"
# The dialog brought back, and the run resumed from where it halted.
xdotool windowactivate --sync "$(xdotool search --onlyvisible --class featherpad | head -1)" key ctrl+s
for _ in $(seq 100); do
  xdotool search --onlyvisible --name "^Save as" >/dev/null 2>&1 && break
  sleep 0.1
done
sleep 0.5
run_as resumed "$REPRISE" resume last
sleep 1
finish
if [[ -e "$OUT/Saved Notes/recorded.txt" ]]; then
  mv "$OUT/Saved Notes/recorded.txt" "$OUT/resumed.txt"
fi
