package checkpoint

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/adaptrag/adaptrag/graph"
)

// Dialect is what SQL needs to know of a database.
type Dialect struct {
	// Name labels errors ("sqlite", "postgres").
	Name string
	// Placeholder returns the n-th (1-based) bind parameter: "?" or "$1".
	Placeholder func(n int) string
	// Blob is the column type of byte strings (BLOB, BYTEA).
	Blob string
	// Lock, if set, is run first in the schema transaction to serialise
	// processes creating the tables at once (an advisory lock).
	Lock string
	// ConnError reports an error that means the connection was lost (the
	// operation is retried on a fresh one); nil means the generic test
	// (driver.ErrBadConn, network errors, unexpected EOF).
	ConnError func(error) bool
}

// Options tune SQL. The zero value is ready to use.
type Options struct {
	// Retries is the number of retries after a connection error; zero
	// means 5, negative means none.
	Retries int
	// Backoff is the first wait between retries, doubled each time up to
	// two seconds; zero means 50ms.
	Backoff time.Duration
}

// SQL is a graph.Checkpointer on a database/sql database, in two tables:
// adaptrag_threads (each thread's head and a version bumped by every Put)
// and adaptrag_checkpoints. It is safe for concurrent use by goroutines
// and processes sharing the database.
type SQL struct {
	db   *sql.DB
	d    Dialect
	opts Options
	q    queries
}

type queries struct {
	insertThread, updateThread, version, insertCP, latest, get, list, delThread, delCPs string
}

const cpColumns = "thread_id, checkpoint_id, parent_id, seq, graph, step, status, next, codec, version, state, run, created"

// NewSQL creates the tables if they are missing and returns the store. db
// stays the caller's: Close closes it.
func NewSQL(ctx context.Context, db *sql.DB, d Dialect, opts Options) (*SQL, error) {
	if opts.Retries == 0 {
		opts.Retries = 5
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 50 * time.Millisecond
	}
	s := &SQL{db: db, d: d, opts: opts}
	p := func(sqlText string) string { return s.bind(sqlText) }
	s.q = queries{
		insertThread: p("INSERT INTO adaptrag_threads (thread_id, head, version) VALUES (?, ?, 1) ON CONFLICT (thread_id) DO NOTHING RETURNING version"),
		updateThread: p("UPDATE adaptrag_threads SET head = ?, version = version + 1 WHERE thread_id = ? AND head = ? RETURNING version"),
		version:      p("SELECT head, version FROM adaptrag_threads WHERE thread_id = ?"),
		insertCP:     p("INSERT INTO adaptrag_checkpoints (" + cpColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		latest:       p("SELECT " + cpColumns + " FROM adaptrag_checkpoints WHERE thread_id = ? AND checkpoint_id = (SELECT head FROM adaptrag_threads WHERE thread_id = ?)"),
		get:          p("SELECT " + cpColumns + " FROM adaptrag_checkpoints WHERE thread_id = ? AND checkpoint_id = ?"),
		list:         p("SELECT " + cpColumns + " FROM adaptrag_checkpoints WHERE thread_id = ? ORDER BY seq DESC"),
		delThread:    p("DELETE FROM adaptrag_threads WHERE thread_id = ?"),
		delCPs:       p("DELETE FROM adaptrag_checkpoints WHERE thread_id = ?"),
	}
	if err := s.retry(ctx, func() error { return s.migrate(ctx) }); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: create tables: %w", d.Name, err)
	}
	return s, nil
}

