#!/usr/bin/env bash
# A replay killed outright (SIGKILL: nothing can be tidied) and resumed: a
# text typed into a GTK 3 entry and saved by a button (scripts/save-entry.py
# in its append mode: FILE.entry follows the entry, each Save adds a line
# to FILE) is recorded once, then replayed twice and killed each time at
# the typing step, as the store shows it:
#   made   its keys all sent, its effect being checked: `reprise resume`
#          must go on with the Save, never type the text again;
#   begun  its keys being sent: part of the text typed; `reprise resume`
#          must refuse to guess (exit 2), naming --from for either way on.
# Keys do not repeat on this display (a key a killed process held down
# would). Runs inside dbus-run-session on $DISPLAY; writes for each case
# what the store held for the step when the process was gone
# (CASE.mark: status, then check or error), the entry's text then
# (CASE.at-kill), the resume's exit code and messages (CASE.code,
# CASE.err), and what the application shows and saved (CASE.saved.entry,
# CASE.saved). Used by tests/replay.rs.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}" "${REPRISE_STORE:?}"
source "$(dirname "$0")/recording.sh"
find_element() { "$SCRIPTS/a11y-find.py" save-entry.py "$@"; }

xset r off
accessibility_bus

# app CASE: the window, saving into $OUT/CASE.saved. Sets app_pid.
app() {
  "$SCRIPTS/save-entry.py" "$OUT/$1.saved" append 2>>"$OUT/app.err" &
  app_pid=$!
  find_element "push button" Save >/dev/null
}

app recorded
start_recording save
press $(find_element text "")
sleep 0.5
xdotool type --delay 120 "hello kill"
sleep 1
press $(find_element "push button" Save)
stop_recording
ended "$app_pid" 1

# mark STATUS: waits (at most 60 s) until the store holds the typing step
# (the second) with STATUS for the newest run, printing that run's id.
mark() {
  /usr/bin/python3 - "$REPRISE_STORE" "$1" <<'PY'
import json, sqlite3, sys, time
store, status = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=0.05)
        row = db.execute(
            "SELECT s.run_id, s.step FROM replay_steps s JOIN replay_runs r ON r.id = s.run_id"
            " WHERE s.idx = 1 ORDER BY r.started DESC LIMIT 1"
        ).fetchone()
        db.close()
        if row and json.loads(row[1])["record"]["status"] == status:
            print(row[0])
            sys.exit(0)
    except sqlite3.Error:
        pass
    time.sleep(0.005)
sys.exit(f"the store never held the typing step as {status} within 60 s")
PY
}

# killed CASE STATUS DELAY: replays, and kills the replay DELAY seconds
# after the typing step is stored as STATUS; keeps what the store and the
# entry then held. Sets run.
killed() {
  app "$1"
  "$REPRISE" replay save --json >"$OUT/$1.stdout" 2>"$OUT/$1.replay.err" &
  local replay=$!
  run=$(mark "$2")
  sleep "$3"
  kill -KILL "$replay"
  wait "$replay" 2>/dev/null || true
  cat "$OUT/$1.saved.entry" >"$OUT/$1.at-kill" 2>/dev/null || : >"$OUT/$1.at-kill"
  "$REPRISE" runs show "$run" --json | /usr/bin/python3 -c '
import json, sys
step = json.load(sys.stdin)["steps"][1]["record"]
print(step["status"]); print(step.get("check") or (step.get("errors") or [""])[-1])' >"$OUT/$1.mark"
}

# resumed CASE: `reprise resume` of the killed run, then the window ended.
resumed() {
  set +e
  "$REPRISE" resume "$run" --json >"$OUT/$1.resume.stdout" 2>"$OUT/$1.err"
  echo $? >"$OUT/$1.code"
  set -e
  sleep 0.5
  ended "$app_pid" 1
}

killed made unverified 0
resumed made
killed begun interrupted 0.45
resumed begun
