//go:build unix

package sqlitewheel

import (
	"os"
	"syscall"
)

// flockExclusive takes f's exclusive flock without waiting.
func flockExclusive(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
