// Package postgres is a graph.Checkpointer in PostgreSQL
// (github.com/jackc/pgx/v5), so that every process and replica of a service
// shares its threads. Puts are conditional on the thread's head in one
// transaction: concurrent writers never interleave a thread's history (the
// loser gets a *graph.ConflictError), and a dropped connection (a restarted
// server, pg_terminate_backend, a network cut) is retried on a fresh one.
//
// Importing the package registers the "postgres" and "postgresql" schemes
// with checkpoint.Open. The tables go in the connection's current schema;
// choose one with the search_path URL parameter
// (postgres://…/db?search_path=threads).
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"

	"github.com/adaptrag/adaptrag/checkpoint"
)

func init() {
	open := func(ctx context.Context, u string) (checkpoint.Store, error) {
		return Open(ctx, u, checkpoint.Options{})
	}
	checkpoint.Register("postgres", open)
	checkpoint.Register("postgresql", open)
}

// Dialect is PostgreSQL's, for checkpoint.NewSQL.
var Dialect = checkpoint.Dialect{
	Name:        "postgres",
	Placeholder: checkpoint.DollarPlaceholder,
	Blob:        "BYTEA",
	Lock:        "SELECT pg_advisory_xact_lock(7218390145)",
	ConnError:   ConnError,
}

// ConnError reports the errors of a lost connection: pgx's own (safe to
// retry, or a closed connection), SQLSTATE class 08 (connection exception)
// and 57P01-57P03 (the server terminated or is restarting).
func ConnError(err error) bool {
	if pgconn.SafeToRetry(err) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return len(pe.Code) == 5 && pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.Timeout(err) && !errors.Is(err, context.DeadlineExceeded)
}

// Open connects to the database url names and creates the tables if they
// are missing.
func Open(ctx context.Context, url string, opts checkpoint.Options) (*checkpoint.SQL, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("checkpoint/postgres: %w", err)
	}
	s, err := checkpoint.NewSQL(ctx, db, Dialect, opts)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("checkpoint/postgres: %w", err)
	}
	return s, nil
}
