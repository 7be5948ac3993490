//go:build !unix

package main

import "time"

// cpuTime is not measured where getrusage is missing; the table says so.
func cpuTime() (time.Duration, bool) { return 0, false }
