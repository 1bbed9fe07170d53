#!/usr/bin/env bash
# An outcome marked while recording, on a third-party GTK dialog (zenity's
# entry): a person clicks the field, types "hello", points at the field
# and presses the mark key (scroll_lock), then OK. The mark becomes a
# check of the field's value, kept as version 2 after the typing. Replayed
# where the field opens empty (the check passes; the dialog prints what OK
# submitted) and where it opens holding "draft " (every step's own check
# passes, since the field holds the typed "hello"; the outcome check halts
# the run with both values before OK), and with another name typed
# (`--set`: the check expects the name typed). Runs inside dbus-run-session on
# $DISPLAY; writes for each case NAME what the dialog printed (NAME.out),
# the exit code (NAME.code) and messages (NAME.err), and the steps,
# versions, `show` and the recording's page (greet.html) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# dialog NAME TEXT: the entry dialog holding TEXT, printing what OK
# submits into $OUT/NAME.out. Sets dialog_pid.
dialog() {
  zenity --entry --title Greeting --text "Your name:" --entry-text "$2" \
    >"$OUT/$1.out" 2>/dev/null &
  dialog_pid=$!
  find_element "push button" OK >/dev/null
}

dialog recorded ""
start_recording greet
press $(find_element text "")
sleep 0.5
xdotool type --delay 80 hello
sleep 0.5
xdotool mousemove $(find_element text "")
sleep 0.3
xdotool key Scroll_Lock
sleep 1
press $(find_element "push button" OK)
stop_recording
ended "$dialog_pid" 5
cp "$OUT/record.err" "$OUT/recorded.err"

"$REPRISE" steps greet >"$OUT/steps.toml"
"$REPRISE" versions greet --json >"$OUT/greet.versions"
"$REPRISE" show greet >"$OUT/greet.show"
"$REPRISE" visualize greet -o "$OUT/greet.html" >/dev/null

# The parameter the typed "hello" is (named after its field).
param=$(sed -n 's/^# \([a-z_0-9]*\) = "hello"$/\1/p' "$OUT/steps.toml")
for case in same:"" drafted:"draft "; do
  dialog "${case%%:*}" "${case#*:}"
  replay_as "${case%%:*}" greet --json
  ended "$dialog_pid" 3
done
# Another name typed: the check expects it.
dialog named ""
replay_as named greet --json --set "$param=bob"
ended "$dialog_pid" 3
