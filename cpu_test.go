package adaptrag_test

import (
	"time"

	"github.com/adaptrag/adaptrag/internal/workload"
)

// processCPU returns the CPU time this process has used, and false where
// the platform does not report it.
func processCPU() (time.Duration, bool) {
	d := workload.CPUTime()
	return d, d > 0
}
