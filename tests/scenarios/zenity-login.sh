#!/usr/bin/env bash
# Records a sign-in to a third-party GTK form (zenity --forms: a user name
# entry and a password entry) with a password typed, then replays it with
# the password from outside. Runs inside dbus-run-session on $DISPLAY;
# writes into $OUT what zenity printed for each case (CASE.out), each
# replay's exit code and messages (CASE.code, CASE.err), copies of the store
# taken while the recorder was writing (during/), the recording's export,
# page and parameters, and a replay report. Used by tests/secrets.rs.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}" "${PASSWORD:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# form CASE: the sign-in form, printing "user|password" into $OUT/CASE.out.
form() {
  zenity --forms --title Login --text "Sign in" --add-entry "User name" \
    --add-password Password >"$OUT/$1.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
}

# The recording: the user name, Tab, the password, then OK. The entry for
# the user name has the focus when the form opens.
form recorded
REPRISE_LOG=debug start_recording login
xdotool type --delay 100 alice
sleep 0.3
xdotool key Tab
sleep 0.5
xdotool type --delay 100 "$PASSWORD"
sleep 1
mkdir -p "$OUT/during"
cp "$REPRISE_STORE"* "$OUT/during/"
press $(find_element "push button" OK)
stop_recording
mv "$OUT/record.err" "$OUT/login.record.err"
ended "$zenity_pid" 3

"$REPRISE" params login --json >"$OUT/params.json"
"$REPRISE" params login >"$OUT/params.txt"
"$REPRISE" export login -o "$OUT/login.export" >/dev/null
"$REPRISE" visualize login -o "$OUT/login.html" >/dev/null

# No secret given: refused before any input, so the form, answered by
# hand, holds nothing.
form missing
replay_as missing login
press $(find_element "push button" OK)
ended "$zenity_pid" 3

# The secret from the environment, and another user name.
form env
REPRISE_SECRET_PASSWORD="s3cr3t Ünï" replay_as env login --set user_name=bob
ended "$zenity_pid" 3
"$REPRISE" report last -o "$OUT/report.html" >/dev/null

# The secret from a file only its owner reads.
printf 'password = "fr0m-file"\n' >"$OUT/secrets.toml"
chmod 600 "$OUT/secrets.toml"
form file
replay_as file login --secrets-file "$OUT/secrets.toml"
ended "$zenity_pid" 3

# A file that is almost TOML (one line is not): refused with the line's
# number before any input, never read as NAME=VALUE lines (which would
# type ' "fr0m-file"' with its quotes); the form, answered by hand, holds
# nothing.
printf 'password = "fr0m-file"\nnot a line of TOML\n' >"$OUT/almost.toml"
chmod 600 "$OUT/almost.toml"
form almost
replay_as almost login --secrets-file "$OUT/almost.toml"
press $(find_element "push button" OK)
ended "$zenity_pid" 3

# A dry run checks what the live run would: no secret given is refused.
replay_as dry login --dry-run

# One replay per row of a CSV, the password a column too, a fresh form per
# row; row 2's form is another one (a "Logon" dialog), where the recorded
# target cannot be found: that row fails alone under --keep-going.
cat >"$OUT/reset.sh" <<'RESET'
pkill -x zenity || true
row=$(($(cat "$OUT/rows-started" 2>/dev/null || echo 0) + 1))
echo "$row" >"$OUT/rows-started"
title=Login
[ "$row" = 2 ] && title=Logon
env >"$OUT/reset-env-$row.txt"
zenity --forms --title "$title" --text "Sign in" --add-entry "User name" \
  --add-password Password >>"$OUT/each.out" 2>/dev/null &
app=$!
"$SCRIPTS/a11y-find.py" zenity "push button" OK >/dev/null
tr '\0' '\n' </proc/$app/environ >"$OUT/app-env-$row.txt"
RESET
printf 'user_name,password\nann,S3cret-one\nben,S3cret-two\n"Carol, Jr.",S3cret-three\n' >"$OUT/rows.csv"
: >"$OUT/each.out"
# (With credentials in Reprise's environment that no child may inherit.)
REPRISE_SECRET_LEAKCHECK=leak-value OPENAI_API_KEY=sk-leak-value REPRISE_FLEET_TOKEN=leak-token-value \
  replay_as each login --each "$OUT/rows.csv" --keep-going --reset-with "bash $OUT/reset.sh"
pkill -x zenity || true
"$REPRISE" report "$(grep -o 'replay run [0-9a-f-]*' "$OUT/each.err" | tail -1 | cut -d' ' -f3)" \
  -o "$OUT/batch.html" >/dev/null

# The batch resumed once a Login form is there for row 2: rows 1 and 3,
# done, are not replayed (their values are checked against the file);
# row 2 goes on from the step it halted at, typing its own values once.
batch=$(grep -o 'replay run [0-9a-f-]*' "$OUT/each.err" | tail -1 | cut -d' ' -f3)
echo "$batch" >"$OUT/batch.id"
form each-resumed
replay_as each-resumed login --each "$OUT/rows.csv" --keep-going --resume "$batch"
ended "$zenity_pid" 3
# A rows file that changed under the rows run: refused before any row.
printf 'user_name,password\nann,S3cret-one\nbenny,S3cret-two\n' >"$OUT/changed-rows.csv"
replay_as changed-rows login --each "$OUT/changed-rows.csv" --resume "$batch"

# A column the recording has no parameter for: refused before any row.
printf 'user_name,pin\nann,1\n' >"$OUT/bad-rows.csv"
replay_as bad-rows login --each "$OUT/bad-rows.csv" --reset-with "bash $OUT/reset.sh"

# Renamed parameters: the new names are the ones a replay takes.
"$REPRISE" params login --rename user_name=login --rename password=pin >"$OUT/renamed.txt"
form renamed
REPRISE_SECRET_PIN=p1n-value replay_as renamed login --set login=zoe
ended "$zenity_pid" 3

# A password dialog that opens while recording and is typed into at once,
# before the recorder's next frame could see the new window: the reader
# sees it at the first key.
REPRISE_SECRET_LEAKCHECK=leak-value OPENAI_API_KEY=sk-leak-value start_recording quick
listener=$(pgrep -f -- "__listen-input" | head -1)
tr '\0' '\n' </proc/"$listener"/environ >"$OUT/listener-env.txt"
xdotool key shift
sleep 0.5
zenity --password --title Quick >"$OUT/quick.out" 2>/dev/null &
zenity_pid=$!
xdotool search --sync --onlyvisible --name '^Quick$' >/dev/null
sleep 0.2
xdotool type --delay 60 "$QUICK_PASSWORD"
xdotool key Return
stop_recording
mv "$OUT/record.err" "$OUT/quick.record.err"
ended "$zenity_pid" 3
"$REPRISE" export quick -o "$OUT/quick.export" >/dev/null
