#!/usr/bin/env bash
# What an idle fleet server costs with many jobs waiting: Redis and
# `reprise serve` (each REPRISE binary given, on a store of its own), the
# sample uploaded and QUEUED jobs submitted for a label no desktop has,
# then, with nothing else going on, the server's CPU over SECONDS seconds
# and 100 timed GET /api/workers. Prints a Markdown row per binary.
# Usage: scripts/bench-fleet-idle.sh QUEUED SECONDS REPRISE...
set -euo pipefail
cd "$(dirname "$0")/.."
queued=$1 seconds=$2
shift 2
source scripts/display.sh
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export REPRISE_FLEET_USER_TOKEN=bench-user-token-0123456789 REPRISE_FLEET_WORKER_TOKEN=bench-worker-token-0123456789
echo "| build | queued | server CPU, idle | GET /api/workers p50 | p99 |"
echo "|---|---|---|---|---|"
for reprise in "$@"; do
  work=$(mktemp -d) pids=()
  redis_port=$(free_port) port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --save "" >/dev/null &
  pids+=($!)
  wait_for 10 "Redis's answer on port $redis_port" redis-cli -p "$redis_port" ping
  REPRISE_STORE=$work/server.sqlite "$reprise" serve --listen "127.0.0.1:$port" \
    --redis "redis://127.0.0.1:$redis_port" 2>"$work/serve.log" &
  server=$!
  pids+=($server)
  wait_for 30 "the fleet server on port $port" python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))"
  # In submissions of at most 1,000 rows (each answered within the
  # client's 30 s).
  recording=(recordings/fixture-demo.reprise --upload)
  for ((done = 0; done < queued; done += 1000)); do
    n=$((queued - done < 1000 ? queued - done : 1000))
    python3 -c "print('text'); [print(f'row{i}') for i in range($n)]" >"$work/rows.csv"
    REPRISE_FLEET_TOKEN=$REPRISE_FLEET_USER_TOKEN REPRISE_FLEET_SERVER=http://127.0.0.1:$port \
      REPRISE_STORE=$work/client.sqlite "$reprise" jobs submit "${recording[@]}" \
      --label gpu=yes --each "$work/rows.csv" >/dev/null
    recording=(demo)
  done
  sleep 3
  python3 - "$server" "$seconds" "$port" "$queued" "$reprise" <<'PY'
import os, sys, time, http.client, statistics
pid, seconds, port, queued, binary = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
before, start = cpu(), time.monotonic()
time.sleep(seconds)
share = (cpu() - before) / (time.monotonic() - start)
token = os.environ["REPRISE_FLEET_USER_TOKEN"]
times = []
for _ in range(100):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    began = time.monotonic()
    connection.request("GET", "/api/workers", headers={"Authorization": f"Bearer {token}"})
    connection.getresponse().read()
    times.append((time.monotonic() - began) * 1000)
    connection.close()
times.sort()
print(f"| {binary} | {queued} | {share * 100:.1f} % of a core | {statistics.median(times):.1f} ms | {times[98]:.1f} ms |")
PY
  kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true
  rm -rf "$work"
done
