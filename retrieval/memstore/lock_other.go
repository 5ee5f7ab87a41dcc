//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package memstore

import "os"

// lockDir only creates the lock file on platforms without flock: two
// processes opening one directory there is the caller's to prevent.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func unlockDir(f *os.File) error { return f.Close() }
