//go:build !race

package sqlbench

const raceEnabled = false
