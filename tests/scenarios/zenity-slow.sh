#!/usr/bin/env bash
# Records a two-dialog task in third-party GTK dialogs (zenity): "Yes" in a
# question, then, once the next dialog has opened, a name typed into it and
# OK. Replays it where the second dialog opens much later than it did, and
# where it never opens while a terminal waits behind, taking every key it
# gets. Runs inside dbus-run-session on $DISPLAY; writes, for each case
# NAME, what the second dialog printed (NAME.out), the replay's exit code
# (NAME.code) and messages (NAME.err), and what reached the terminal
# (NAME.terminal) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# terminal NAME: an xterm that writes every key it receives to
# $OUT/NAME.terminal (no line buffering), behind the dialogs.
terminal() {
  xterm -title Terminal -e sh -c "stty -icanon -echo; exec cat >'$OUT/$1.terminal'" &
  terminal_pid=$!
  xdotool search --sync --onlyvisible --name '^Terminal$' >/dev/null
  sleep 0.5
}

# chain NAME DELAY: the question, then DELAY seconds after Yes the name
# dialog ("never": it does not open), printing into $OUT/NAME.out.
chain() {
  local second="zenity --entry --title Name --text 'Your name'"
  [[ $2 == never ]] && second="sleep 60"
  sh -c "zenity --question --title Start --text 'Continue?' && sleep $2 && $second" \
    >"$OUT/$1.out" 2>/dev/null &
  chain_pid=$!
  find_element "push button" Yes >/dev/null
}

finish() {
  for _ in $(seq 30); do kill -0 "$chain_pid" 2>/dev/null || break; sleep 0.1; done
  # The chain's dialog or wait running now, then the chain itself.
  pkill -P "$chain_pid" 2>/dev/null || true
  kill "$chain_pid" "${terminal_pid:-}" 2>/dev/null || true
  pkill -f "zenity --(question --title Start|entry --title Name)" 2>/dev/null || true
  wait 2>/dev/null || true
}

terminal recorded
chain recorded 1
start_recording names
press $(find_element "push button" Yes)
find_element text "" >/dev/null
sleep 0.5
xdotool type --delay 80 alice
sleep 0.3
press $(find_element "push button" OK)
stop_recording
finish

# replay CASE DELAY
replay() {
  terminal "$1"
  chain "$1" "$2"
  replay_as "$1" names
  finish
}
# The name dialog takes 6 s to open (it took 1 s when recorded).
replay slow 6
# It never opens: the keys must not go to the terminal behind.
replay never never

# Resumed once the dialog is there: the run goes on from the typing that
# halted, not from "Yes" (whose dialog is gone: pressing it again would
# find nothing to press). What the dialog printed is the judge.
zenity --entry --title Name --text 'Your name' >"$OUT/resumed.out" 2>/dev/null &
resumed_pid=$!
find_element text "" >/dev/null
set +e
"$REPRISE" resume last --json >"$OUT/resumed.stdout" 2>"$OUT/resumed.err"
echo $? >"$OUT/resumed.code"
# A run that ended is not resumed again: a clear refusal, nothing changed.
"$REPRISE" resume last >/dev/null 2>"$OUT/again.err"
echo $? >"$OUT/again.code"
set -e
ended "$resumed_pid" 3
