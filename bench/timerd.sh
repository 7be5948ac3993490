#!/usr/bin/env bash
# timerd.sh runs the timerd load test (bench/cmd/timerdload) on this machine: a Redis server of
# its own, one timerd process on it, the load generator beside them; then stops both by pid.
#
#   bench/timerd.sh [timerdload flags...]      e.g. bench/timerd.sh -tasks 20000 -clients 64
#
# Ports: Redis on $TIMERD_LOAD_REDIS_PORT (16390), timerd on $TIMERD_LOAD_PORT (18080).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
rport=${TIMERD_LOAD_REDIS_PORT:-16390}
port=${TIMERD_LOAD_PORT:-18080}
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
	rm -rf "$work"
}
trap cleanup EXIT

command -v redis-server >/dev/null || { echo "timerd.sh: redis-server is missing (scripts/redis.sh up installs it)" >&2; exit 1; }
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.05; done

(cd "$root/timerd" && go build -o "$work/timerd" ./cmd/timerd)
(cd "$root/bench" && go build -o "$work/timerdload" ./cmd/timerdload)
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$work/token"
"$work/timerd" -listen "127.0.0.1:$port" -redis-url "redis://127.0.0.1:$rport/0" -token-file "$work/token" \
	-allow-callback 127.0.0.1/32 -namespace "load$(date +%s)" -rate 0 -log-level warn 2>"$work/timerd.log" &
pids+=($!)
for _ in $(seq 200); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.05; done

echo "timerd load test: $(nproc) CPUs, $(redis-server --version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/timerdload" -url "http://127.0.0.1:$port" -token-file "$work/token" "$@"
