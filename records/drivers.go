package records

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers database/sql driver "pgx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func init() {
	Register("sqlite", Driver{
		SQLDriver: "sqlite",
		DSN:       func(url string) (string, error) { return sqliteDSN(strings.TrimPrefix(url, "sqlite:"), false) },
		Dialect:   sqliteDialect,
		Unavailable: func(err error) bool {
			var se *sqlite.Error
			return errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_CANTOPEN || se.Code()&0xff == sqlite3.SQLITE_BUSY)
		},
		TimedOut: func(err error) bool {
			var se *sqlite.Error
			return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_INTERRUPT
		},
	})
	pg := Driver{
		SQLDriver: "pgx",
		DSN: func(url string) (string, error) {
			if _, err := pgconn.ParseConfig(url); err != nil {
				return "", fmt.Errorf("%w: %s: %w", ErrURL, redact(url), err)
			}
			return url, nil
		},
		Dialect: Dialect{
			Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
			Timeout: func(d time.Duration) string {
				return "SET LOCAL statement_timeout = " + strconv.FormatInt(max(d.Milliseconds(), 1), 10)
			},
		},
		Unavailable: func(err error) bool {
			var ne net.Error
			var ce *pgconn.ConnectError
			return errors.As(err, &ce) || errors.As(err, &ne)
		},
		TimedOut: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "57014" // query_canceled: statement_timeout
		},
	}
	Register("postgres", pg)
}

var sqliteDialect = Dialect{Placeholder: func(int) string { return "?" }}

// sqliteDSN is the modernc.org/sqlite data source name of the file at
// path: read-only (query_only) unless write, with a busy timeout so that a
// reader waits for a writer's transaction.
func sqliteDSN(path string, write bool) (string, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return "", fmt.Errorf("%w: sqlite:%s (want sqlite:PATH, a path without ? or #)", ErrURL, path)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_txlock=immediate"
	if !write {
		dsn = "file:" + path + "?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"
	}
	return dsn, nil
}
