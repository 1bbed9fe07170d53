#!/usr/bin/env bash
# The multi-window benchmark: tasks in third-party applications that leave
# their first window (a Qt editor's File menu and its save dialog, a GTK
# form's combo box list, a second dialog that opens late or never), each
# recorded once and replayed with drift (the window moved, the list
# reordered, the choice gone, the dark theme, a larger scale, larger fonts,
# the dialog 5 s late or never there), by the
# naive strategy and by the visual one with both rungs and with pixels
# alone. Judged by what the applications did: the file saved, the value
# printed, and nothing typed into the terminal behind. Prints a Markdown
# table, wrong actions and false completions in bold.
# Usage: bash scripts/bench-windows.sh   (after cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/display.sh
start_private_display 1280x800
built debug
export OMP_THREAD_LIMIT=1

# run SCENARIO LABEL STRATEGY RUNGS: runs a scenario into $work/LABEL.
run() {
  local out=$work/$2
  mkdir -p "$out/runtime"
  chmod 700 "$out/runtime"
  XDG_RUNTIME_DIR=$out/runtime STRATEGY=$3 RUNGS=$4 REPRISE=$reprise DRIFTS=1 \
    REPRISE_STORE=$out/store.sqlite SCRIPTS=$PWD/scripts OUT=$out \
    dbus-run-session -- bash "tests/scenarios/$1" >/dev/null 2>&1 || true
  echo "$out"
}

# row COLUMN TASK EXPECTED GOT CODE [EXTRA_WRONG]: one table row.
row() {
  local expected=$3 got=$4 code=$5 outcome
  if [[ -z $code ]]; then outcome="(the scenario did not get this far)"
  elif [[ $expected == "(refusal)" && -z $got ]]; then outcome=refused
  elif [[ $got == "$expected" ]]; then outcome=right
  elif [[ -z $got ]]; then outcome="failed"
  else outcome="**WRONG ACTION**"
  fi
  [[ -n ${6:-} ]] && outcome="**WRONG ACTION** ($6)"
  # Exit 0 claims every step verified; 12 claims only that every step was
  # done (and says how many are unverified).
  [[ $code == 0 && $outcome != right ]] && outcome="$outcome, **false completed**"
  [[ $code == 12 && $outcome != right ]] && outcome="$outcome, reported done but unverified"
  echo "| $1 | $2 | $expected | ${got:-(nothing)} | $code | $outcome |"
}

echo "| replay | task and drift | expected | the application did | exit | outcome |"
echo "|---|---|---|---|---|---|"
for column in naive visual:structural,visual visual:visual; do
  strategy=${column%%:*}
  rungs=${column#*:}
  [[ $strategy == naive ]] && rungs=
  label=${column//[:,]/-}
  out=$(run featherpad-menu.sh "$label-menu" "$strategy" "$rungs")
  for case in replay scaled font; do
    case $case in
      replay) task="FeatherPad File → Save As, window moved" ;;
      scaled) task="FeatherPad File → Save As, Qt scale 1.25, window moved" ;;
      font) task="FeatherPad File → Save As, fonts at 144 dpi, window moved" ;;
    esac
    row "$column" "$task" "hello menu" \
      "$(cat "$out/$case.txt" 2>/dev/null || true)" "$(cat "$out/$case.code" 2>/dev/null || true)"
  done
  out=$(run zenity-combo.sh "$label-combo" "$strategy" "$rungs")
  for case in same reordered removed dark scale2 font; do
    case $case in
      same) task="zenity combo box, unchanged"; expected=Bergen ;;
      reordered) task="zenity combo box, choices reordered, window moved"; expected=Bergen ;;
      removed) task="zenity combo box, the choice gone (Bergem stays)"; expected="(refusal)" ;;
      dark) task="zenity combo box, dark theme"; expected=Bergen ;;
      scale2) task="zenity combo box, scale 2, choices reordered"; expected=Bergen ;;
      font) task="zenity combo box, 15 pt fonts"; expected=Bergen ;;
    esac
    row "$column" "$task" "$expected" "$(cat "$out/$case.out" 2>/dev/null || true)" \
      "$(cat "$out/$case.code" 2>/dev/null || true)"
  done
  out=$(run zenity-slow.sh "$label-slow" "$strategy" "$rungs")
  for case in slow never; do
    case $case in
      slow) task="zenity second dialog 5 s later than recorded"; expected=alice ;;
      never) task="zenity second dialog never opens"; expected="(refusal)" ;;
    esac
    typed=$(cat "$out/$case.terminal" 2>/dev/null || true)
    row "$column" "$task" "$expected" "$(cat "$out/$case.out")" "$(cat "$out/$case.code")" \
      "${typed:+typed \"$typed\" into the terminal}"
  done
done
