#!/usr/bin/env bash
# The robustness benchmark (the headline figure in BENCHMARKS.md): the
# committed sample recording (recordings/fixture-demo.reprise) replayed on the
# fixture application under perturbations of its screen, with each strategy.
# Success is judged by the fixture's own log: the same controls received the
# same clicks, and the text field holds the same text. A click on any other
# control counts as a wrong click. Prints a Markdown table.
# Usage: scripts/bench-robustness.sh [debug|release] [quick]
# (quick: only the first two fixture scenarios, to try the script out)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
export OMP_THREAD_LIMIT=1
# The stand-in model server is test scaffolding: a feature.
if [[ $profile == release ]]; then cargo build --release --locked --bin reprise --features test-support; else cargo build --locked --bin reprise --features test-support; fi
cargo build --locked -p reprise-fixture
reprise=$PWD/target/$profile/reprise
fixture=$PWD/target/debug/reprise-fixture
source scripts/display.sh
start_private_display 1280x800
export REPRISE_STORE=$work/store.sqlite
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

# The stand-in model for the model columns (`reprise bench model-server`):
# it names elements by the text Tesseract reads in them and answers the
# vanilla strategy with the next recorded action. It is no model.
"$reprise" bench model-server >"$work/model-url" 2>/dev/null &
pids+=($!)
wait_for 10 "the stand-in model server's address" test -s "$work/model-url"
model_env=(REPRISE_OPENAI_BASE_URL="$(head -1 "$work/model-url")" REPRISE_OPENAI_MODEL=stand-in REPRISE_LLM_PROVIDERS=openai)

usage() { # the last run's model calls (cached) and tokens
  "$reprise" llm usage --run last --json | python3 -c '
import json, sys
totals = json.load(sys.stdin)
calls = sum(t["calls"] for t in totals)
cached = sum(t["cache_hits"] for t in totals)
tokens = sum(t["input_tokens"] + t["output_tokens"] for t in totals)
print(f"{calls} calls ({cached} cached), {tokens} tokens")'
}

calls() { "$reprise" llm usage --run last --json | python3 -c 'import json, sys; print(sum(t["calls"] for t in json.load(sys.stdin)))'; }
offline_calls=0

replay() { # 0 or 1 (with the stand-in model), then `reprise replay`'s arguments; stderr to $work/err
  local with_model=$1 envs=()
  shift
  if ((with_model)); then envs=("${model_env[@]}"); fi
  env "${envs[@]}" "$reprise" replay "$@" >/dev/null 2>"$work/err"
}

