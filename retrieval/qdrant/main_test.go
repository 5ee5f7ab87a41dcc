package qdrant

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a store, client or fake server
// leaves a goroutine behind after Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
