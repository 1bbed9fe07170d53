#!/usr/bin/env bash
# A secret typed at a terminal's hidden prompt (xterm running `read -s`),
# where no accessibility tree says it is one: marked by the toggle key in
# one recording, by --secret-window in another, then replayed with the
# secret from the environment. Writes into $OUT what each prompt read
# (CASE.out), the replays' exit codes and messages, and the recorders'
# messages (CASE.record.err). Used by tests/secrets.rs.
set -euo pipefail
: "${REPRISE:?}" "${OUT:?}" "${PASSWORD:?}"
source "$(dirname "$0")/recording.sh"

# prompt CASE: an xterm titled Vault whose shell reads a line unechoed into
# $OUT/CASE.out.
prompt() {
  xterm -T Vault -geometry 60x10+100+100 -e bash -c \
    "read -rs line; printf '%s' \"\$line\" >\"$OUT/$1.out\"" &
  term_pid=$!
  xdotool search --sync --name '^Vault$' >/dev/null
  sleep 0.5
}

# type_secret: the password, then Enter.
type_secret() {
  xdotool type --delay 100 "$PASSWORD"
  sleep 0.3
}

prompt toggled
start_recording toggled
xdotool key Pause
sleep 0.3
type_secret
xdotool key Pause
sleep 0.3
xdotool key Return
stop_recording
mv "$OUT/record.err" "$OUT/toggled.record.err"
ended "$term_pid" 3

prompt window
start_recording window --secret-window vault
type_secret
xdotool key Return
stop_recording
mv "$OUT/record.err" "$OUT/window.record.err"
ended "$term_pid" 3

for case in toggled window; do
  prompt "$case-replayed"
  REPRISE_SECRET_SECRET="n3w Välue" replay_as "$case-replayed" "$case"
  ended "$term_pid" 3
done
"$REPRISE" export toggled -o "$OUT/toggled.export" >/dev/null
"$REPRISE" export window -o "$OUT/window.export" >/dev/null
