#!/bin/bash
# serverperf.sh: what the wheel's and the runtime's net/http servers make
# the machine do at one point of the sweep, from perf, with Go call stacks.
#
#   ./serverperf.sh wake 1s 30      # who wakes threads: sched:sched_wakeup, 10 s
#   ./serverperf.sh cpu 1s 30       # where the CPU goes: cpu-clock at 4999 Hz, 30 s
#   RUNS=4 ./serverperf.sh cpu 1s 30  # the same, 4 runs summed
#
# Runs bench/cmd/httpserver with -libs wheel,runtime at the deadline and
# connections given (RUNS times, default 1), attaches perf to each server
# process after the warm-up, and sorts the samples of all runs with
# serverstacks.py (docs/design/alarm.md quotes its tables); each run's
# httpserver line follows. BIN runs a prebuilt httpserver instead of
# building this checkout's. Needs perf with tracepoints (apt-get install
# linux-perf) and root; every process it starts ends with its run.
set -euo pipefail
mode=${1:?wake or cpu} deadline=${2:-1s} conns=${3:-30} runs=${RUNS:-1}
cd "$(dirname "$0")"
out=$(mktemp -d)
if [ -n "${BIN:-}" ]; then
	cp "$BIN" "$out/httpserver"
else
	go build -o "$out/httpserver" ./cmd/httpserver
fi
case $mode in
wake) secs=10 event=(-e sched:sched_wakeup) ;;
cpu) secs=30 event=(-e cpu-clock -F 4999) ;;
*) echo "serverperf.sh: mode is wake or cpu" >&2 && exit 2 ;;
esac
for run in $(seq 1 "$runs"); do
	"$out/httpserver" -deadline "$deadline" -conns "$conns" -duration $((secs + 6))s -warmup 2s -rounds 1 \
		-libs wheel,runtime >>"$out/run.jsonl" &
	driver=$!
	sleep 5
	perfs=()
	for lib in wheel runtime; do
		pid=$(pgrep -f "$out/httpserver -role server -lib $lib" | head -1)
		perf record -q "${event[@]}" --call-graph fp -p "$pid" -o "$out/$lib-$run.data" -- sleep $secs >/dev/null 2>&1 &
		perfs+=($!)
	done
	wait "${perfs[@]}" "$driver"
done
python3 serverstacks.py "$mode" "$out"/wheel-*.data "$out"/runtime-*.data
cat "$out/run.jsonl"
rm -rf "$out"
