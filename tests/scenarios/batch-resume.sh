#!/usr/bin/env bash
# A batch stopped midway and resumed: a text typed into a GTK 3 entry and
# saved by a button (scripts/save-entry.py in its append mode: each Save
# adds the entry's text as a line of a file) is recorded once, then
# replayed once per row of a 5-row file (`replay --each`, the window
# restarted before each row by `--reset-with`). The batch gets SIGTERM in
# row 3, after its text was typed and before its Save; `--resume` then
# goes on with row 3 where it stopped (its typed text not typed again) and
# does rows 4 and 5. Runs inside dbus-run-session on $DISPLAY; writes the
# file the application wrote ($OUT/batch.saved), each batch's exit code,
# messages and step lines (first.code, first.err, first.stdout; resumed.*)
# and the column the rows name (column). Used by tests/replay.rs.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
find_element() { "$SCRIPTS/a11y-find.py" save-entry.py "$@"; }

accessibility_bus

"$SCRIPTS/save-entry.py" "$OUT/recorded.saved" append 2>>"$OUT/app.err" &
app_pid=$!
find_element "push button" Save >/dev/null
start_recording save
press $(find_element text "")
sleep 0.5
xdotool type --delay 80 "hello batch"
# A person's pause before the Save: the batch is stopped in it.
sleep 2
press $(find_element "push button" Save)
stop_recording
ended "$app_pid" 1

# The rows: one column, named as `reprise params` names the typed text.
column=$("$REPRISE" params save --json | /usr/bin/python3 -c \
  'import json, sys; print(json.load(sys.stdin)[0]["name"])')
echo "$column" >"$OUT/column"
printf '%s\n' "$column" "row one" "row two" "row three" "row four" "row five" >"$OUT/rows.csv"

# The reset before each row: the window restarted, empty.
cat >"$OUT/reset.sh" <<RESET
#!/usr/bin/env bash
set -euo pipefail
[[ -s "$OUT/app.pid" ]] && kill "\$(cat "$OUT/app.pid")" 2>/dev/null || true
sleep 0.3
"$SCRIPTS/save-entry.py" "$OUT/batch.saved" append >/dev/null 2>>"$OUT/app.err" &
echo \$! >"$OUT/app.pid"
"$SCRIPTS/a11y-find.py" save-entry.py "push button" Save >/dev/null
RESET

batch() { # NAME [ARGS...]: the batch, in the background; sets batch_pid.
  "$REPRISE" replay save --each "$OUT/rows.csv" --reset-with "bash $OUT/reset.sh" \
    --max-retries 1 --json "${@:2}" >"$OUT/$1.stdout" 2>"$OUT/$1.err" &
  batch_pid=$!
}

# Row 3's typing verified (the third time step 2 of a row is told), and
# its Save still to come: SIGTERM, then what the batch says (bounded).
batch first
for _ in $(seq 600); do
  typed=$(grep -c '"type":"step","step":1,' "$OUT/first.stdout" || true)
  ((typed >= 3)) && break
  kill -0 "$batch_pid" 2>/dev/null || break
  sleep 0.05
done
kill -TERM "$batch_pid" 2>/dev/null || true
set +e
wait "$batch_pid"
echo $? >"$OUT/first.code"
set -e
cp "$OUT/batch.saved" "$OUT/first.saved" 2>/dev/null || true

# Resumed by the batch's id, as `reprise runs` lists it.
id=$("$REPRISE" runs --json | /usr/bin/python3 -c \
  'import json, sys; print(next(r["batch"] for r in json.load(sys.stdin) if r["batch"]))')
batch resumed --resume "$id"
set +e
wait "$batch_pid"
echo $? >"$OUT/resumed.code"
set -e
[[ -s $OUT/app.pid ]] && { kill "$(cat "$OUT/app.pid")" 2>/dev/null || true; }
