#!/usr/bin/env bash
# The robustness benchmark (the headline figure in BENCHMARKS.md): the
# committed sample recording (recordings/fixture-demo.reprise) replayed on the
# fixture application under perturbations of its screen, with each strategy.
# Success is judged by the fixture's own log: the same controls received the
# same clicks, and the text field holds the same text. A click on any other
# control counts as a wrong click. Prints a Markdown table.
# Usage: scripts/bench-robustness.sh [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
unset WAYLAND_DISPLAY XDG_SESSION_TYPE
export OMP_THREAD_LIMIT=1
if [[ $profile == release ]]; then cargo build --release --locked --bin reprise; else cargo build --locked --bin reprise; fi
cargo build --locked -p reprise-fixture
reprise=$PWD/target/$profile/reprise
fixture=$PWD/target/debug/reprise-fixture
work=$(mktemp -d)
export REPRISE_STORE=$work/store.sqlite
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source scripts/display.sh
start_display 1280x800 "$work"
"$reprise" import recordings/fixture-demo.reprise >/dev/null

expected='click User name,click Remember me,click row:Gamma,double_click row:Gamma,click Save,text alice'
allowed='User name|Remember me|row:Gamma|Save'

received() { # the clicked controls (repeats of a click folded) and the final text
  local clicks text
  clicks=$(grep -o '"control":\("[^"]*"\|null\),"event":"\(click\|double_click\)"' "$1" |
    sed 's/"control":"\{0,1\}\([^"]*\)"\{0,1\},"event":"\(.*\)"/\2 \1/' | uniq | tr '\n' ',')
  text=$(grep '"event":"text"' "$1" | tail -1 | grep -o '"value":"[^"]*"' | cut -d'"' -f4 || true)
  echo "${clicks}text ${text}"
}
wrong_clicks() {
  grep -o '"control":\("[^"]*"\|null\),"event":"\(click\|double_click\)"' "$1" | grep -Evc "\"($allowed)\"" || true
}
decide_ms() { # the mean decision time of the steps aimed at an element, from a report
  tr -d '\n' <"$1" | grep -o 'reason</td><td>found[^<]*</td></tr>.\{0,400\}decided in [0-9.]* ms' |
    grep -o 'decided in [0-9.]*' | awk '{sum += $3; n++} END {if (n) printf "%.0f", sum / n; else print "-"}'
}

run() { # strategy, fixture flags...; prints: outcome wrong decide_ms seconds
  local strategy=$1; shift
  local log=$work/fixture.log
  rm -f "$log"
  "$fixture" --log "$log" "$@" >/dev/null 2>&1 &
  local fixture_pid=$!
  for _ in $(seq 100); do xdotool search --onlyvisible --class reprise-fixture >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 0.3
  local started ended code=0
  started=$(date +%s.%N)
  "$reprise" replay demo --strategy "$strategy" --speed 4 >/dev/null 2>"$work/err" || code=$?
  ended=$(date +%s.%N)
  kill "$fixture_pid"; wait "$fixture_pid" 2>/dev/null || true
  "$reprise" report last -o "$work/report.html" >/dev/null
  local got outcome
  got=$(received "$log")
  if [[ $got == "${expected//,/,}" ]]; then outcome=success; elif [[ $code == 10 ]] && grep -q "refusing to guess\|no element on the screen" "$work/err"; then outcome=refused; else outcome=failed; fi
  echo "$outcome $(wrong_clicks "$log") $(decide_ms "$work/report.html") $(echo "$ended - $started" | bc | cut -c1-5)"
}

scenarios=(
  "unchanged|--x 200 --y 150"
  "window moved|--x 420 --y 300"
  "window resized|--x 200 --y 150 --width 600 --height 480"
  "extra list row|--x 200 --y 150 --extra-row"
  "buttons swapped|--x 200 --y 150 --swap-buttons"
  "dark theme|--x 200 --y 150 --theme dark"
  "scale 1.25|--x 200 --y 150 --scale 1.25 --width 525 --height 500"
  "moved + dark theme|--x 380 --y 260 --theme dark"
  "resized + extra row + swapped|--x 300 --y 120 --width 560 --height 460 --extra-row --swap-buttons"
)
echo "| scenario | naive | visual offline (1st run: cache miss) | visual offline (2nd run: cache hit) |"
echo "|---|---|---|---|"
for scenario in "${scenarios[@]}"; do
  name=${scenario%%|*}
  read -r -a flags <<<"${scenario#*|}"
  read -r n_out n_wrong _ n_sec < <(run naive "${flags[@]}")
  read -r v_out v_wrong v_ms v_sec < <(run visual "${flags[@]}")
  read -r h_out h_wrong h_ms h_sec < <(run visual "${flags[@]}")
  echo "| $name | $n_out, $n_wrong wrong clicks | $v_out, $v_wrong wrong, ${v_ms} ms/step to decide, ${v_sec} s | $h_out, $h_wrong wrong, ${h_ms} ms/step, ${h_sec} s |"
done
echo
echo "model calls: $("$reprise" llm usage --json | grep -c '"calls"' || true) providers used (offline: none)"
