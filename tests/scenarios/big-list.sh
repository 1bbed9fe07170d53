#!/usr/bin/env bash
# Records a pick in a GTK list of a million rows (its accessible table
# reports two million cells): a click on Person 3's row, then OK. While
# recording, the list's answer times on the accessibility bus are sampled
# (answers.during). Then the pick is replayed on a fresh list with one more
# row above (Person 3 is now the fourth) in a window that moved. Runs inside
# dbus-run-session on $DISPLAY; writes what each list printed (recorded.out,
# replayed.out), the replay's exit code and messages (replay.code,
# replay.err) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"

accessibility_bus

# people FIRST X Y OUTPUT: a fresh list whose first row is Person FIRST, its
# window at (X, Y), printing to OUTPUT. Sets `list_pid` and the client
# area's corner `left` and `top`.
people() {
  "$SCRIPTS/big-list.py" 1000000 "$1" >"$OUT/$4" 2>>"$OUT/list.err" &
  list_pid=$!
  local window=
  for _ in $(seq 300); do
    window=$(xdotool search --onlyvisible --name '^People$' 2>/dev/null | head -1) && [[ -n $window ]] && break
    sleep 0.2
  done
  xdotool windowmove "$window" "$2" "$3"
  sleep 0.5
  corner() { xwininfo -id "$window" | awk -v key="$1" '$0 ~ key {print $NF}'; }
  left=$(corner "Absolute upper-left X") top=$(corner "Absolute upper-left Y")
}

people 1 100 100 recorded.out
start_recording pick
# Sampled while the recorder reads the window and the press, until OK
# (which ends the list).
"$REPRISE" bench answers big-list.py --samples 12 --interval-ms 200 >"$OUT/answers.during" &
answers=$!
# The third row's middle: the header is 25 px tall, the rows 23 px.
press $((left + 40)) $((top + 82))
wait "$answers"
press $((left + 250)) $((top + 382))
stop_recording
ended "$list_pid" 10

people 0 400 250 replayed.out
replay_as replay pick
ended "$list_pid" 10
