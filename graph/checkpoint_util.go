package graph

import (
	"errors"
	"fmt"
)

// ErrInvalidCheckpoint is matched by the error ValidateCheckpoint returns.
var ErrInvalidCheckpoint = errors.New("graph: invalid checkpoint")

// ValidateCheckpoint reports a checkpoint a Checkpointer must refuse to
// store: one without a thread or an id, or that is its own parent.
func ValidateCheckpoint(cp Checkpoint) error {
	switch {
	case cp.Thread == "":
		return fmt.Errorf("%w: empty thread", ErrInvalidCheckpoint)
	case cp.ID == "":
		return fmt.Errorf("%w: empty id", ErrInvalidCheckpoint)
	case cp.Parent == cp.ID:
		return fmt.Errorf("%w: checkpoint %s is its own parent", ErrInvalidCheckpoint, cp.ID)
	}
	return nil
}

// noCheckpoint is the error for a missing thread or checkpoint.
func noCheckpoint(thread, id string) error {
	if id == "" {
		return fmt.Errorf("%w: thread %q has none", ErrNoCheckpoint, thread)
	}
	return fmt.Errorf("%w: %s in thread %q", ErrNoCheckpoint, id, thread)
}
