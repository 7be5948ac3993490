#!/bin/bash
# cpuab.sh compares the CPU time per operation of matrix cells (the root
# package's BenchmarkMatrix) between two builds of the root package's tests,
# wheel and runtime side by side, in interleaved rounds. It reads the
# process's user+sys CPU time (/usr/bin/time, 10 ms resolution: use N of a
# million or more), not the wall clock, so a machine shared with other work
# slows a run without inflating its figure much; it includes the binary's
# start-up and the garbage collector's work for both sides alike.
#
#   go test -c -o /tmp/old.test .   # at the old commit
#   go test -c -o /tmp/new.test .   # at the new one
#   OLD=/tmp/old.test NEW=/tmp/new.test PENDING=0,1 bench/cpuab.sh 5 1000000 \
#       op=afterfuncstop/pending=0/d=10ms ... > out.txt
#
# Each line: cell, build (old, new), side (wheel, runtime), CPU ns per op.
set -eu
rounds=$1 n=$2
shift 2
export BENCH_MATRIX_PENDING=${PENDING:-0}
for _ in $(seq "$rounds"); do
	for cell in "$@"; do
		for build in old new; do
			bin=$OLD
			[ "$build" = new ] && bin=$NEW
			for side in wheel runtime; do
				t=$({ /usr/bin/time -f "%U %S" "$bin" -test.run '^$' \
					-test.bench "BenchmarkMatrix/wheel=new/$cell/impl=$side\$" \
					-test.benchtime "${n}x" >/dev/null; } 2>&1 | tail -1)
				echo "$cell $build $side $(echo "$t" | awk -v n="$n" '{printf "%.1f", ($1+$2)*1e9/n}')"
			done
		done
	done
done
