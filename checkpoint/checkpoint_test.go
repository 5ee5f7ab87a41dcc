package checkpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adaptrag/adaptrag/checkpoint"
	"github.com/adaptrag/adaptrag/checkpoint/checkpointtest"
	"github.com/adaptrag/adaptrag/graph"
)

func TestMemoryConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer { return graph.NewMemoryCheckpointer() })
}

func TestOpenUnknownScheme(t *testing.T) {
	for _, u := range []string{"nosuch://x", "plainpath"} {
		if _, err := checkpoint.Open(context.Background(), u); !errors.Is(err, checkpoint.ErrUnknownScheme) {
			t.Errorf("Open(%q): %v, want ErrUnknownScheme", u, err)
		}
	}
	s, err := checkpoint.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
}
