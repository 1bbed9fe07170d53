#!/usr/bin/env bash
# Two monitors: records a pick in zenity's GTK list (a tree view of names
# and cities) with the dialog on the second monitor, then replays it with
# the dialog on the first monitor and its rows re-sorted, and on the second
# monitor at another place. Runs inside dbus-run-session on $DISPLAY;
# writes `reprise show` of the recording (pick.show) and, for each case NAME, what zenity printed (NAME.out), the replay's
# exit code (NAME.code) and its messages (NAME.err) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# list NAME X Y NAME1 CITY1 ...: a list dialog moved to X,Y, printing the
# chosen row into $OUT/NAME.out.
list() {
  local name=$1 x=$2 y=$3
  shift 3
  zenity --list --title Customers --height 420 --print-column=ALL \
    --column Name --column City "$@" >"$OUT/$name.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
  xdotool search --sync --onlyvisible --name '^Customers$' windowmove --sync "$x" "$y"
  sleep 0.5
}

finish() { ended "$zenity_pid" 3; }

list recorded 900 40 "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
record_pick
"$REPRISE" show pick >"$OUT/pick.show"

list first 60 80 "Maria Olsen" Tromsø "Per Hansen" Oslo "Maria Olsen" Bergen
replay_as first pick
finish
list second 1250 120 "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
replay_as second pick
finish
