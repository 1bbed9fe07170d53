#!/usr/bin/env bash
# Teaching a twin once, on a third-party GTK list (zenity --list, a hidden
# id column telling the application's rows apart where the screen shows
# twins): a pick recorded, replayed on a list with two rows nothing on the
# screen tells apart (refused), taught which one with `reprise teach`, the
# halted run resumed, and later runs deciding alone. Runs inside
# dbus-run-session on $DISPLAY; writes, for each case NAME, the row zenity
# printed (NAME.out: name|city|id), the exit code (NAME.code) and messages
# (NAME.err) into $OUT.
set -euo pipefail
: "${REPRISE:?}" "${SCRIPTS:?}" "${OUT:?}"
source "$(dirname "$0")/recording.sh"
source "$(dirname "$0")/zenity.sh"

# list NAME NAME1 CITY1 ID1 ...: the list, printing the chosen row.
list() {
  local name=$1
  shift
  zenity --list --title Customers --height 420 --print-column=ALL --hide-column=3 \
    --column Name --column City --column Id "$@" >"$OUT/$name.out" 2>/dev/null &
  zenity_pid=$!
  find_element "push button" OK >/dev/null
}
finish() { ended "$zenity_pid" 3; }

list recorded "Maria Olsen" Bergen 1 "Per Hansen" Oslo 2 "Maria Olsen" Tromsø 3
record_pick

twins=("Per Hansen" Oslo 1 "Maria Olsen" Tromsø 2 "Maria Olsen" Tromsø 3)
list twins "${twins[@]}"
replay_as twins pick
"$REPRISE" report last -o "$OUT/twins.html" >/dev/null
finish
halted=$("$REPRISE" runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')

# No terminal and no --pick: the twins listed, nothing taught.
run_as unpicked "$REPRISE" teach "$halted"
"$REPRISE" teach "$halted" --pick 2 >"$OUT/taught.stdout"
"$REPRISE" versions pick --json >"$OUT/taught.versions"

# The halted run goes on with what was taught.
list resumed "${twins[@]}"
run_as resumed "$REPRISE" resume "$halted"
finish

# Later runs decide alone; three twins are more than what was taught.
list later "Maria Olsen" Tromsø 5 "Maria Olsen" Tromsø 6 "Per Hansen" Oslo 7
replay_as later pick
finish
list three "Maria Olsen" Tromsø 8 "Maria Olsen" Tromsø 9 "Maria Olsen" Tromsø 10
replay_as three pick

# Taught again, by a click on the third twin where the refusal placed it:
# the click is read, never passed to the list (OK then submits no row of
# it), and the halted run goes on with the third.
halted=$("$REPRISE" runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
read -r left top < <(sed -n 's/.*3\. table cell "Maria Olsen" (row: Tromsø) at (\([0-9]*\), \([0-9]*\)).*/\1 \2/p' "$OUT/three.err")
"$REPRISE" teach "$halted" --click >"$OUT/clicked.stdout" 2>"$OUT/clicked.err" &
teach_pid=$!
for _ in $(seq 100); do
  grep -q "click the one" "$OUT/clicked.err" && break
  sleep 0.1
done
press $((left + 20)) $((top + 5))
set +e
wait "$teach_pid"
echo $? >"$OUT/clicked.code"
set -e
press $(find_element "push button" OK)
for _ in $(seq 30); do
  kill -0 "$zenity_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$zenity_pid" 2>/dev/null; then echo open; else echo closed; fi >"$OUT/three.ok"
finish
"$REPRISE" versions pick --json >"$OUT/clicked.versions"
list clickresumed "Maria Olsen" Tromsø 8 "Maria Olsen" Tromsø 9 "Maria Olsen" Tromsø 10
run_as clickresumed "$REPRISE" resume "$halted"
finish

# Taught as it halts: `replay --teach` at a terminal (script(1) gives it
# one), the first of two twins answered; the run goes on from that step
# and picks it.
list inline "Maria Olsen" Tromsø 11 "Maria Olsen" Tromsø 12 "Per Hansen" Oslo 13
set +e
printf '1\n' | script -qec "'$REPRISE' replay pick --max-retries 1 --teach" /dev/null >"$OUT/inline.stdout" 2>&1
echo $? >"$OUT/inline.code"
set -e
finish
"$REPRISE" versions pick --json >"$OUT/inline.versions"
