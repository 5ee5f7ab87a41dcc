// Package sqlite is a graph.Checkpointer in an embedded SQLite database
// (modernc.org/sqlite, pure Go): a file beside the knowledge base, or any
// path. The database runs in WAL mode with synchronous=FULL, each Put in
// one immediate transaction, so a killed process or a power loss leaves
// every committed checkpoint whole and no half-written one. Several
// processes may share the file; a writer waits up to the busy timeout for
// another's transaction.
//
// Importing the package registers the "sqlite" scheme with
// checkpoint.Open: "sqlite:PATH" ("sqlite:" followed by a file path).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/adaptrag/adaptrag/checkpoint"
)

func init() {
	checkpoint.Register("sqlite", func(ctx context.Context, u string) (checkpoint.Store, error) {
		path, err := PathOf(u)
		if err != nil {
			return nil, err
		}
		return Open(ctx, path, Options{})
	})
}

// Options tune Open. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a writer waits for another process's
	// transaction; zero means 10s.
	BusyTimeout time.Duration
	// SQL tunes the shared core (retries).
	SQL checkpoint.Options
}

// PathOf returns the file path of a "sqlite:PATH" URL ("sqlite://PATH" and
// "sqlite:file:PATH" are accepted too).
func PathOf(u string) (string, error) {
	rest, ok := strings.CutPrefix(u, "sqlite:")
	if !ok {
		return "", fmt.Errorf("checkpoint/sqlite: %q is not a sqlite: URL", u)
	}
	rest = strings.TrimPrefix(rest, "//")
	rest = strings.TrimPrefix(rest, "file:")
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		return "", errors.New("checkpoint/sqlite: empty path in URL (want sqlite:PATH)")
	}
	return rest, nil
}

// Open opens (creating it and its folder when missing) the database at
// path.
func Open(ctx context.Context, path string, opts Options) (*checkpoint.SQL, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("checkpoint/sqlite: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("checkpoint/sqlite: %w", err)
	}
	s, err := checkpoint.NewSQL(ctx, db, checkpoint.Dialect{Name: "sqlite", Blob: "BLOB"}, opts.SQL)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("checkpoint/sqlite: open %s: %w", path, err)
	}
	return s, nil
}
