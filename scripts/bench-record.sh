#!/usr/bin/env bash
# The recorder's benchmark (figures go to BENCHMARKS.md): a scripted 60-second
# session on xcalc and xterm on a private Xvfb, as measured for OpenAdapt's
# recorder (736 moves, 60 clicks, 200 typed characters, 20 scroll ticks), then
# an input burst. Reports CPU, memory over time, stored bytes, lost events,
# the time from Ctrl-C to exit and the size of the session's export, then
# starts and stops the recorder STARTS times and counts hangs.
# Usage: [BASELINE=older-reprise] scripts/bench-record.sh [SECONDS] [STARTS] [release|debug]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
starts=${2:-50}
profile=${3:-release}
if [[ $profile == release ]]; then cargo build --release --locked --bin reprise; else cargo build --locked --bin reprise; fi
reprise=$PWD/target/$profile/reprise
source scripts/display.sh
start_private_display 1920x1080
export REPRISE_STORE=$work/store.sqlite
xcalc -geometry +100+100 >/dev/null 2>&1 & pids+=($!)
xterm -geometry 80x24+600+100 >/dev/null 2>&1 & pids+=($!)
sleep 1

"$reprise" bench capture --frames 30

run_recorder() { # name; starts the recorder under /usr/bin/time
  /usr/bin/time -f "%U %S %M" -o "$work/$1.time" "$reprise" record --name "$1" --stop-sequence none \
    >"$work/$1.out" 2>"$work/$1.err" &
  recorder=$!
  # Moves the pointer until the recorder has stored an event.
  poked() {
    xdotool mousemove 1000 900 sleep 0.05 mousemove 1001 900
    "$reprise" list --json | grep -q '"n_events": [1-9]'
  }
  wait_for 30 "a first event stored by the recorder (its messages: $work/$1.err)" poked
  base_events=$("$reprise" list --json | grep -o '"n_events": [0-9]*' | tail -1 | grep -o '[0-9]*$')
}
stop_recorder() { # sets exit_seconds (from SIGINT to the recorder's exit) and hung
  local started child
  # SIGINT goes to reprise itself: /usr/bin/time ignores it while it waits.
  child=$(pgrep -P "$recorder" | head -1)
  started=$(date +%s.%N)
  kill -INT "$child"
  hung=1
  for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || { hung=0; break; }; sleep 0.05; done
  ((hung)) && kill -KILL "$child" 2>/dev/null
  wait "$recorder" || true
  exit_seconds=$(echo "$(date +%s.%N) - $started" | bc)
}
rss_of() { awk '/VmRSS/ {print $2}' "/proc/$(pgrep -P "$recorder" | head -1)/status" 2>/dev/null || echo 0; }

# session NAME: the scripted session, recorded into a store of its own.
session() {
export REPRISE_STORE=$work/$1.sqlite
echo "== scripted session: $seconds s, capture: ${REPRISE_CAPTURE:-the cheaper path} =="
run_recorder "$1"
session_started=$(date +%s.%N)
rss_samples=()
per_tick=$(echo "$seconds / 20 - 1.2" | bc -l) # a tick's input takes about 1.2 s
for tick in $(seq 20); do
  # Each tick: ~37 moves, 3 clicks, 10 characters, 1 scroll tick.
  for i in $(seq 37); do xdotool mousemove $((300 + (tick * 13 + i * 7) % 900)) $((300 + (i * 11) % 500)); done
  xdotool mousemove 140 260 click 1 mousemove 180 260 click 1 mousemove 700 300 click 1
  xdotool type --delay 20 "abcdefghij"
  xdotool click 5
  rss_samples+=("$(rss_of "$1")")
  sleep "$per_tick"
done
elapsed=$(echo "$(date +%s.%N) - $session_started" | bc)
stop_recorder
read -r user sys max_kb <"$work/$1.time"
events=$("$reprise" list --json | grep -o '"n_events": [0-9]*' | tail -1 | grep -o '[0-9]*$')
shots=$("$reprise" list --json | grep -o '"n_screenshots": [0-9]*' | tail -1 | grep -o '[0-9]*$')
# The store and its log, not the 4 MiB kept free beside it for deletions.
store_bytes=$(find "$work" -maxdepth 1 -name "$1.sqlite*" ! -name '*-reserve' -printf '%s\n' | paste -sd+ | bc)
expected=$((20 * (37 + 3 * 2 + 10 * 2 + 1)))
echo "events stored after the readiness wiggle: $((events - base_events)) (injected: $expected, moves to an unchanged position send none)"
echo "screenshots stored: $shots"
echo "CPU: user $user s + system $sys s over $elapsed s = $(echo "($user + $sys) * 60 / $elapsed" | bc -l | cut -c1-5) CPU-s per minute"
echo "peak RSS: $((max_kb / 1024)) MiB; RSS samples (KiB): ${rss_samples[*]}"
echo "store: $store_bytes bytes = $(echo "$store_bytes * 60 / $elapsed / 1048576" | bc -l | cut -c1-5) MiB per minute"
python3 - "$REPRISE_STORE" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for kind, cond in (("whole frames", "base_hash IS NULL"), ("patches", "base_hash IS NOT NULL")):
    n, size = db.execute(f"SELECT count(*), coalesce(sum(length(png)), 0) FROM images WHERE {cond}").fetchone()
    print(f"  {kind}: {n}, {size} bytes")
n, size = db.execute("SELECT count(*), coalesce(sum(length(event)), 0) FROM action_events").fetchone()
print(f"  events: {n}, {size} bytes of JSON")
PY
echo "Ctrl-C to exit: $exit_seconds s"
grep -h "note:" "$work/$1.err" || true
"$reprise" export "$1" -o "$work/$1.export" >/dev/null
echo "export: $(stat -c %s "$work/$1.export") bytes ($(head -c 4 "$work/$1.export" | tr -dc 'A-Z'))"
}
# With BASELINE=/path/to/an/older/reprise, that build's session first: the
# figure a change is measured against, in the same run. Then the recorder's
# capture through xcap (the path before the raw one), then through the path
# it picks itself: only same-run figures compare on this machine.
if [[ -n ${BASELINE:-} ]]; then
  current=$reprise
  reprise=$BASELINE
  echo "(baseline: $("$reprise" --version))"
  session session-baseline
  reprise=$current
fi
REPRISE_CAPTURE=xcap session session-xcap
session session
export REPRISE_STORE=$work/store.sqlite

echo "== input burst: 3000 pointer moves as fast as XTEST takes them =="
run_recorder burst
args=()
for i in $(seq 3000); do args+=(mousemove $((100 + i % 1500)) $((200 + (i / 1500) * 10))); done
burst_started=$(date +%s.%N)
xdotool "${args[@]}"
burst_seconds=$(echo "$(date +%s.%N) - $burst_started" | bc)
sleep 1
stop_recorder
events=$("$reprise" list --json | grep -o '"n_events": [0-9]*' | tail -1 | grep -o '[0-9]*$')
echo "moves stored: $((events - base_events)) of 3000 injected in $burst_seconds s ($(echo "3000 / $burst_seconds" | bc) events/s)"

echo "== $starts starts and stops =="
hangs=0 slowest=0
for i in $(seq "$starts"); do
  run_recorder "start-$i"
  stop_recorder
  ((hangs += hung)) || true
  slowest=$(echo "if ($exit_seconds > $slowest) $exit_seconds else $slowest" | bc)
done
echo "starts: $starts, hangs (no exit within 5 s of SIGINT): $hangs, slowest exit: $slowest s"
