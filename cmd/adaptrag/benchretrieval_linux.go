//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// loadAvg returns the one-minute load average of /proc/loadavg, 0 when
// it cannot be read.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

// evictDir asks the kernel to drop the page cache of every file under dir
// (posix_fadvise DONTNEED on clean, fsynced files), so that the next Open
// reads from the disk: a cold open without root. It reports whether every
// file was advised.
func evictDir(dir string) bool {
	ok := true
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			ok = false
			return nil
		}
		defer f.Close()
		if err := f.Sync(); err != nil || fadviseDontNeed(int(f.Fd())) != nil {
			ok = false
		}
		return nil
	})
	return ok && err == nil
}

// posixFadvDontNeed is POSIX_FADV_DONTNEED on Linux.
const posixFadvDontNeed = 4

func fadviseDontNeed(fd int) error {
	return fadvise(fd, posixFadvDontNeed)
}
