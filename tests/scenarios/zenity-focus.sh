#!/usr/bin/env bash
# Records typing into a third-party GTK form (zenity --forms: Name, then
# City) with no click: the Name entry has the focus when the form opens.
# Replays it on the same form (each value lands where it was typed), then on
# one whose fields come in the other order, where the focus opens on City:
# the keys for Name must not go to City. Runs inside dbus-run-session on
# $DISPLAY; writes into $OUT what zenity printed for each case (CASE.out)
# and each replay's exit code and messages (CASE.code, CASE.err).
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# form CASE FIRST SECOND: the form with these two entries, printing
# "first|second" into $OUT/CASE.out.
form() {
  zenity --forms --title Customer --text "New customer" --add-entry "$2" \
    --add-entry "$3" >"$OUT/$1.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
}

form recorded Name City
start_recording customer
xdotool type --delay 100 alice
sleep 0.3
xdotool key Tab
sleep 0.5
xdotool type --delay 100 Bergen
sleep 1
press $(find_element "push button" OK)
stop_recording
ended "$zenity_pid" 3

form same Name City
replay_as same customer
ended "$zenity_pid" 5

# The fields in the other order: the replay must type nothing; the form is
# then cancelled by hand, and prints nothing.
form swapped City Name
replay_as swapped customer
# (Had the replay typed and pressed OK, the form would be gone.)
if kill -0 "$zenity_pid" 2>/dev/null; then
  press $(find_element "push button" Cancel)
fi
ended "$zenity_pid" 3
