// Package bench compares this module's timing wheel with package time's
// timers and with go-zero's collection.TimingWheel on the same workloads.
//
// The testing.B benchmarks here measure the operations (arm and stop, reset,
// live heap per timer, parallel arm and stop); the programs under cmd/ run
// the workloads that need wall-clock time (firing accuracy, expiry burst,
// a purgatory-style load, idle cost, a real net/http server) and print JSON
// lines; cmd/report turns both into docs/BENCHMARKS.md and its plots.
// run.sh runs everything.
package bench
