#!/usr/bin/env bash
# Records a click into a third-party GTK 3 text view (zenity --text-info
# --editable: an unnamed text area with no label), typing, and OK; then
# replays it with the window moved ("moved") and in the dark theme moved
# elsewhere ("dark"). Runs inside dbus-run-session on $DISPLAY; writes what
# zenity printed (CASE.out), each replay's exit code (CASE.code) and
# messages (CASE.err) into $OUT. Used by tests/identity.rs.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# notes CASE [X Y]: an empty editable text dialog printing its text into
# $OUT/CASE.out, its window moved to (X, Y) when given. LOOK may hold
# environment settings for zenity (a theme).
: >"$OUT/empty.txt"
notes() {
  env ${LOOK:-} zenity --text-info --editable --filename "$OUT/empty.txt" --title Notes \
    --width 500 --height 300 >"$OUT/$1.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
  if [[ $# -eq 3 ]]; then
    xdotool windowmove "$(xdotool search --onlyvisible --name Notes | head -1)" "$2" "$3"
    sleep 0.5
  fi
}

notes recorded
start_recording notes
press $(find_element text "")
xdotool type --delay 60 "hello gtk"
sleep 0.5
press $(find_element "push button" OK)
stop_recording
ended "$zenity_pid" 3

notes moved 420 260
replay_as moved notes
ended "$zenity_pid" 3
LOOK="GTK_THEME=Adwaita:dark" notes dark 100 100
replay_as dark notes
ended "$zenity_pid" 3
