package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/adaptrag/adaptrag/checkpoint"
	"github.com/adaptrag/adaptrag/checkpoint/checkpointtest"
	"github.com/adaptrag/adaptrag/checkpoint/sqlite"
	"github.com/adaptrag/adaptrag/graph"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) graph.Checkpointer {
		s, err := checkpoint.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "sub", "threads.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Two handles on one file, as two processes would have, share threads.
func TestTwoHandlesShareAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	ctx := context.Background()
	a, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Put(ctx, checkpointtest.CP("t", "x", "", 0), ""); err != nil {
		t.Fatal(err)
	}
	got, err := b.Latest(ctx, "t")
	if err != nil || got.ID != "x" {
		t.Fatalf("other handle: %v %v", got.ID, err)
	}
}

func TestPathOf(t *testing.T) {
	for in, want := range map[string]string{"sqlite:a/b.db": "a/b.db", "sqlite:///abs/x.db": "/abs/x.db", "sqlite:file:x.db?mode=rw": "x.db"} {
		if got, err := sqlite.PathOf(in); err != nil || got != want {
			t.Errorf("PathOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := sqlite.PathOf("sqlite:"); err == nil {
		t.Error("empty path accepted")
	}
}
