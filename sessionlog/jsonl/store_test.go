package jsonl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

func backend(compress bool) sessionlogtest.Backend {
	return sessionlogtest.Backend{
		Open: func(t *testing.T, dir string) sessionlog.Store {
			st, err := jsonl.Open(dir, jsonl.Options{Compress: compress})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Garble: func(t *testing.T, dir, id string) {
			path := filepath.Join(dir, id+jsonl.ExtRaw)
			if compress {
				path = filepath.Join(dir, id+jsonl.ExtZstd)
			}
			d, err := jsonl.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Garbage after the header, then a complete turn/end: damage
			// before a complete turn/end is corruption, not a torn tail.
			body := []byte("\x00garbage{\n{\"type\":\"turn/end\",\"seq\":1,\"time\":1,\"data\":{\"turn\":1,\"reason\":{\"kind\":\"completed\"}}}\n")
			writeRawLog(t, path, append(append(d.Header.Raw, '\n'), body...))
		},
	}
}

// writeRawLog replaces the file at path with content, compressed as one
// frame per line for a .zst path.
func writeRawLog(t *testing.T, path string, content []byte) {
	t.Helper()
	if filepath.Ext(path) == ".zst" {
		content = frames(t, splitLines(content)...)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStore(t *testing.T) {
	sessionlogtest.TestStore(t, backend(false))
}

func TestStoreZstd(t *testing.T) {
	sessionlogtest.TestStore(t, backend(true))
}

func TestCrash(t *testing.T) {
	sessionlogtest.TestCrash(t, "jsonl", crashOpener(false))
}

func TestCrashZstd(t *testing.T) {
	sessionlogtest.TestCrash(t, "jsonl-zstd", crashOpener(true))
}
