package workload

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// RSSMiB returns the process's resident set in MiB (VmRSS of
// /proc/self/status), or 0 where /proc does not report it. The live heap
// (HeapMB) leaves out what the runtime keeps from the OS and what is not
// Go memory; RSS is what a machine has to hold.
func RSSMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
