package sqlite_test

import (
	"os"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

func crashOpen(dir string) (sessionlog.Store, error) { return sqlite.Open(dir, sqlite.Options{}) }

func TestMain(m *testing.M) {
	sessionlogtest.RunCrashChild(map[string]sessionlogtest.Opener{"sqlite": crashOpen})
	runWALChild()
	os.Exit(m.Run())
}
