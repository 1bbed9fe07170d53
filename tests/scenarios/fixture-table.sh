#!/usr/bin/env bash
# Records a pick in the fixture's table of customers (an AccessKit tree of
# rows of two table cells, as egui exposes it: a toolkit neither GTK nor
# Qt), then replays it against drifted tables. Runs inside dbus-run-session
# on $DISPLAY; writes, for each case NAME, what the fixture printed
# (NAME.out, the chosen row as NAME|CITY), the replay's exit code (NAME.code)
# and its messages (NAME.err) into $OUT. Used by tests/identity.rs and
# scripts/bench-identity.sh (RUNGS chooses the ladder there; FILLER adds
# that many rows below the big case's target).
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
FIXTURE=${FIXTURE:-$(dirname "$REPRISE")/reprise-fixture}

# AccessKit applications expose their tree only while the accessibility bus
# says it is enabled, as a screen reader sets it.
dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus \
  org.freedesktop.DBus.Properties.Set string:org.a11y.Status string:IsEnabled \
  variant:boolean:true >/dev/null

# The bus's address escapes a comma in its socket's path (the tests'
# runtime folder has one), which AccessKit's D-Bus library does not decode:
# the fixture is given the same socket by a path without one (in a folder
# of its own: $OUT may have a comma too).
address=$(dbus-send --session --print-reply=literal --dest=org.a11y.Bus /org/a11y/bus \
  org.a11y.Bus.GetAddress | tr -d ' ')
socket=${address#unix:path=}
socket=${socket%%,*}
if [[ $socket == *%* ]]; then
  link=$(mktemp -d)
  trap 'rm -rf "$link"' EXIT
  ln -s "$(printf '%b' "${socket//%/\\x}")" "$link/bus"
  export AT_SPI_BUS_ADDRESS="unix:path=$link/bus"
fi

find_element() { "$SCRIPTS/a11y-find.py" reprise-fixture "$@"; }

# table NAME [OPTIONS...] -- NAME1|CITY1 ...: the fixture's table of those
# rows, printing the chosen row into $OUT/NAME.out; OPTIONS go to the
# fixture (a place, a theme, a scale). Sets `table_pid`.
table() {
  local name=$1 args=()
  shift
  while [[ $1 != -- ]]; do
    args+=("$1")
    shift
  done
  shift
  for row in "$@"; do args+=(--row "$row"); done
  "$FIXTURE" --log "$OUT/$name.log" "${args[@]}" >"$OUT/$name.out" 2>>"$OUT/fixture.err" &
  table_pid=$!
  find_element "push button" Choose >/dev/null
}

# finish: the fixture's answer arrives, or it is closed after a refusal.
finish() { ended "$table_pid" 3; }

# The recording: Maria Olsen of Tromsø (not of Bergen), then Choose.
table recorded -- "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
start_recording pick
press $(find_element "table cell" "Maria Olsen" Tromsø)
sleep 0.8
press $(find_element "push button" Choose)
stop_recording
finish

# replay CASE [OPTIONS...] -- ROWS...: replays the pick against a table of
# ROWS in a window that moved (OPTIONS may move it elsewhere).
replay() {
  local name=$1
  shift
  table "$name" --x 260 --y 140 "$@"
  replay_as "$name" pick --json
  finish
}
# unchanged CASE -- ROWS...: the pick replayed on the window where it was
# recorded (the pace benchmark's unchanged screen).
unchanged() {
  table "$1" "${@:2}"
  replay_as "$1" pick --json
  finish
}
pace unchanged -- "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
replay same -- "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
# A near-namesake and the namesake of Bergen above the target, rows re-sorted.
replay decoys -- "Maria Olson|Tromsø" "Anne Berg|Oslo" "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
replay resorted -- "Maria Olsen|Tromsø" "Per Hansen|Oslo" "Maria Olsen|Bergen"
# The target gone; its namesake and a near-namesake stay.
replay removed -- "Maria Olsen|Bergen" "Maria Olson|Tromsø" "Per Hansen|Oslo"
# Two rows that nothing tells apart.
replay twins -- "Per Hansen|Oslo" "Maria Olsen|Tromsø" "Maria Olsen|Tromsø"
# Only a near-namesake in the target's row ("Olson" is not "Olsen").
replay near-namesake -- "Maria Olson|Tromsø" "Per Hansen|Oslo"
# Scrolled out of view: rows above push the target below the table's view
# (AccessKit keeps its box there, below the window): the wheel brings it in.
above=()
for ((row = 1; row <= 40; row++)); do above+=("Anne Berg $row|Oslo"); done
replay scrolled -- "${above[@]}" "Maria Olsen|Tromsø"
# Another look: the dark theme, and twice the scale, with a decoy above.
replay dark --theme dark -- "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
replay scale2 --scale 2 -- "Maria Olsen|Bergen" "Maria Olsen|Tromsø" "Per Hansen|Oslo"
# A big window: the decoys, then FILLER more rows (the window taller).
if [[ ${FILLER:-0} -gt 0 ]]; then
  replay big --height 700 --filler "$FILLER" -- "Maria Olsen|Bergen" "Per Hansen|Oslo" "Maria Olsen|Tromsø"
fi
