#!/usr/bin/env bash
# The replay's pace: how much longer visual replay (the default strategy and
# ladder) takes than naive (the recorded coordinates at the recorded pace)
# on unchanged screens of third-party applications, side by side in one
# run. Each scenario's task is recorded once, then replayed ROUNDS times
# with each strategy, naive then visual, each on a fresh, unchanged
# application (the scenario's PACE mode); a replay's wall time is measured
# around its process. Prints a Markdown table: per application, each
# strategy's median seconds, how many of its replays the application
# itself shows were right (the row or file it printed, the text it saved,
# as for the recording) and its exit codes, and visual's median over
# naive's.
# Usage: bash scripts/bench-pace.sh [ROUNDS] [debug|release]   (after cargo
# build, or cargo build --release for release). SCENARIOS names fewer
# scenarios; KEEP=DIR keeps each replay's messages there (with
# REPRISE_LOG=debug, where a replay's time went).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/display.sh
rounds=${1:-3}
profile=${2:-debug}
built $profile
start_private_display 1600x1200
export OMP_THREAD_LIMIT=1

echo "| application (task) | naive: median s | visual: median s | visual / naive | naive right | visual right | naive exits | visual exits |"
echo "|---|---|---|---|---|---|---|---|"
for scenario in ${SCENARIOS:-zenity-list fixture-table zenity-combo zenity-files save-entry}; do
  out=$work/$scenario
  mkdir -p "$out/runtime"
  chmod 700 "$out/runtime"
  if ! XDG_RUNTIME_DIR=$out/runtime PACE=$rounds REPRISE=$reprise REPRISE_STORE=$out/store.sqlite \
    SCRIPTS=$PWD/scripts OUT=$out dbus-run-session -- bash "tests/scenarios/$scenario.sh" \
    >>"$out/scenario.log" 2>&1; then
    echo "error: the $scenario scenario failed; it said: $(tail -5 "$out/scenario.log")" >&2
    exit 1
  fi
  /usr/bin/python3 - "$out" "$rounds" "$scenario" <<'PY'
import pathlib, statistics, sys
out, rounds, scenario = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
# What the application itself did, judged against what it did for the
# recording: the row or file it printed, the text it saved (a path names
# its case's own folder).
reference = {"zenity-files": "files"}.get(scenario, "recorded")
answer = ".saved" if scenario == "save-entry" else ".out"
wanted = (out / f"{reference}{answer}").read_text()
def right(case):
    got = out / f"{case}{answer}"
    return got.exists() and got.read_text().strip() != "" and \
        got.read_text() == wanted.replace(f"/{reference}/", f"/{case}/")
seconds, codes, rights = {}, {}, {}
for strategy in ("naive", "visual"):
    cases = [f"{strategy}-{r}" for r in range(1, rounds + 1)]
    seconds[strategy] = [float((out / f"{case}.seconds").read_text()) for case in cases]
    codes[strategy] = ",".join((out / f"{case}.code").read_text().strip() for case in cases)
    rights[strategy] = f"{sum(right(case) for case in cases)}/{rounds}"
naive, visual = (statistics.median(seconds[s]) for s in ("naive", "visual"))
print(f"| {scenario} | {naive:.2f} | {visual:.2f} | {visual / naive:.2f} | {rights['naive']} | {rights['visual']} | {codes['naive']} | {codes['visual']} |")
PY
done
[[ -z ${KEEP:-} ]] || cp -r "$work/." "$KEEP"
