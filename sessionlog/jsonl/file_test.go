package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

// TestFileRoundTrip converts every corpus log to zstd and back: WriteFile
// and ReadFile are lossless in both forms.
func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, f := range sessionlogtest.CorpusLogs(t) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := jsonl.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		zst := filepath.Join(dir, "log"+jsonl.ExtZstd)
		if err := jsonl.WriteFile(zst, d.Header, d.Events); err != nil {
			t.Fatal(err)
		}
		z, err := jsonl.ReadFile(zst)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if z.Torn != nil {
			t.Fatalf("%s: torn %+v", f, z.Torn)
		}
		back := filepath.Join(dir, "log"+jsonl.ExtRaw)
		if err := jsonl.WriteFile(back, z.Header, z.Events); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(back); !bytes.Equal(got, raw) {
			t.Fatalf("%s: jsonl → zstd → jsonl is not byte-exact", f)
		}
		// The zstd file is standard zstd: any decoder reads the JSONL.
		zb, _ := os.ReadFile(zst)
		dec, _ := zstd.NewReader(nil)
		plain, err := dec.DecodeAll(zb, nil)
		dec.Close()
		if err != nil || !bytes.Equal(plain, raw) {
			t.Fatalf("%s: a plain zstd decode differs: %v", f, err)
		}
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := jsonl.ReadFile(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile of a missing file: %v", err)
	}
	h := sessionlog.NewHeader("s", 1, "")
	if err := jsonl.WriteFile(filepath.Join(dir, "v.jsonl"), sessionlog.Header{Raw: []byte(`{"type":"session","version":9,"id":"s","createdAt":1}`)}, nil); !errors.Is(err, sessionlog.ErrVersion) {
		t.Fatalf("WriteFile of version 9: %v", err)
	}
	b := sessionlogtest.NewBuilder(1)
	b.TurnStart(1)
	if err := jsonl.WriteFile(filepath.Join(dir, "gap.jsonl"), h, b.Take()); !errors.Is(err, sessionlog.ErrInvalid) {
		t.Fatalf("WriteFile with a gap: %v", err)
	}
	if err := jsonl.WriteFile(filepath.Join(dir, "no", "dir.jsonl"), h, nil); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	// A log refused by the rules can still be written (fixtures of refused
	// logs), and reads back.
	legacy := []sessionlog.Event{{Type: sessionlog.TypeLegacyHeaderDelta, Seq: 0, Time: 1, Data: []byte(`{}`)}}
	p := filepath.Join(dir, "legacy"+jsonl.ExtZstd)
	if err := jsonl.WriteFile(p, h, legacy); err != nil {
		t.Fatal(err)
	}
	d, err := jsonl.ReadFile(p)
	if err != nil || len(d.Events) != 1 {
		t.Fatalf("ReadFile: %v", err)
	}
	if _, err := sessionlog.Load(p, d.Header, d.Events); !errors.Is(err, sessionlog.ErrLegacy) {
		t.Fatalf("Load of a legacy fixture: %v", err)
	}
}

