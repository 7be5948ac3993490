#!/usr/bin/env bash
# Runs every comparison and regenerates docs/BENCHMARKS.md, its plots and
# the raw outputs under docs/bench/.
#
#   ./run.sh                 full run (51 minutes on 2 cores at b579567, the
#                            matrix's 15 included)
#   BENCH_QUICK=1 ./run.sh   quick run (under 5 minutes on 2 cores, and the
#                            matrix's 3)
#
# Raw `go test -bench` outputs are kept so that benchstat can compare runs:
#   go run golang.org/x/perf/cmd/benchstat@latest -col /lib ../docs/bench/headline.txt
set -euo pipefail
cd "$(dirname "$0")"

out=../docs/bench
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

if [[ -n "${BENCH_QUICK:-}" ]]; then
	mode=quick
	sweep_ns=0,1000,100000,1000000 sweep_count=1 sweep_time=200ms
	head_count=6 head_time=300ms head_libs=wheel,runtime # go-zero's 1M figures come from the sweep
	acc_n=100000 acc_grace=5s burst_n=1000000 burst_lead=6s purg_dur=5s purg_rounds=1 idle_dur=5s
	http_dur=5s http_rounds=1 http_deadlines=50ms,200ms http_conns=300,3000 # about 35 s
	fire_deadlines=200ms fire_dur=5s fire_rounds=1 # about 20 s
	scal_count=1 scal_time=300ms # about 70 s
else
	mode=full
	sweep_ns=0,1000,100000,1000000,5000000 sweep_count=3 sweep_time=1s
	head_count=10 head_time=1s head_libs=wheel,runtime,gozero
	acc_n=100000 acc_grace=10s burst_n=1000000 burst_lead=8s purg_dur=10s purg_rounds=5 idle_dur=10s
	http_dur=10s http_rounds=3 http_deadlines=50ms,200ms,1s,10s http_conns=30,300,3000 # about 8 minutes
	fire_deadlines=50ms,200ms,1s,10s fire_dur=10s fire_rounds=3 # about 10 minutes
	scal_count=3 scal_time=1s # about 4 minutes
fi

