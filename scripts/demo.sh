#!/usr/bin/env bash
# The main job: on a private virtual display, record a task on the fixture
# application, perturb the screen (move its window, change its theme), replay
# the recording with the naive baseline and with the visual strategy offline,
# and write the replay reports. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
# Tesseract is several times faster on two cores with one OpenMP thread.
export OMP_THREAD_LIMIT=1

cargo build --workspace --locked
reprise=$PWD/target/debug/reprise
fixture=$PWD/target/debug/reprise-fixture
out=$PWD/demo-output
rm -rf "$out" && mkdir -p "$out"
export REPRISE_STORE=$out/store.sqlite

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

source scripts/display.sh
start_display 1280x800 "$out"
echo "virtual display $DISPLAY is up"

start_fixture() { # log-name x y [more fixture flags]
  "$fixture" --log "$out/$1" --x "$2" --y "$3" "${@:4}" >/dev/null 2>&1 &
  fixture_pid=$!
  pids+=("$fixture_pid")
  for _ in $(seq 100); do xdotool search --onlyvisible --class reprise-fixture >/dev/null 2>&1 && break; sleep 0.1; done
  read -r origin_x origin_y < <(xwininfo -id "$(xdotool search --onlyvisible --class reprise-fixture | head -1)" |
    awk '/Absolute upper-left X/ {x=$NF} /Absolute upper-left Y/ {y=$NF} END {print x, y}')
}
click() { xdotool mousemove $((origin_x + $1)) $((origin_y + $2)) click "${3:-1}"; sleep 0.3; }

echo "recording a task on the fixture application"
start_fixture recorded.log 200 150
"$reprise" record --name demo --task "sign in as alice, remember me, open Gamma, save" >"$out/record.txt" 2>&1 &
recorder=$!
for _ in $(seq 100); do
  xdotool mousemove 40 40 sleep 0.05 mousemove 41 40
  "$reprise" list --json | grep -q '"n_events": [1-9]' && break
done
click 199 43
xdotool type --delay 60 "alice"
click 16 66
xdotool mousemove $((origin_x + 19)) $((origin_y + 162)) click --repeat 2 --delay 80 1
sleep 0.3
click 29 217
xdotool key ctrl ctrl ctrl
wait "$recorder"
cat "$out/record.txt"
"$reprise" show demo >"$out/recording.txt"
"$reprise" visualize demo -o "$out/recording.html"
kill "$fixture_pid"

echo "perturbing the screen: the window moves by +220,+150 and switches to a dark theme"
echo "replaying with the naive strategy (the recorded coordinates): the baseline"
start_fixture naive.log 420 300 --theme dark
"$reprise" replay demo --strategy naive --speed 2 || true
"$reprise" report last -o "$out/report-naive.html"
kill "$fixture_pid"

echo "replaying with the visual strategy, offline (no model): finds each element again"
start_fixture visual.log 420 300 --theme dark
"$reprise" replay demo --strategy visual --speed 2 || true
"$reprise" report last -o "$out/report-visual.html"
kill "$fixture_pid"

summary() { # the controls clicked, and the text field's final value
  local clicks text
  clicks=$(grep -o '"control":\("[^"]*"\|null\),"event":"\(click\|double_click\)"' "$out/$1" |
    sed 's/"control":\(.*\),"event":"\(.*\)"/\2 \1/' | tr '\n' ',' | sed 's/,$//')
  text=$(grep '"event":"text"' "$out/$1" | tail -1 | grep -o '"value":"[^"]*"' | cut -d: -f2-)
  echo "${clicks:-no clicks}; text ${text:-none}"
}
{
  echo "What the application received:"
  echo "  when recorded:          $(summary recorded.log)"
  echo "  naive, screen drifted:  $(summary naive.log)"
  echo "  visual, screen drifted: $(summary visual.log)"
} | tee "$out/summary.txt"
echo
echo "demo output in $out:"
echo "  recording.html       the recording over its screenshots"
echo "  report-naive.html    naive replay after the screen drifted: it misses"
echo "  report-visual.html   visual replay, offline, on the same drifted screen"