// TestZstdBlocks covers frames with RLE and raw blocks and skippable frames.
func TestZstdBlocks(t *testing.T) {
	dir := t.TempDir()
	h := sessionlog.NewHeader("big", 1, "")
	b := sessionlogtest.NewBuilder(0)
	b.TurnStart(1)
	b.StepStart(1)
	b.User(strings.Repeat("a", 300_000)) // whole blocks of one byte: RLE
	events := b.Take()
	p := filepath.Join(dir, "big"+jsonl.ExtZstd)
	if err := jsonl.WriteFile(p, h, events); err != nil {
		t.Fatal(err)
	}
	z, _ := os.ReadFile(p)
	written := len(z)
	// A skippable frame between frames is allowed.
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	z = append(append(append([]byte(nil), z...), skip...), frames(t, []byte(`{"type":"step/end","seq":3,"time":1,"data":{"turn":1,"step":1}}`+"\n"))...)
	if err := os.WriteFile(p, z, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := jsonl.ReadFile(p)
	if err != nil || d.Torn != nil || len(d.Events) != 4 {
		t.Fatalf("ReadFile: %d events, torn %+v, %v", len(d.Events), d.Torn, err)
	}
	// Cut inside the big frame's blocks: a torn tail that drops it.
	head := frames(t, append(h.Raw, '\n'))
	cut := z[:len(head)+(written-len(head))/2]
	if err := os.WriteFile(p, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err = jsonl.ReadFile(p)
	if err != nil || d.Torn == nil || len(d.Events) != 0 || d.GoodBytes != int64(len(head)) {
		t.Fatalf("cut frame: %d events, torn %+v, good %d, %v", len(d.Events), d.Torn, d.GoodBytes, err)
	}
	// A reserved block type is damage.
	bad := append(append([]byte(nil), head...), 0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x07, 0x00, 0x00)
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := jsonl.ReadFile(p); err != nil || d.Torn == nil {
		t.Fatalf("reserved block: %v %+v", err, d)
	}
}

func TestListEdgeCases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := jsonl.Open(dir, jsonl.Options{Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Dir() != dir {
		t.Fatalf("Dir = %s", st.Dir())
	}
	w, err := st.Create(ctx, sessionlog.NewHeader("zipped", 5, "/z"))
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mismatch.jsonl", `{"type":"session","version":0,"id":"other","createdAt":1}`+"\n")
	write("empty.jsonl", "")
	write("noline.jsonl", `{"type":"session","version":0,"id":"noline","createdAt":2}`)
	write("v1.jsonl", `{"type":"session","version":1,"id":"v1","createdAt":2}`+"\n")
	write("broken.jsonl.zst", "not zstd at all")
	write(".tmp-x.jsonl-123", "partial")
	write("notes.txt", "ignored")
	write(".jsonl", "ignored: no id")
	if err := os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for info, err := range st.List(ctx) {
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		got[info.ID] = msg
	}
	want := map[string]string{
		"zipped":   "ok",
		"noline":   "ok",
		"mismatch": `holds session "other", not "mismatch"`,
		"empty":    "empty log",
		"v1":       "unsupported session format version 1",
		"broken":   "invalid header",
	}
	if len(got) != len(want) {
		t.Fatalf("List = %v", got)
	}
	for id, w := range want {
		if !strings.Contains(got[id], w) {
			t.Errorf("List %s: %q, want %q", id, got[id], w)
		}
	}
	// Storing one session twice (raw and zstd) is refused by Open.
	write("zipped.jsonl", `{"type":"session","version":0,"id":"zipped","createdAt":5,"cwd":"/z"}`+"\n")
	if _, _, err := st.Open(ctx, "zipped"); !errors.Is(err, sessionlog.ErrCorrupt) || !strings.Contains(err.Error(), "stored twice") {
		t.Fatalf("Open of a doubly stored session: %v", err)
	}
	if _, err := st.Inspect(ctx, "mismatch"); !errors.Is(err, sessionlog.ErrHeader) {
		t.Fatalf("Inspect of a mismatched file: %v", err)
	}
	// Create refuses an id stored in the other form.
	if _, err := st.Create(ctx, sessionlog.NewHeader("noline", 1, "")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over a raw log from a zstd store: %v", err)
	}
	// A list of a missing directory reports the error.
	gone, err := jsonl.Open(filepath.Join(dir, "gone"), jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	for _, err := range gone.List(ctx) {
		if err == nil {
			t.Fatal("List of a removed directory yielded no error")
		}
	}
	if _, err := jsonl.Open(filepath.Join(dir, "notes.txt", "x"), jsonl.Options{}); err == nil {
		t.Fatal("Open under a file succeeded")
	}
}

// TestOpenRepairsMissingNewline appends after a final record that lacks its
// newline: the record is kept and the next one starts on its own line.
func TestOpenRepairsMissingNewline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := sessionlogtest.NewBuilder(0)
	b.Turn(1, "x", sessionlog.ReasonInitial)
	events := b.Take()
	h := sessionlog.NewHeader("nl", 1, "")
	p := filepath.Join(dir, "nl"+jsonl.ExtRaw)
	if err := jsonl.WriteFile(p, h, events); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	if err := os.WriteFile(p, bytes.TrimSuffix(raw, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, w, err := st.Open(ctx, "nl")
	if err != nil {
		t.Fatal(err)
	}
	s := sessionlog.NewSession(l.Log, w)
	nb := sessionlogtest.NewBuilder(l.Log.Len())
	nb.Turn(2, "y", "")
	if err := s.Append(ctx, nb.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := jsonl.ReadFile(p)
	if err != nil || d.Torn != nil || len(d.Events) != nb.Next() {
		t.Fatalf("after append: %v, torn %+v, %d events", err, d.Torn, len(d.Events))
	}
}
