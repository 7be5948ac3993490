//go:build race

package sqlbench

// raceEnabled: the test binary runs under the race detector, so a binary it builds does too
// (the same flags reuse the packages the test's build compiled).
const raceEnabled = true
