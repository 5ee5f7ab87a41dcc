//go:build !linux

package hugemem

// supported says that Make neither pads nor advises here: huge pages
// cannot be asked for.
const supported = false

func advise(start, end uintptr) {}