// bind replaces each ? with the dialect's placeholder.
func (s *SQL) bind(q string) string {
	if s.d.Placeholder == nil {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString(s.d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *SQL) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.Lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.Lock); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS adaptrag_threads (
			thread_id TEXT PRIMARY KEY,
			head TEXT NOT NULL,
			version BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS adaptrag_checkpoints (
			thread_id TEXT NOT NULL,
			checkpoint_id TEXT NOT NULL,
			parent_id TEXT NOT NULL,
			seq BIGINT NOT NULL,
			graph TEXT NOT NULL,
			step BIGINT NOT NULL,
			status TEXT NOT NULL,
			next TEXT NOT NULL,
			codec TEXT NOT NULL,
			version TEXT NOT NULL,
			state ` + s.d.Blob + ` NOT NULL,
			run ` + s.d.Blob + ` NOT NULL,
			created BIGINT NOT NULL,
			PRIMARY KEY (thread_id, checkpoint_id))`,
		`CREATE UNIQUE INDEX IF NOT EXISTS adaptrag_checkpoints_seq ON adaptrag_checkpoints (thread_id, seq)`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// DB returns the database.
func (s *SQL) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *SQL) Close() error { return s.db.Close() }

// connError reports a lost connection.
func (s *SQL) connError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if s.d.ConnError != nil && s.d.ConnError(err) {
		return true
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, sql.ErrConnDone) || errors.As(err, &ne)
}

// retry runs op again after connection errors, with backoff.
func (s *SQL) retry(ctx context.Context, op func() error) error {
	wait := s.opts.Backoff
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || !s.connError(err) || attempt >= s.opts.Retries {
			return err
		}
		t := time.NewTimer(wait + time.Duration(rand.Int64N(int64(wait)/2+1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (after: %w)", ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// Put stores cp as the thread's head if head is the current one, in one
// transaction. After a connection error it retries; a retry that finds cp
// already stored as the head (the lost connection had committed) succeeds.
func (s *SQL) Put(ctx context.Context, cp graph.Checkpoint, head string) error {
	if err := graph.ValidateCheckpoint(cp); err != nil {
		return err
	}
	next, err := json.Marshal(cp.Next)
	if err != nil {
		return err
	}
	retried := false
	err = s.retry(ctx, func() error {
		err := s.put(ctx, cp, head, next)
		if err != nil && s.connError(err) {
			retried = true
		}
		if retried && errors.Is(err, graph.ErrConflict) {
			if cur, gerr := s.headOf(ctx, cp.Thread); gerr == nil && cur == cp.ID {
				return nil
			}
		}
		return err
	})
	if err != nil && !errors.Is(err, graph.ErrConflict) {
		return fmt.Errorf("checkpoint: %s: put %s of thread %q: %w", s.d.Name, cp.ID, cp.Thread, err)
	}
	return err
}

func (s *SQL) put(ctx context.Context, cp graph.Checkpoint, head string, next []byte) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The thread's row moves to the new head only if it is still at head;
	// its version, bumped, orders the thread's checkpoints.
	var row *sql.Row
	if head == "" {
		row = tx.QueryRowContext(ctx, s.q.insertThread, cp.Thread, cp.ID)
	} else {
		row = tx.QueryRowContext(ctx, s.q.updateThread, cp.ID, cp.Thread, head)
	}
	var seq int64
	if err := row.Scan(&seq); errors.Is(err, sql.ErrNoRows) {
		cur := ""
		_ = tx.QueryRowContext(ctx, s.q.version, cp.Thread).Scan(&cur, new(int64))
		return &graph.ConflictError{Thread: cp.Thread, Want: head, Head: cur}
	} else if err != nil {
		return err
	}
	state, run := cp.State, cp.Run
	if state == nil {
		state = []byte{}
	}
	if run == nil {
		run = []byte{}
	}
	if _, err := tx.ExecContext(ctx, s.q.insertCP, cp.Thread, cp.ID, cp.Parent, seq, cp.Graph, cp.Step, string(cp.Status),
		string(next), cp.Codec, cp.Version, state, run, cp.Created.UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *SQL) headOf(ctx context.Context, thread string) (string, error) {
	var head string
	err := s.db.QueryRowContext(ctx, s.q.version, thread).Scan(&head, new(int64))
	return head, err
}

type scanner interface{ Scan(dest ...any) error }

func scanCheckpoint(row scanner) (graph.Checkpoint, error) {
	var c graph.Checkpoint
	var seq, step, created int64
	var status, next string
	if err := row.Scan(&c.Thread, &c.ID, &c.Parent, &seq, &c.Graph, &step, &status, &next, &c.Codec, &c.Version, &c.State, &c.Run, &created); err != nil {
		return c, err
	}
	c.Step, c.Status, c.Created = int(step), graph.Status(status), time.Unix(0, created).UTC()
	if err := json.Unmarshal([]byte(next), &c.Next); err != nil {
		return c, fmt.Errorf("checkpoint %s: next: %w", c.ID, err)
	}
	return c, nil
}

// Latest returns the thread's head.
func (s *SQL) Latest(ctx context.Context, thread string) (graph.Checkpoint, error) {
	return s.one(ctx, thread, "", s.q.latest, thread, thread)
}

// Get returns one checkpoint of the thread.
func (s *SQL) Get(ctx context.Context, thread, id string) (graph.Checkpoint, error) {
	return s.one(ctx, thread, id, s.q.get, thread, id)
}

func (s *SQL) one(ctx context.Context, thread, id, q string, args ...any) (graph.Checkpoint, error) {
	var c graph.Checkpoint
	err := s.retry(ctx, func() error {
		var err error
		c, err = scanCheckpoint(s.db.QueryRowContext(ctx, q, args...))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		if id == "" {
			return c, fmt.Errorf("%w: thread %q has none", graph.ErrNoCheckpoint, thread)
		}
		return c, fmt.Errorf("%w: %s in thread %q", graph.ErrNoCheckpoint, id, thread)
	}
	if err != nil {
		return c, fmt.Errorf("checkpoint: %s: read thread %q: %w", s.d.Name, thread, err)
	}
	return c, nil
}

// List returns the thread's checkpoints, newest first.
func (s *SQL) List(ctx context.Context, thread string) ([]graph.Checkpoint, error) {
	var out []graph.Checkpoint
	err := s.retry(ctx, func() error {
		out = nil
		rows, err := s.db.QueryContext(ctx, s.q.list, thread)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanCheckpoint(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: list thread %q: %w", s.d.Name, thread, err)
	}
	return out, nil
}

// Delete removes the thread and its checkpoints in one transaction.
func (s *SQL) Delete(ctx context.Context, thread string) error {
	err := s.retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, s.q.delThread, thread); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.delCPs, thread); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return fmt.Errorf("checkpoint: %s: delete thread %q: %w", s.d.Name, thread, err)
	}
	return nil
}

// DollarPlaceholder numbers bind parameters $1, $2, … (PostgreSQL).
func DollarPlaceholder(n int) string { return "$" + strconv.Itoa(n) }
