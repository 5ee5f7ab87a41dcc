//go:build !linux

package hugemem

import "unsafe"

// advise does nothing where huge pages cannot be asked for.
func advise(unsafe.Pointer, uintptr) {}
