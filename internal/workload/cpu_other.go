//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package workload

import "time"

// CPUTime returns the user plus system CPU time the process has used so
// far, or 0 where the platform does not report it, as here. On a shared
// machine, wall time per op also counts the time spent waiting for a core;
// the difference of two CPUTime readings divided by the ops (a cpu-ns/op
// metric) shows the work itself.
func CPUTime() time.Duration { return 0 }
