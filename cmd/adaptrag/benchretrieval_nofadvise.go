//go:build linux && !(amd64 || arm64 || riscv64 || loong64 || ppc64 || ppc64le || s390x)

package main

import "errors"

// fadvise is not wired on this architecture (its fadvise64_64 splits the
// offsets into register pairs); the reopen is then reported as not cold.
func fadvise(fd, advice int) error { return errors.ErrUnsupported }
