//go:build !(linux || darwin || freebsd)

package vector

import (
	"errors"
	"os"
)

// mapFile is not supported here: the int8 copies are read into memory.
func mapFile(*os.File, int64, int) ([]byte, func() error, error) {
	return nil, nil, errors.ErrUnsupported
}
