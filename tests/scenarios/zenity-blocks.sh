#!/usr/bin/env bash
# A recording edited with blocks, on third-party GTK dialogs (zenity): a
# person types a name into a "Name" dialog, presses OK, and presses Yes in
# the "Confirm" dialog that follows. The steps are edited to repeat that
# for each row of a CSV file, typing the row's name, and to press Yes only
# if the Confirm dialog shows, which it does for one name of three. Runs
# inside dbus-run-session on $DISPLAY; writes the names the dialogs
# received (NAME.names) and confirmed (NAME.confirms), the exit code
# (NAME.code), messages (NAME.err) and steps (NAME.stdout) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# dialogs NAME ROUNDS CONFIRM_FOR: ROUNDS Name dialogs, one after another;
# after the one given CONFIRM_FOR, a Confirm dialog.
dialogs() {
  : >"$OUT/$1.names"
  : >"$OUT/$1.confirms"
  sh -c '
    for i in $(seq "$2"); do
      n=$(zenity --entry --title Name --text "Your name") || exit 0
      echo "$n" >>"$1.names"
      if [ "$n" = "$3" ]; then
        zenity --question --title Confirm --text "Save $n anyway?" --ok-label Yes \
          && echo "$n" >>"$1.confirms"
      fi
    done' sh "$OUT/$1" "$2" "$3" 2>/dev/null &
  chain_pid=$!
}

finish() {
  ended "$chain_pid" 10
  pkill -f "zenity --(entry --title Name|question --title Confirm)" 2>/dev/null || true
  wait 2>/dev/null || true
}

dialogs recorded 1 alice
start_recording names
press $(find_element text "")
sleep 0.5
xdotool type --delay 80 alice
sleep 0.5
press $(find_element "push button" OK)
linger $(find_element "push button" Yes)
stop_recording
finish

"$REPRISE" steps names >"$OUT/steps-1.toml"
param=$(sed -n 's/^# \([a-z_0-9]*\) = "alice"$/\1/p' "$OUT/steps-1.toml")
printf 'who\nann\nbo\ncy\n' >"$OUT/people.csv"

# The edit: the whole task once a row, its name typed; Yes only if asked.
sed -e "s/^# $param = \"alice\"\$/$param = \"{who}\"/" "$OUT/steps-1.toml" | awk -v rows="$OUT/people.csv" '
  /^\[\[step\]\]$/ && !opened {
    print "[[step]]\nrepeat = { rows = \"" rows "\", max = 10 }\n"
    opened = 1
  }
  /^recorded = 4$/ {
    print "if = { window = \"Confirm\", timeout = 4 }\n\n[[step]]"
  }
  { print }
  END { print "\n[[step]]\nend = true\n\n[[step]]\nend = true" }' >"$OUT/edited.toml"
"$REPRISE" edit names --file "$OUT/edited.toml" >"$OUT/edit.stdout"
"$REPRISE" steps names >"$OUT/steps-2.toml"

# run NAME CONFIRM_FOR: three Name dialogs, a Confirm after CONFIRM_FOR's.
run() {
  dialogs "$1" 3 "$2"
  replay_as "$1" names --json
  finish
}
run asked bo
run never nobody
