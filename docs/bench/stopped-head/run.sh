#!/usr/bin/env bash
# This change (e389e00 → HEAD) across the whole matrix: the two commits'
# test binaries, each with HEAD's matrix_bench_test.go, run in turn for 6
# rounds, every cell at pending 0, 1, 1k and 1M, both wheels, wheel and
# runtime side by side. From the root:
#
#   docs/bench/stopped-head/run.sh
#   benchstat -col '/impl@(runtime wheel)' docs/bench/stopped-head/final-new.txt
#
# writes final-old.txt and final-new.txt here.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
out=$root/docs/bench/stopped-head
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" 2>/dev/null || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/old" e389e00 >/dev/null
cp "$root/matrix_bench_test.go" "$tmp/old/"
(cd "$tmp/old" && go test -c -o "$tmp/old.test" .)
(cd "$root" && go test -c -o "$tmp/new.test" .)
: >"$out/final-old.txt"
: >"$out/final-new.txt"
for i in 1 2 3 4 5 6; do
	for c in old new; do
		BENCH_MATRIX_PENDING=0,1,1k,1M "$tmp/$c.test" -test.run '^$' -test.bench '^BenchmarkMatrix$' \
			-test.benchtime 30ms -test.count 1 >>"$out/final-$c.txt" 2>&1
	done
done
