#!/usr/bin/env bash
# A change across the matrix: the root package's test binaries of commit OLD
# and of the working tree (each with the working tree's matrix_bench_test.go),
# run in turn, every cell once a round, wheel and runtime side by side, so the
# two builds see the same machine. From the repository's root:
#
#   bench/matrixab.sh OLD OUTDIR
#   python3 bench/matrixab.py OUTDIR/old.txt OUTDIR/new.txt
#
# writes OUTDIR/old.txt and OUTDIR/new.txt. ROUNDS (6), PENDING (0,1,1k,1M),
# OPS (a regexp of op names, every one unless set) and BT (30ms a cell)
# narrow or lengthen the run; 6 rounds of the whole matrix take about 20
# minutes on 2 cores.
set -euo pipefail
old=$1 out=$2
rounds=${ROUNDS:-6} pending=${PENDING:-0,1,1k,1M} ops=${OPS:-.*} bt=${BT:-30ms}
root=$(git rev-parse --show-toplevel)
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/old" "$old" >/dev/null
cp "$root/matrix_bench_test.go" "$tmp/old/"
(cd "$tmp/old" && go test -c -o "$tmp/old.test" .)
(cd "$root" && go test -c -o "$tmp/new.test" .)
: >"$out/old.txt"
: >"$out/new.txt"
for ((i = 1; i <= rounds; i++)); do
	for c in old new; do
		BENCH_MATRIX_PENDING=$pending "$tmp/$c.test" -test.run '^$' -test.bench "^BenchmarkMatrix\$/wheel=.*/op=($ops)/" \
			-test.benchtime "$bt" -test.count 1 -test.benchmem >>"$out/$c.txt" 2>&1 ||
			echo "round $i: the $c build failed a cell (see $c.txt); the rounds go on" >&2
	done
done