run() { # strategy, fixture flags...; prints: outcome wrong decide_ms seconds
  # (replay_extra: more replay arguments, e.g. a describer; with_model=1: the stand-in model)
  local strategy=$1; shift
  local log=$work/fixture.log
  rm -f "$log"
  "$fixture" --log "$log" "$@" >/dev/null 2>&1 &
  local fixture_pid=$!
  wait_for 30 "the fixture's window" xdotool search --onlyvisible --class reprise-fixture
  sleep 0.3
  local started ended code=0
  started=$(date +%s.%N)
  replay "${with_model:-0}" demo --strategy "$strategy" ${replay_extra:-} --speed 4 || code=$?
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
[[ ${2:-} == quick ]] && scenarios=("${scenarios[@]:0:2}")
echo "| scenario | naive | visual offline (1st run: cache miss) | visual offline (2nd run: cache hit) | visual, stand-in model describer | vanilla, stand-in model |"
echo "|---|---|---|---|---|---|"
for scenario in "${scenarios[@]}"; do
  name=${scenario%%|*}
  read -r -a flags <<<"${scenario#*|}"
  read -r n_out n_wrong _ n_sec < <(run naive "${flags[@]}")
  read -r v_out v_wrong v_ms v_sec < <(run visual "${flags[@]}")
  offline_calls=$((offline_calls + $(calls)))
  read -r h_out h_wrong h_ms h_sec < <(run visual "${flags[@]}")
  offline_calls=$((offline_calls + $(calls)))
  read -r m_out m_wrong m_ms m_sec < <(with_model=1 replay_extra="--describer llm" run visual "${flags[@]}")
  m_usage=$(usage)
  read -r a_out a_wrong _ a_sec < <(with_model=1 run vanilla "${flags[@]}")
  a_usage=$(usage)
  echo "| $name | $n_out, $n_wrong wrong clicks | $v_out, $v_wrong wrong, ${v_ms} ms/step to decide, ${v_sec} s | $h_out, $h_wrong wrong, ${h_ms} ms/step, ${h_sec} s | $m_out, $m_wrong wrong, $m_usage, ${m_sec} s | $a_out, $a_wrong wrong, $a_usage, ${a_sec} s |"
done
echo
echo "model calls made by the visual offline runs above: $offline_calls"

# A third-party application: xcalc computes 1 + 2 = in the recording, made
# here with its window at +100+100, and is replayed with its window moved.
calc_window() {
  wait_for 30 "xcalc's window" xdotool search --onlyvisible --class XCalc
  sleep 0.3
  xdotool search --onlyvisible --class XCalc | head -1
}
calc_shows() { # the number on xcalc's display, read by `reprise segment --describe`
  xdotool windowactivate --sync "$1" 2>/dev/null || true
  "$reprise" screenshot --active-window -o "$work/calc.png" >/dev/null
  "$reprise" segment "$work/calc.png" --describe --json | python3 -c '
import json, sys
texts = [s for s in json.load(sys.stdin) if s["kind"] == "text" and s["rect"]["y"] < 30]
print(max(texts, key=lambda s: s["rect"]["x"])["description"] if texts else "nothing")'
}
events_of() { "$reprise" list --json | python3 -c "import json, sys; print(next((r['n_events'] for r in json.load(sys.stdin) if r['name'] == '$1'), 0))"; }
xcalc -geometry +100+100 >/dev/null 2>&1 &
calc=$!
win=$(calc_window)
cx=$(xwininfo -id "$win" | awk '/Absolute upper-left X/ {print $NF}')
cy=$(xwininfo -id "$win" | awk '/Absolute upper-left Y/ {print $NF}')
"$reprise" record --name calc --stop-sequence none >/dev/null 2>&1 &
recorder=$!
poked() {
  xdotool mousemove 900 700 sleep 0.05 mousemove 901 700
  [[ $(events_of calc) -gt 0 ]]
}
wait_for 30 "a first event stored by the recorder" poked
for key in "69 362" "201 362" "113 362" "201 392"; do # 1 + 2 = in Debian's xcalc
  read -r dx dy <<<"$key"
  xdotool mousemove $((cx + dx)) $((cy + dy)) click 1 sleep 0.3
done
kill -INT "$recorder"; wait "$recorder" || true
recorded_shows=$(calc_shows "$win")
kill "$calc"; wait "$calc" 2>/dev/null || true
echo
echo "| xcalc, 1 + 2 = (recorded: it showed $recorded_shows), window moved from +100+100 to +420+260 | shows afterwards | exit code | model calls | seconds |"
echo "|---|---|---|---|---|"
for column in "naive|naive|0|" "visual offline|visual|0|" "visual, stand-in model describer|visual|1|--describer llm" "vanilla, stand-in model|vanilla|1|"; do
  IFS='|' read -r label strategy with_model extra <<<"$column"
  xcalc -geometry +420+260 >/dev/null 2>&1 &
  calc=$!
  win=$(calc_window)
  code=0
  started=$(date +%s.%N)
  replay "$with_model" calc --strategy "$strategy" $extra --speed 2 || code=$?
  ended=$(date +%s.%N)
  shows=$(calc_shows "$win")
  calls=$(if ((with_model)); then usage; else echo "none"; fi)
  kill "$calc"; wait "$calc" 2>/dev/null || true
  echo "| $label | $shows | $code | $calls | $(echo "$ended - $started" | bc | cut -c1-5) |"
done
