#!/usr/bin/env bash
# Records a pick in a third-party GTK list (zenity --list: a tree view of
# names and cities), then replays it against drifted lists. Runs inside
# dbus-run-session on $DISPLAY; writes, for each case NAME, what zenity
# printed (NAME.out), the replay's exit code (NAME.code) and its messages
# (NAME.err) into $OUT. Used by tests/identity.rs and
# scripts/bench-identity.sh (RUNGS chooses the ladder there; FILLER adds
# that many rows below the big case's target).
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# list NAME NAME1 CITY1 NAME2 CITY2 ...: a list dialog tall enough to show
# every row, printing the chosen row into $OUT/NAME.out. LOOK may hold
# environment settings for zenity (a theme, a scale).
list() {
  local name=$1
  shift
  env ${LOOK:-} zenity --list --title Customers --height "${HEIGHT:-420}" --print-column=ALL \
    --column Name --column City "$@" >"$OUT/$name.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
}

# finish: zenity's answer arrives, or the dialog is closed after a refusal.
finish() { ended "$zenity_pid" 3; }

# The recording: Maria Olsen of Tromsø (not of Bergen), then OK.
list recorded "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
record_pick

# replay CASE ROWS...: replays the pick against a list of ROWS.
replay() {
  local name=$1
  shift
  list "$name" "$@"
  replay_as "$name" pick --json
  finish
}
pace replay "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
replay same "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
# A near-namesake and the namesake of Bergen above the target, rows re-sorted.
replay decoys "Maria Olson" Tromsø "Anne Berg" Oslo "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
replay resorted "Maria Olsen" Tromsø "Per Hansen" Oslo "Maria Olsen" Bergen
# The target gone; its namesake and a near-namesake stay.
replay removed "Maria Olsen" Bergen "Maria Olson" Tromsø "Per Hansen" Oslo
# Two rows that nothing tells apart.
replay twins "Per Hansen" Oslo "Maria Olsen" Tromsø "Maria Olsen" Tromsø
# Only a near-namesake in the target's row ("Olson" is not "Olsen").
replay near-namesake "Maria Olson" Tromsø "Per Hansen" Oslo
# Scrolled out of view: rows above push the target below the list's bottom
# (GTK gives its cell no place, only its size): the wheel brings it in.
above=()
for ((row = 1; row <= 20; row++)); do above+=("Anne Berg $row" Oslo); done
replay scrolled "${above[@]}" "Maria Olsen" Tromsø
# Far out of view in a long list (more rows than are read beyond what shows
# at first): read whole on the second look, then scrolled to.
far=()
for ((row = 1; row <= 100; row++)); do far+=("Anne Berg $row" Oslo); done
replay far "${far[@]}" "Maria Olsen" Tromsø
# Another look: the dark theme, and twice the scale, with a decoy above.
LOOK="GTK_THEME=Adwaita:dark" replay dark "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø
LOOK="GDK_SCALE=2" replay scale2 "Maria Olsen" Bergen "Maria Olsen" Tromsø "Per Hansen" Oslo
# A big window: the decoys, then FILLER more rows, in a window as tall as
# the screen allows (GTK's list exposes every row's cells, showing or not).
if [[ ${FILLER:-0} -gt 0 ]]; then
  filler=()
  for ((row = 1; row <= FILLER; row++)); do filler+=("Customer $row" "City $row"); done
  HEIGHT=1000 replay big "Maria Olsen" Bergen "Per Hansen" Oslo "Maria Olsen" Tromsø "${filler[@]}"
fi
