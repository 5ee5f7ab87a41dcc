//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64 || ppc64le || s390x)

package main

import "syscall"

// fadvise calls fadvise64(fd, 0, 0, advice): the whole file.
func fadvise(fd, advice int) error {
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, uintptr(fd), 0, 0, uintptr(advice), 0, 0); e != 0 {
		return e
	}
	return nil
}
