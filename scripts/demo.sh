#!/usr/bin/env bash
# The main job. On a private virtual display with its accessibility bus, a
# person's pick of one customer in a table (the fixture application: an
# AccessKit tree, as egui exposes it) is recorded once, then replayed on
# screens that drifted: the window moved, rows added above and re-sorted,
# the target scrolled out of view, a dark theme, twice the scale; and where
# it must be refused: the target gone, only a near-namesake left, two rows
# nothing tells apart. Each case is replayed with the visual strategy (the
# default: identity in the accessibility tree first, then the pixels) and
# with naive (the recorded coordinates), and judged by the row the
# application itself printed. Writes a summary and an HTML report a case.
# Installs what it needs first. Every wait is bounded and says what did
# not come.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
# Tesseract is several times faster on two cores with one OpenMP thread.
export OMP_THREAD_LIMIT=1

echo "building reprise and the fixture application (the first build takes minutes)"
cargo build --workspace --locked
reprise=$PWD/target/debug/reprise
# FIXTURE=/bin/false shows what the demo says when the application cannot start.
fixture=${FIXTURE:-$PWD/target/debug/reprise-fixture}
out=$PWD/demo-output
rm -rf "$out" && mkdir -p "$out"

pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
source scripts/display.sh
start_display 1600x1200 "$out"
echo "virtual display $DISPLAY is up"

target="Maria Olsen|Tromsø"
cases=(same decoys resorted scrolled dark scale2 removed near-namesake twins)
declare -A changed=(
  [same]="the window moved"
  [decoys]="moved; a namesake and a near-namesake added above"
  [resorted]="moved; the rows re-sorted"
  [scrolled]="moved; 40 rows above push the target out of view"
  [dark]="moved; a dark theme"
  [scale2]="moved; twice the scale"
  [removed]="the target gone; its namesake stays"
  [near-namesake]="only a near-namesake (Olson) left"
  [twins]="two rows nothing tells apart"
)

# scenario STRATEGY: the recording and every case, replayed with STRATEGY,
# in a D-Bus session of its own (the accessibility bus); bounded at five
# minutes, its messages in $out/STRATEGY/scenario.log.
scenario() {
  local dir=$out/$1
  mkdir -p "$dir/runtime" "$dir/reports"
  chmod 700 "$dir/runtime"
  if ! XDG_RUNTIME_DIR=$dir/runtime STRATEGY=$1 REPRISE=$reprise FIXTURE=$fixture \
    REPRISE_STORE=$dir/store.sqlite SCRIPTS=$PWD/scripts OUT=$dir REPORTS=$dir/reports \
    timeout --kill-after=5 300 dbus-run-session -- bash tests/scenarios/fixture-table.sh \
    >"$dir/scenario.log" 2>&1; then
    echo "error: the $1 replays did not finish; the last of their messages ($dir/scenario.log):" >&2
    tail -5 "$dir/scenario.log" | sed 's/^/  /' >&2
    [[ -s $dir/fixture.err ]] && { echo "the application said:" >&2; tail -3 "$dir/fixture.err" | sed 's/^/  /' >&2; }
    exit 1
  fi
}

# outcome STRATEGY CASE: what the application received, and what the
# replay said of it (its exit code: 0 done and checked, 10 failed or
# refused, 12 done but not checked), in words.
outcome() {
  local printed code expected said
  printed=$(cat "$out/$1/$2.out")
  code=$(cat "$out/$1/$2.code")
  case $code in 0) said="said done" ;; 10) said="said failed" ;; 12) said="said done, unchecked" ;; *) said="exit $code" ;; esac
  case $2 in removed | near-namesake | twins) expected= ;; *) expected=$target ;; esac
  if [[ -n $printed && $printed == "$expected" ]]; then echo "right row ($said)"
  elif [[ -n $printed ]]; then echo "WRONG ROW ${printed%%|*} of ${printed#*|} ($said)"
  elif [[ -z $expected && $code == 10 ]]; then echo "refused, nothing chosen"
  else echo "nothing chosen ($said)"
  fi
}

# found CASE: how visual found (or refused) CASE's pick, from its step line
# (--json) or its error.
found() {
  python3 - "$out/visual/$1.stdout" "$out/visual/$1.err" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        step = json.loads(line)
    except ValueError:
        continue
    if step.get("type") == "step" and step.get("step") == 0 and step.get("found"):
        turns = "; ".join(turn["label"] for turn in step.get("prepared") or [])
        print(step["found"] + (f" (after: {turns})" if turns else ""))
        sys.exit()
errors = [line.strip() for line in open(sys.argv[2]) if line.startswith("error:")]
print(errors[0].split("; see ")[0] if errors else "(see its report)")
PY
}

echo "recording a pick in the table, then replaying it on drifted screens with visual (about a minute)"
scenario visual
echo "the same with naive, the recorded coordinates (about a minute)"
scenario naive

{
  echo "A pick of \"$target\" in the fixture's table, recorded once, replayed where the screen drifted."
  echo "What the application printed, per case (visual is the default strategy; naive is the baseline):"
  echo
  printf '  %-14s %-50s %-34s %s\n' case "what changed" visual naive
  for case in "${cases[@]}"; do
    printf '  %-14s %-50s %-34s %s\n' "$case" "${changed[$case]}" "$(outcome visual "$case")" "$(outcome naive "$case")"
  done
  echo
  echo "How visual found, or refused, the pick:"
  for case in same scrolled twins; do
    echo "  $case: $(found "$case")"
  done
} | tee "$out/summary.txt"
echo
echo "demo output in $out (summary.txt is the table above). Open first:"
echo "  visual/reports/scrolled.html  the row found by its identity after scrolling it into view"
echo "  visual/reports/twins.html     a refusal: two rows nothing tells apart, nothing pressed"
echo "  naive/reports/same.html       naive on the moved window: the recorded coordinates miss"
echo "each case has a report in visual/reports and naive/reports; the stores are"
echo "visual/store.sqlite and naive/store.sqlite (REPRISE_STORE=... reprise runs)"
