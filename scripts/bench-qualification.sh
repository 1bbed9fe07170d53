#!/usr/bin/env bash
# openadapt-flow's qualification, made for record/replay: a text typed into
# a GTK 3 entry and saved by a button that writes it to a file
# (scripts/save-entry.py), recorded once and replayed ROUNDS times (default
# 3) on each of: the window as recorded (clean), a twin Save button
# (twin: a refusal is right), the button in another container and place
# (replaced), the button shown 2 s late (late), and a disabled button
# (disabled: nothing may be claimed saved). Judged only by the file's bytes
# and the exit code. Prints a Markdown table and the totals.
# Usage: bash scripts/bench-qualification.sh   (after cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/display.sh
start_private_display 1280x800
built debug
rounds=${ROUNDS:-3}
mkdir -p "$work/runtime" && chmod 700 "$work/runtime"
XDG_RUNTIME_DIR=$work/runtime REPRISE=$reprise REPRISE_STORE=$work/store.sqlite OMP_THREAD_LIMIT=1 \
  SCRIPTS=$PWD/scripts OUT=$work ROUNDS=$rounds \
  timeout 900 dbus-run-session -- bash tests/scenarios/save-entry.sh >"$work/scenario.log" 2>&1 ||
  { echo "error: the scenario failed:" >&2; tail -5 "$work/scenario.log" >&2; exit 1; }
echo "| case | round | file | exit | outcome |"
echo "|---|---|---|---|---|"
right=0 wrong=0 silent=0 total=0
for case in clean twin replaced late disabled; do
  for ((round = 1; round <= rounds; round++)); do
    file=$(cat "$work/$case-$round.saved" 2>/dev/null || echo "(none)")
    code=$(cat "$work/$case-$round.code")
    case $case in twin | disabled) expected="(none)" ;; *) expected="hello qual" ;; esac
    if [[ $file == "$expected" && ($code == 0 || $expected == "(none)" && $code == 10) ]]; then
      outcome=right
      right=$((right + 1))
    elif [[ $file != "$expected" && $file != "(none)" ]]; then
      outcome="**wrong action**"
      wrong=$((wrong + 1))
    elif [[ $file != "$expected" && $code == 0 ]]; then
      outcome="**silent: said done, nothing saved**"
      silent=$((silent + 1))
    else
      outcome="not right (exit $code)"
    fi
    total=$((total + 1))
    echo "| $case | $round | $file | $code | $outcome |"
  done
done
echo
echo "right $right of $total; wrong actions $wrong; silent wrong outcomes $silent"
