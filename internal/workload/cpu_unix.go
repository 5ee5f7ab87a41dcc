//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package workload

import (
	"syscall"
	"time"
)

// CPUTime returns the user plus system CPU time the process has used so
// far, or 0 where the platform does not report it. On a shared machine,
// wall time per op also counts the time spent waiting for a core; the
// difference of two CPUTime readings divided by the ops (a cpu-ns/op
// metric) shows the work itself.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
