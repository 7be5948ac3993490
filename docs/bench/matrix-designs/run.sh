#!/usr/bin/env bash
# The alarm's designs across the matrix (docs/design/matrix-floors.md):
# test binaries of three commits, each with today's matrix_bench_test.go
# copied in, alternated round by round on a quiet machine. From the root:
#
#   docs/bench/matrix-designs/run.sh
#
# writes fa0af31.txt, a4da98e.txt and a7da692.txt here.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
out=$root/docs/bench/matrix-designs
tmp=$(mktemp -d)
trap 'for c in fa0af31 a4da98e a7da692; do git -C "$root" worktree remove --force "$tmp/$c" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
for c in fa0af31 a4da98e a7da692; do
	git -C "$root" worktree add --detach "$tmp/$c" "$c" >/dev/null
	cp "$root/matrix_bench_test.go" "$tmp/$c/"
	(cd "$tmp/$c" && go test -c -o "$tmp/$c.test" .)
	: >"$out/$c.txt"
done
for i in 1 2 3 4 5 6; do
	for c in fa0af31 a4da98e a7da692; do
		BENCH_MATRIX_PENDING=0,1,1k "$tmp/$c.test" -test.run '^$' -test.bench '^BenchmarkMatrix$' \
			-test.benchtime 50ms -test.count 1 >>"$out/$c.txt" 2>&1
	done
done
