#!/usr/bin/env bash
# The identity benchmark: a pick in a third-party GTK list (zenity) recorded
# once per ladder and replayed against drifted lists (unchanged, decoys
# above, re-sorted, dark theme, scale 2, target removed, a near-namesake
# alone, twins), with the visual strategy's
# ladder as structural+visual (the default), visual alone and structural
# alone. Judged by what zenity printed. Prints a Markdown table: per ladder
# and case, the outcome (right row, refusal, wrong row) and the median time
# of a structural decision (tree read included).
# Usage: bash scripts/bench-identity.sh   (after cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/display.sh
start_private_display 1600x1200
reprise=$PWD/target/debug/reprise
[[ -x $reprise ]] || { echo "error: build first (cargo build)" >&2; exit 1; }
export OMP_THREAD_LIMIT=1
target="Maria Olsen|Tromsø"
echo "| ladder | case | expected | zenity printed | exit | outcome |"
echo "|---|---|---|---|---|---|"
for rungs in structural,visual visual structural; do
  out=$work/$rungs
  mkdir -p "$out/runtime"
  chmod 700 "$out/runtime"
  XDG_RUNTIME_DIR=$out/runtime RUNGS=$rungs REPRISE=$reprise REPRISE_STORE=$out/store.sqlite \
    SCRIPTS=$PWD/scripts OUT=$out dbus-run-session -- bash tests/scenarios/zenity-list.sh 2>/dev/null
  for case in same decoys resorted dark scale2 removed near-namesake twins; do
    printed=$(cat "$out/$case.out")
    code=$(cat "$out/$case.code")
    case $case in removed|twins|near-namesake) expected="(refusal)" ;; *) expected=$target ;; esac
    if [[ -z $printed && $expected == "(refusal)" ]]; then outcome=refused
    elif [[ $printed == "$target" && $expected == "$target" ]]; then outcome=right
    elif [[ -z $printed ]]; then outcome="failed (refused)"
    else outcome="**WRONG ACTION**"
    fi
    [[ $code == 0 && $outcome != right ]] && outcome="$outcome, **false completed**"
    [[ $code == 12 && $outcome != right ]] && outcome="$outcome, reported done but unverified"
    echo "| $rungs | $case | $expected | ${printed:-(nothing)} | $code | $outcome |"
  done
  # A Qt 5 editor: the save replayed after its window moved.
  qt=$out/qt
  mkdir -p "$qt/runtime"
  chmod 700 "$qt/runtime"
  XDG_RUNTIME_DIR=$qt/runtime RUNGS=$rungs REPRISE=$reprise REPRISE_STORE=$qt/store.sqlite \
    SCRIPTS=$PWD/scripts OUT=$qt dbus-run-session -- bash tests/scenarios/featherpad-save.sh 2>/dev/null
  saved=$(cat "$qt/replayed.txt" 2>/dev/null || true)
  code=$(cat "$qt/replay.code")
  if [[ $saved == "hello qt" ]]; then outcome=right
  elif [[ -z $saved ]]; then outcome="failed (nothing saved)"
  else outcome="**WRONG ACTION**"
  fi
  [[ $code == 0 && $outcome != right ]] && outcome="$outcome, **false completed**"
  [[ $code == 12 && $outcome != right ]] && outcome="$outcome, reported done but unverified"
  echo "| $rungs | FeatherPad save, window moved | hello qt | ${saved:-(nothing)} | $code | $outcome |"
  /usr/bin/python3 - "$out/store.sqlite" "$rungs" <<'PY' >>"$work/times"
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
times = []
for (step,) in db.execute("SELECT step FROM replay_steps"):
    record = json.loads(step)["record"]
    reason = (record.get("step") or {}).get("reason", "")
    if "identity in the accessibility tree" in reason:
        times.append(record["decide_seconds"] * 1000)
if times:
    print(f"{sys.argv[2]}: {len(times)} structural decisions, median {statistics.median(times):.1f} ms, max {max(times):.1f} ms")
else:
    print(f"{sys.argv[2]}: no structural decisions")
PY
done
echo
cat "$work/times"
