#!/usr/bin/env bash
# Interleaved matrix A/B of three alarm designs: fa0af31 (lazy alarm), a4da98e (exact alarm), a7da692 (current)
set -u
cd /work/scratch/s4
for i in 1 2 3 4 5 6; do
  for b in fa0af31 a4da98e base; do
    BENCH_MATRIX_PENDING=0,1,1k ./$b.test -test.run '^$' -test.bench '^BenchmarkMatrix$' -test.benchtime 50ms -test.count 1 >> ab2-$b.txt 2>&1
  done
done
echo done > ab2.done
