#!/usr/bin/env bash
# The fleet benchmark: Redis, `reprise serve` and WORKERS workers, each on its
# own virtual display with the fixture application; JOBS jobs of the
# committed sample (one submission, one row each) replayed naively at
# --speed SPEED. Prints, as Markdown: the fleet's throughput (jobs per
# minute), submit-to-start latency p50/p99, the same replays run one after
# another with `reprise replay` in the same run (the baseline), and the time
# to recover a job from a worker killed mid-job (kill -9 to the job's start
# on another worker, with --lease LEASE).
# Usage: scripts/bench-fleet.sh [--dry-run] [WORKERS] [JOBS] [SPEED] [LEASE]
# (--dry-run: the replays decide every step and inject nothing, so the
# figures are the dispatch's own)
set -euo pipefail
cd "$(dirname "$0")/.."
dry=()
if [[ ${1:-} == --dry-run ]]; then dry=(--dry-run); shift; fi
workers=${1:-2} jobs=${2:-8} speed=${3:-4} lease=${4:-5}
export OMP_THREAD_LIMIT=1
cargo build --locked -q --workspace
reprise=$PWD/target/debug/reprise fixture=$PWD/target/debug/reprise-fixture
work=$(mktemp -d) pids=()
# The teardown is bounded: what has not ended 10 s after SIGTERM is killed.
teardown() {
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null
  rm -rf "$work"
}
trap teardown EXIT
source scripts/display.sh
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(free_port) port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --appendonly yes --appendfsync always --save "" >/dev/null &
pids+=($!)
wait_for 10 "Redis's answer on port $redis_port" redis-cli -p "$redis_port" ping
export REPRISE_FLEET_USER_TOKEN=bench-user-token-0123456789 REPRISE_FLEET_WORKER_TOKEN=bench-worker-token-0123456789
export REPRISE_FLEET_SERVER=http://127.0.0.1:$port
REPRISE_STORE=$work/server.sqlite "$reprise" serve --listen "127.0.0.1:$port" \
  --redis "redis://127.0.0.1:$redis_port" --lease "$lease" 2>"$work/serve.log" &
pids+=($!)
worker_pids=()
for n in $(seq "$workers"); do
  desk=$work/desktop$n && mkdir "$desk"
  start_display 1280x800 "$desk"
  eval "display$n=$DISPLAY"
  "$fixture" --log "$desk/fixture.log" --x 200 --y 150 >/dev/null 2>&1 &
  pids+=($!)
  wait_for 30 "the fixture's window on $DISPLAY" xdotool search --onlyvisible --class reprise-fixture
  REPRISE_FLEET_TOKEN=$REPRISE_FLEET_WORKER_TOKEN REPRISE_STORE=$desk/store.sqlite \
    "$reprise" worker 2>"$desk/worker.log" &
  pids+=($!) && worker_pids+=($!)
done
export REPRISE_FLEET_TOKEN=$REPRISE_FLEET_USER_TOKEN
wait_for 30 "the fleet server's answer (its log: $work/serve.log)" "$reprise" jobs list
# Each worker copies the recording once: a first job, not timed.
"$reprise" jobs submit recordings/fixture-demo.reprise --upload --strategy naive --speed "$speed" "${dry[@]}" >"$work/warm"
now() { date +%s.%N; }
final() { # every job of the file $1 in a final state
  "$reprise" jobs list --json | python3 -c '
import json, sys
ids = set(open(sys.argv[1]).read().split())
jobs = [j for j in json.load(sys.stdin) if j["id"] in ids]
sys.exit(0 if len(jobs) == len(ids) and all(j["state"] not in ("queued", "assigned", "running", "retrying") for j in jobs) else 1)' "$1"
}
wait_for 300 "the end of the first job" final "$work/warm"
# The batch: JOBS rows in one submission.
{ echo text; for i in $(seq "$jobs"); do echo "user$i"; done; } >"$work/rows.csv"
started=$(now)
"$reprise" jobs submit demo --each "$work/rows.csv" --strategy naive --speed "$speed" "${dry[@]}" >"$work/batch"
wait_for 3600 "the end of the batch's $jobs jobs" final "$work/batch"
fleet_seconds=$(python3 -c "print($(now) - $started)")
"$reprise" jobs list --json >"$work/jobs.json"
# The baseline: the same replays one after another on one display.
export DISPLAY=$display1 REPRISE_STORE=$work/sequential.sqlite
"$reprise" import recordings/fixture-demo.reprise >/dev/null
started=$(now)
for i in $(seq "$jobs"); do
  "$reprise" replay demo --strategy naive --speed "$speed" --set "text=user$i" "${dry[@]}" >/dev/null 2>&1 || true
done
sequential_seconds=$(python3 -c "print($(now) - $started)")
unset REPRISE_STORE
# Recovery: a slow job that may be redone, its worker killed after its
# first step; the time until another worker starts it.
recovery=-
if ((workers >= 2)); then
  id=$("$reprise" jobs submit demo --strategy naive --speed 0.2 --retry restart "${dry[@]}" 2>/dev/null)
  stepped() { "$reprise" jobs show "$id" --json | grep -q '"kind": "step"'; }
  wait_for 120 "the slow job's first step" stepped
  owner=$("$reprise" jobs show "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["worker"])')
  for n in $(seq "$workers"); do
    if grep -q "reprise worker $owner:" "$work/desktop$n/worker.log"; then kill -9 "${worker_pids[$((n - 1))]}"; fi
  done
  killed=$(now)
  restarted() {
    "$reprise" jobs show "$id" --json | python3 -c '
import json, sys
job = json.load(sys.stdin)["job"]
sys.exit(0 if job["attempt"] >= 2 and job["worker"] != sys.argv[1] else 1)' "$owner"
  }
  wait_for 300 "the killed worker's job started by another worker" restarted
  recovery=$(python3 -c "print(f'{$(now) - $killed:.1f} s')")
fi
python3 - "$work/jobs.json" "$work/batch" "$fleet_seconds" "$sequential_seconds" "$workers" "$jobs" "$recovery" "${dry[*]:-real}" <<'EOF'
import json, sys, datetime
path, batch, fleet, sequential, workers, n, recovery, mode = sys.argv[1:]
fleet, sequential, workers, n = float(fleet), float(sequential), int(workers), int(n)
ids = set(open(batch).read().split())
jobs = [j for j in json.load(open(path)) if j["id"] in ids]
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
waits = sorted(t(j["started"]) - t(j["created"]) for j in jobs)
q = lambda p: waits[min(len(waits) - 1, int(round(p * (len(waits) - 1))))]
states = {}
for j in jobs:
    states[j["state"]] = states.get(j["state"], 0) + 1
print(f"| replays | workers | jobs | fleet wall | jobs/min | submit-to-start p50 | p99 | one after another | fleet vs one after another | recovery after kill -9 | final states |")
print(f"|---|---|---|---|---|---|---|---|---|---|---|")
print(f"| {mode} | {workers} | {n} | {fleet:.1f} s | {n / fleet * 60:.1f} | {q(0.5):.2f} s | {q(0.99):.2f} s | {sequential:.1f} s | {fleet / sequential:.2f}x | {recovery} | {', '.join(f'{k} {v}' for k, v in sorted(states.items()))} |")
EOF
