package jsonl_test

import (
	"os"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

func crashOpener(compress bool) sessionlogtest.Opener {
	return func(dir string) (sessionlog.Store, error) {
		return jsonl.Open(dir, jsonl.Options{Compress: compress})
	}
}

func TestMain(m *testing.M) {
	sessionlogtest.RunCrashChild(map[string]sessionlogtest.Opener{
		"jsonl":      crashOpener(false),
		"jsonl-zstd": crashOpener(true),
	})
	os.Exit(m.Run())
}
