#!/usr/bin/env bash
# The fleet server under clients that take and do not give: Redis and
# `reprise serve` (release of nothing: the debug build the tests use),
# then scripts/fleet-load.py: IDLE idle connections and UPLOADS concurrent
# uploads of MB MB while GET /api/jobs is timed, against the same requests
# with nothing else going on. Prints Markdown.
# Usage: scripts/bench-fleet-load.sh [IDLE] [UPLOADS] [MB] [REQUESTS]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked -q --workspace
reprise=$PWD/target/debug/reprise
work=$(mktemp -d) pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
source scripts/display.sh
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(free_port) port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --save "" >/dev/null &
pids+=($!)
wait_for 10 "Redis's answer on port $redis_port" redis-cli -p "$redis_port" ping
export REPRISE_FLEET_USER_TOKEN=bench-user-token-0123456789 REPRISE_FLEET_WORKER_TOKEN=bench-worker-token-0123456789
REPRISE_STORE=$work/server.sqlite "$reprise" serve --listen "127.0.0.1:$port" \
  --redis "redis://127.0.0.1:$redis_port" --max-upload 200 2>"$work/serve.log" &
server=$!
pids+=($server)
wait_for 30 "the fleet server on port $port" python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))"
python3 scripts/fleet-load.py "$port" "$server" "$REPRISE_FLEET_USER_TOKEN" "$@"
