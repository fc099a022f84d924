package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// rawDB opens a database file directly, behind the backend's back.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func TestStore(t *testing.T) {
	sessionlogtest.TestStore(t, sessionlogtest.Backend{
		Open: func(t *testing.T, dir string) sessionlog.Store {
			st, err := sqlite.Open(dir, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Garble: func(t *testing.T, dir, id string) {
			db := rawDB(t, filepath.Join(dir, sqlite.DBName))
			exec(t, db, "UPDATE events SET data = '{garbage' WHERE session_id = ?", id)
		},
	})
}

func TestCrash(t *testing.T) {
	sessionlogtest.TestCrash(t, "sqlite", crashOpen)
}
