package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/adaptrag/adaptrag/checkpoint"
	_ "github.com/adaptrag/adaptrag/checkpoint/postgres" // postgres:// thread stores
	_ "github.com/adaptrag/adaptrag/checkpoint/sqlite"   // sqlite:PATH thread stores
	"github.com/adaptrag/adaptrag/kb"
)

// threadsBeside is the thread store of a knowledge base when --threads is
// not given: a SQLite file in the knowledge base's folder (embedded:DIR),
// or in the data directory for the bundled sample and remote stores.
func threadsBeside(store string) string {
	switch {
	case strings.HasPrefix(store, "embedded:"):
		dir := strings.TrimPrefix(store, "embedded:")
		if dir == "" {
			dir = kb.DefaultDir()
		}
		return "sqlite:" + filepath.Join(dir, "threads.db")
	case store == "":
		return "sqlite:" + filepath.Join(filepath.Dir(kb.DefaultDir()), "sample", "threads.db")
	}
	return "sqlite:" + filepath.Join(filepath.Dir(kb.DefaultDir()), "remote", "threads.db")
}

// openThreads opens the thread store a URL names (sqlite:PATH, a
// PostgreSQL URL, memory:).
func openThreads(ctx context.Context, url string) (checkpoint.Store, error) {
	s, err := checkpoint.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	return s, nil
}
