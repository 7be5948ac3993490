#!/usr/bin/env bash
# Runs the root package's BenchmarkMatrix (matrix_bench_test.go): seven
# operations × pending timers × horizons, each cell on the wheel and on the
# runtime side by side, and writes under docs/bench/:
#
#   matrix-raw.txt  the `go test -bench` output of every round
#   matrix.txt      how it was run, then benchstat -col '/impl@(runtime wheel)'
#   matrix.csv      the same in benchstat's CSV, which bench/cmd/report
#                   turns into the matrix table of docs/BENCHMARKS.md
#
#   ./matrix.sh                 full run: pending 0, 1, 1k, 1M, 6 rounds of
#                               100 ms a cell (15 minutes on 2 cores)
#   BENCH_QUICK=1 ./matrix.sh   quick run: pending 0 and 1k, 6 rounds of
#                               20 ms a cell (2.6 minutes on 2 cores under a
#                               load of 11)
#
# run.sh (make bench) runs it before the report; alone, follow it with
# `go run ./cmd/report -docs ../docs`. Each round runs every cell once
# (-count 1), the wheel's and the runtime's one after the other, so the
# rounds interleave the two sides over the whole run, where -count 6 would
# run one side's six samples before the other's.
set -euo pipefail
cd "$(dirname "$0")"

out=../docs/bench
mkdir -p "$out"
if [[ -n "${BENCH_QUICK:-}" ]]; then
	mode=quick rounds=6 benchtime=20ms pending=0,1k
else
	mode=full rounds=6 benchtime=100ms pending=0,1,1k,1M
fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
start=$(date +%s)

dirty=$(git -C .. status --porcelain -- ':!docs' ':!*.md' 2>/dev/null | head -1)
commit="$(git -C .. rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty:+ with uncommitted changes}"
(cd .. && go test -c -o "$bin/core.test" .)

raw=$out/matrix-raw.txt
: >"$raw"
failed=()
for ((i = 1; i <= rounds; i++)); do
	echo "+ matrix round $i of $rounds" >&2
	# A cell that fails (its timers fired) is reported by name; the other
	# cells of the round still count.
	if ! BENCH_MATRIX_PENDING=$pending "$bin/core.test" -test.run '^$' -test.bench '^BenchmarkMatrix$' \
		-test.benchtime "$benchtime" -test.count 1 >>"$raw"; then
		failed+=("round $i")
	fi
done

if command -v benchstat >/dev/null; then
	benchstat=(benchstat)
else
	benchstat=(go run golang.org/x/perf/cmd/benchstat@latest)
fi
col='/impl@(runtime wheel)'
{
	echo "mode: $mode"
	echo "seconds: $(($(date +%s) - start))"
	echo "commit: $commit"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "go: $(go version)"
	echo "command: for i in \$(seq $rounds); do BENCH_MATRIX_PENDING=$pending go test -run '^\$' -bench '^BenchmarkMatrix\$' -benchtime $benchtime -count 1 . ; done > docs/bench/matrix-raw.txt"
	echo "command: benchstat -col '$col' docs/bench/matrix-raw.txt > docs/bench/matrix.txt"
	((${#failed[@]} == 0)) || printf 'failed: %s\n' "${failed[@]}"
	grep -h '^--- FAIL: BenchmarkMatrix/.*impl=' "$raw" | sed 's/^--- FAIL: /failed: /' | sort -u || true
	echo
	"${benchstat[@]}" -col "$col" "$raw"
} >"$out/matrix.txt"
"${benchstat[@]}" -format csv -col "$col" "$raw" >"$out/matrix.csv" 2>/dev/null
echo "wrote docs/bench/matrix.txt in $(($(date +%s) - start)) s" >&2
