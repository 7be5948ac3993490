//go:build race

package sqlbench

// raceEnabled: the test binary runs under the race detector (buildTimerd builds with it too).
const raceEnabled = true
