//go:build !linux

package memstore

import (
	"errors"
	"os"
)

// mapFile is not available here: a load reads the snapshot instead.
func mapFile(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.ErrUnsupported
}

// mapPrivate is not available here: the keyword index file is read.
func mapPrivate(*os.File, int64) ([]byte, func() error, error) {
	return nil, nil, errors.ErrUnsupported
}

// releaseMapped has nothing to release where nothing is mapped.
func releaseMapped([]byte) {}
