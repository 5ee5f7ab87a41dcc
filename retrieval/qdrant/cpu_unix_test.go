//go:build unix

package qdrant_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) this process has used:
// the test, the go-client and the in-process fake together. Unlike wall
// time it does not grow when other programs share the machine's cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