commands=()
step() { # step OUTFILE ENV... -- COMMAND...: runs a command, logging it.
	local file=$1; shift
	local envs=()
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	# Logged as the equivalent commands to type in bench/.
	local c="$*"
	c=${c//"$bin/bench.test -test.run ^\$"/"go test -run '^\$'"}
	c=${c//"$bin/core.test -test.run ^\$"/"go test -C .. -run '^\$'"}
	c=${c//-test./-}
	c=${c//"$bin/"/"go run ./cmd/"}
	commands+=("${envs[*]:+${envs[*]} }$c >> docs/bench/$(basename "$file")")
	echo "+ ${envs[*]:-} $*" >&2
	# A failing step is recorded and the run goes on: one library that
	# cannot finish a workload must not hide the others' results.
	if ! env "${envs[@]}" "$@" >>"$file"; then
		failures+=("${commands[-1]}")
	fi
}
failures=()

# Only this script's outputs: other tools write beside them.
for f in ops headline heap parallel scaling benchstat env; do rm -f "$out/$f.txt"; done
for f in accuracy burst purgatory idle httpserver firecost; do rm -f "$out/$f.jsonl"; done
start=$(date +%s)

# The commit measured is the one the programs are built from, read before
# they are, so that a commit made while they run is not named instead.
dirty=$(git -C .. status --porcelain -- ':!docs' ':!*.md' 2>/dev/null | head -1)
commit="$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ with uncommitted changes}"
go test -c -o "$bin/bench.test" .
(cd .. && go test -c -o "$bin/core.test" .) # the root package's own benchmarks
for c in accuracy burst purgatory idle httpserver firecost; do go build -o "$bin/$c" "./cmd/$c"; done
tb="$bin/bench.test -test.run ^$"

# 1, 2: AfterFunc+Stop and Reset against N pending timers, every N.
step "$out/ops.txt" BENCH_NS=$sweep_ns -- $tb -test.bench '^Benchmark(AfterFuncStop|Reset)$' \
	-test.benchtime $sweep_time -test.count $sweep_count
# The headline: the same at 1M, repeated for medians and benchstat. Each
# repetition runs every library in turn (rather than -count, which repeats
# one library before the next), so a change in the machine's load over the
# run falls on all of them alike.
for ((i = 0; i < head_count; i++)); do
	step "$out/headline.txt" BENCH_NS=1000000 BENCH_LIBS=$head_libs -- $tb -test.bench '^Benchmark(AfterFuncStop|Reset)$' \
		-test.benchtime $head_time -test.count 1
done
# 3: live heap per pending timer at 1M.
step "$out/heap.txt" BENCH_HEAP_N=1000000 -- $tb -test.bench '^BenchmarkHeap$' -test.benchtime 1x -test.count 1
# 6: AfterFunc+Stop from every P.
step "$out/parallel.txt" BENCH_PAR_NS=0,1000000 -- $tb -test.bench '^BenchmarkParallelAfterFuncStop$' \
	-test.benchtime $sweep_time -test.count $sweep_count
# 6a: the same from 1 to 16 Ps, with what decides scaling (collisions,
# lock waits, lock hold time), from the root package's benchmarks.
step "$out/scaling.txt" -- $bin/core.test -test.run '^$' -test.bench '^BenchmarkParallelAfterFuncStop$/goroutines/pending=1000000/impl' \
	-test.cpu 1,2,4,8,16 -test.benchtime $scal_time -test.count $scal_count
step "$out/scaling.txt" -- $bin/core.test -test.run '^$' -test.bench '^BenchmarkShardLockHold$' \
	-test.benchtime $scal_time -test.count $scal_count
# The most running on every P can gain on this machine: an allocation and a
# clock read per operation, nothing shared, serial and from every P.
step "$out/scaling.txt" -- $bin/core.test -test.run '^$' -test.bench '^BenchmarkScalingFloor$' \
	-test.benchtime $scal_time -test.count $scal_count

# 9b: every operation × pending × horizon, wheel beside runtime, in its
# own script (also run alone): it writes docs/bench/matrix*.txt and .csv.
# BENCH_SKIP_MATRIX=1 keeps the matrix a separate ./matrix.sh run wrote.
if [[ -z "${BENCH_SKIP_MATRIX:-}" ]]; then
	commands+=("${BENCH_QUICK:+BENCH_QUICK=1 }./matrix.sh")
	echo "+ ./matrix.sh" >&2
	./matrix.sh || failures+=("${commands[-1]}")
fi

# 4: firing accuracy, idle and with every core busy.
for load in "" -busy; do
	step "$out/accuracy.jsonl" -- "$bin/accuracy" -lib runtime -n $acc_n -grace $acc_grace $load
	for lib in wheel gozero; do
		for tick in 1ms 10ms; do
			step "$out/accuracy.jsonl" -- "$bin/accuracy" -lib $lib -tick $tick -n $acc_n -grace $acc_grace $load
		done
	done
done
# 5: expiry burst.
for lib in runtime wheel wheel-pool gozero; do
	step "$out/burst.jsonl" -- "$bin/burst" -lib $lib -n $burst_n -lead $burst_lead
done
# 7: purgatory; "none" is the load generator alone. Every round runs each
# library in turn, so the report pairs them within a round.
for ((i = 0; i < purg_rounds; i++)); do
	for lib in none runtime wheel gozero; do
		step "$out/purgatory.jsonl" -- "$bin/purgatory" -lib $lib -duration $purg_dur
	done
done
# 8: idle cost with 1M far-future timers.
for lib in runtime wheel gozero; do
	step "$out/idle.jsonl" -- "$bin/idle" -lib $lib -n 1000000 -duration $idle_dur
done
# 9: a net/http server; wheel, runtime and no-timer servers side by side,
# each with its own client process, at every request deadline × connections.
step "$out/httpserver.jsonl" -- "$bin/httpserver" -deadline $http_deadlines -conns $http_conns \
	-duration $http_dur -rounds $http_rounds
# 9a: the whole process's CPU per fired timer at light load, a process per
# library, one at a time.
step "$out/firecost.jsonl" -- "$bin/firecost" -deadline $fire_deadlines -duration $fire_dur -rounds $fire_rounds
# … and with fires alone, one every 33 ms, so that each wakes the wheel's poller.
[[ $mode == quick ]] ||
	step "$out/firecost.jsonl" -- "$bin/firecost" -stops 0 -loop 33ms -deadline 200ms -duration $fire_dur -rounds $fire_rounds
# The stop probe: 300 timers a second, every one stopped 10 ms after arming
# (fires 0.0001 a second: none in the window), the cost of timers that never
# fire; judged by CPU against the runtime's (the targets table).
step "$out/firecost.jsonl" -- "$bin/firecost" -deadline 50ms,200ms -stops 300 -fires 0.0001 -stop 10ms \
	-duration $fire_dur -rounds $fire_rounds

# benchstat, if it can be fetched; the report computes its own medians.
if go run golang.org/x/perf/cmd/benchstat@latest -col /lib "$out/headline.txt" >"$out/benchstat.txt" 2>/dev/null; then
	commands+=("go run golang.org/x/perf/cmd/benchstat@latest -col /lib docs/bench/headline.txt  > docs/bench/benchstat.txt")
else
	rm -f "$out/benchstat.txt"
fi

{
	echo "mode: $mode"
	echo "seconds: $(($(date +%s) - start))"
	echo "commit: $commit"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "go: $(go version)"
	echo "kernel: $(uname -sr)"
	printf 'command: %s\n' "${commands[@]}"
	((${#failures[@]} == 0)) || printf 'failed: %s\n' "${failures[@]}"
} >"$out/env.txt"

# The report carries docs/bench/redis.md and timerd.md as its sections 10
# and 11 (the distributed mode's comparison with asynq and timerd's load test
# need Redis, so they are measured separately: bench/cmd/redisbench,
# bench/timerd.sh) and writes the whole of docs/BENCHMARKS.md: append nothing
# to it here.
go run ./cmd/report -docs ../docs
echo "wrote docs/BENCHMARKS.md in $(($(date +%s) - start)) s" >&2
