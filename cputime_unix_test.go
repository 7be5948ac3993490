//go:build unix

package timingwheel

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far (user and
// system), or -1 where that is not known.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
