#!/bin/bash
# ab.sh OLD NEW OUTDIR ROUNDS PENDING OPS: the root package's test binaries of two builds,
# alternated ROUNDS times over the matrix's rows OPS (a regexp of op names) at PENDING, BT a cell
# (30ms unless set).
set -e
old=$1 new=$2 out=$3 rounds=${4:-6} pend=${5:-0,1,1k} ops=${6:-resetlater|resetearlier}
mkdir -p $out
for r in $(seq $rounds); do
  for v in old new; do
    bin=$old; [ $v = new ] && bin=$new
    BENCH_MATRIX_PENDING=$pend $bin -test.run '^$' -test.bench "BenchmarkMatrix\$/wheel=.*/op=($ops)/" -test.benchtime ${BT:-30ms} -test.benchmem >> $out/$v.txt
  done
done
