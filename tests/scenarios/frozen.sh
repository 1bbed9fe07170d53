#!/usr/bin/env bash
# Records a person typing into a GTK dialog (zenity --entry) that stops
# answering: the dialog's process is stopped (SIGSTOP) before the press and
# the typing, and let go (SIGCONT) before Return. The recorder must back the
# dialog off after its first missed deadline and go on recording the input.
# Runs inside dbus-run-session on $DISPLAY; writes what zenity printed
# (recorded.out), the recorder's messages (record.err) and how long the
# press's hit-test and the recorder's stop took into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

zenity --entry --title Frozen --text Name >"$OUT/recorded.out" 2>/dev/null &
dialog=$!
entry=$(find_element text "")
start_recording frozen
kill -STOP "$dialog"
press $entry
sleep 1
xdotool type --delay 150 "abc"
sleep 1
kill -CONT "$dialog"
sleep 0.5
xdotool key Return
stop_recording
ended "$dialog" 10
