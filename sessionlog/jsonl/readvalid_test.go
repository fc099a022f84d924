package jsonl_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

func TestReadValid(t *testing.T) {
	dir := t.TempDir()
	hdr := `{"type":"session","version":0,"id":"s","createdAt":1}` + "\n"
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(good, []byte(hdr+`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(hdr+`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`+"\n"+`{"type":"request/header-delta","seq":1,"time":1,"data":{}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, l, err := jsonl.ReadValid(good)
	if err != nil || l.Len() != 1 || len(d.Events) != 1 {
		t.Fatalf("good log: %v", err)
	}
	_, _, err = jsonl.ReadValid(bad)
	var re *sessionlog.RecordError
	if !errors.As(err, &re) || re.File != bad || re.Line != 3 || !errors.Is(err, sessionlog.ErrLegacy) {
		t.Fatalf("bad log: %v", err)
	}
	if _, _, err := jsonl.ReadValid(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing log: %v", err)
	}
}
