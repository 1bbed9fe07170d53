#!/usr/bin/env bash
# Records "Proceed" pressed in a third-party GTK question (zenity), then
# replays it where the button's label has changed as a new version of an
# application changes it ("Proceed" → "Proceed…"): listed as a heal, saved as a new version of the
# recording only with --save-healed, replayed from that version next time,
# and the first version still there when pinned. Runs inside
# dbus-run-session on $DISPLAY; writes, for each case NAME, whether the
# dialog was answered (NAME.out: "proceeded"), the replay's exit code
# (NAME.code) and messages (NAME.err); and what `versions`, `diff` and
# `show` printed into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# question NAME TITLE LABEL: the dialog, printing "proceeded" into
# $OUT/NAME.out when its button is pressed.
question() {
  sh -c "zenity --question --title '$2' --text 'Go on?' --ok-label '$3' && echo proceeded" \
    >"$OUT/$1.out" 2>/dev/null &
  question_pid=$!
  find_element "push button" "$3" >/dev/null
}

question recorded Start Proceed
start_recording heal
press $(find_element "push button" Proceed)
stop_recording
ended "$question_pid" 5

# case NAME RECORDING [ARGS...]: the changed dialog, replayed.
case_of() {
  question "$1" Start "Proceed…"
  replay_as "$1" "${@:2}"
  ended "$question_pid" 5
}
case_of listed heal
"$REPRISE" versions heal --json >"$OUT/after-listed.versions"
case_of saved heal --save-healed
"$REPRISE" versions heal >"$OUT/versions.txt"
"$REPRISE" diff heal@1 heal@2 >"$OUT/diff.txt"
"$REPRISE" diff heal@1 heal --json >"$OUT/diff.json"
"$REPRISE" show heal@2 >"$OUT/show-2.txt"
"$REPRISE" show heal@1 >"$OUT/show-1.txt"
# The versions travel with an export.
"$REPRISE" export heal -o "$OUT/heal.reprise" >/dev/null
REPRISE_STORE="$OUT/other.sqlite" "$REPRISE" import "$OUT/heal.reprise" >/dev/null
REPRISE_STORE="$OUT/other.sqlite" "$REPRISE" versions heal --json >"$OUT/imported.versions"
# The newest version finds the changed dialog as it is: nothing to heal.
case_of next heal
# The first version, pinned, is still the recording as made.
case_of pinned heal@1
# A version that does not exist: a clear refusal, nothing pressed.
case_of unknown heal@7
