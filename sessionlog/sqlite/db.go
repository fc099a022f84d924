package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/reel-agent/reel/sessionlog"
)

// Identity of a reel session database.
const (
	// ApplicationID is PRAGMA application_id of every reel database: "reel".
	ApplicationID = 0x7265656c
	// SchemaVersion is PRAGMA user_version of the schema this package reads
	// and writes. Any other version is refused, never migrated.
	SchemaVersion = 1
)

// Errors of the database layer.
var (
	// ErrForeign reports a file that is not a reel session database: not
	// SQLite at all, another application's database, or an unversioned
	// database that already has tables.
	ErrForeign = errors.New("sessionlog/sqlite: not a reel session database")
	// ErrSchema reports a reel database of another schema version.
	ErrSchema = errors.New("sessionlog/sqlite: unsupported schema version")
)

const schema = `
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	created_at INTEGER NOT NULL,
	cwd        TEXT,
	header     TEXT NOT NULL
) STRICT;
CREATE TABLE events (
	session_id        TEXT NOT NULL REFERENCES sessions(id),
	seq               INTEGER NOT NULL,
	type              TEXT NOT NULL,
	time              INTEGER NOT NULL,
	data              TEXT,
	surface_op        TEXT,
	source_event_seqs TEXT,
	PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;
`

const sqliteMagic = "SQLite format 3\x00"

// checkFile refuses a file that exists, is not empty and is not SQLite,
// before SQLite opens it. It reports whether the file exists.
func checkFile(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [16]byte
	n, err := io.ReadFull(f, magic[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return true, nil // empty: SQLite treats it as a new database
	}
	if n < len(magic) || string(magic[:]) != sqliteMagic {
		return true, fmt.Errorf("%s: %w: the file is not an SQLite database (starts with %q)", path, ErrForeign, bytes.TrimRight(magic[:n], "\x00"))
	}
	return true, nil
}

// openDB opens the database at path, refusing foreign files and other
// schema versions before anything is written. With create, an empty or
// missing file is initialised with the schema and switched to WAL mode;
// without it, the file must already be a reel database.
func openDB(ctx context.Context, path string, create bool) (*sql.DB, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%s: database paths may not contain '?' or '#'", path)
	}
	ok, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	if !ok && !create {
		return nil, fmt.Errorf("%s: %w", path, sessionlog.ErrNotFound)
	}
	if !ok {
		// SQLite would create the file 0644; its -wal and -shm take the
		// database file's mode, so creating it 0600 here makes all three
		// private, like the JSONL logs.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err == nil {
			if err := f.Close(); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000&_synchronous=FULL&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := initDB(ctx, db, path, create); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

func initDB(ctx context.Context, db *sql.DB, path string, create bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer func() { _ = tx.Rollback() }()
	var appID, version int64
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("%s: %w: %v", path, ErrForeign, err)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	objects, err := schemaObjects(ctx, tx)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case appID == ApplicationID && version == SchemaVersion:
		if !slices.Contains(objects, "table events") || !slices.Contains(objects, "table sessions") {
			return fmt.Errorf("%s: %w: a reel schema-%d database without its tables (has %v)", path, sessionlog.ErrCorrupt, version, objects)
		}
		return nil
	case appID == ApplicationID:
		return fmt.Errorf("%s: %w: the database has schema version %d; reel reads version %d and does not migrate", path, ErrSchema, version, SchemaVersion)
	case appID != 0:
		return fmt.Errorf("%s: %w: application_id is 0x%08x, not reel's 0x%08x", path, ErrForeign, appID, ApplicationID)
	case version != 0:
		return fmt.Errorf("%s: %w: no application_id, user_version %d", path, ErrForeign, version)
	case len(objects) > 0:
		return fmt.Errorf("%s: %w: an unversioned database that already holds %s", path, ErrForeign, strings.Join(objects, ", "))
	case !create:
		return fmt.Errorf("%s: %w: an empty database", path, sessionlog.ErrNotFound)
	}
	stmts := []string{schema,
		fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
		fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: create schema: %w", path, err)
		}
	}
	return tx.Commit()
}

// schemaObjects lists the user objects of a database as "kind name".
func schemaObjects(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			return nil, err
		}
		out = append(out, kind+" "+name)
	}
	return out, rows.Err()
}

// useWAL switches the database to write-ahead logging (persistent).
func useWAL(ctx context.Context, db *sql.DB, path string) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("%s: journal_mode: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("%s: journal_mode is %q, want wal", path, mode)
	}
	return nil
}
