//go:build !unix

package adaptrag_test

import "time"

// processCPU reports that this system's CPU time is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
