package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sessionlogtest"
)

const repairID = "repair"

// baseLog is a log of two complete turns and an unfinished third (a tool
// call without a result), as three append batches.
type baseLog struct {
	header  []byte   // header line
	batches [][]byte // encoded records of each batch
	counts  []int    // events per batch
}

func newBaseLog(t *testing.T) baseLog {
	t.Helper()
	h := sessionlog.NewHeader(repairID, 1_783_352_050_748, "/work")
	b := sessionlogtest.NewBuilder(0)
	var base baseLog
	base.header = append(append([]byte(nil), h.Raw...), '\n')
	add := func() {
		evs := b.Take()
		base.batches = append(base.batches, jsonl.AppendRecords(nil, evs))
		base.counts = append(base.counts, len(evs))
	}
	b.Turn(1, "one", sessionlog.ReasonInitial)
	add()
	b.Turn(2, "two", "")
	add()
	b.TurnStart(3)
	b.StepStart(1)
	b.User("three")
	call := sessionlogtest.Call{ID: "c3", Name: "bash", Arguments: `{}`}
	b.Assistant("calling", call)
	b.ToolCall(call)
	add()
	return base
}

func (b baseLog) events() int {
	n := 0
	for _, c := range b.counts {
		n += c
	}
	return n
}

// raw is the plain JSONL file.
func (b baseLog) raw() []byte { return bytes.Join(append([][]byte{b.header}, b.batches...), nil) }

// lines are the raw file's lines, each with its '\n'.
func (b baseLog) lines() [][]byte { return splitLines(b.raw()) }

// zst is the zstd file: one frame for the header and one per batch.
func (b baseLog) zst(t *testing.T) []byte {
	return frames(t, append([][]byte{b.header}, b.batches...)...)
}

// findLine returns the index of the first line containing s.
func findLine(t *testing.T, lines [][]byte, s string) int {
	t.Helper()
	for i, l := range lines {
		if bytes.Contains(l, []byte(s)) {
			return i
		}
	}
	t.Fatalf("no line contains %q", s)
	return -1
}

func joinLines(lines ...[]byte) []byte { return bytes.Join(lines, nil) }

type corruption struct {
	name    string
	zst     bool
	corrupt func(t *testing.T, b baseLog) []byte
	// want is the load error (nil: the log loads), mention what it must say.
	want    error
	mention []string
	// lost is how many stored events a successful load drops; dropped the
	// physical records of the torn tail.
	lost, dropped int
}

func TestCorruption(t *testing.T) {
	firstTurnEnd := `"type":"turn/end","seq":`
	for _, tc := range []corruption{
		{name: "intact", corrupt: func(t *testing.T, b baseLog) []byte { return b.raw() }},
		{name: "torn final line", corrupt: func(t *testing.T, b baseLog) []byte {
			raw := b.raw()
			return append(raw, `{"type":"tool/result","seq":99,"time":1,"da`...)
		}, dropped: 1},
		{name: "torn final line with newline", corrupt: func(t *testing.T, b baseLog) []byte {
			return append(b.raw(), "{\"type\":\"step/e\n"...)
		}, dropped: 1},
		{name: "last line cut in half", corrupt: func(t *testing.T, b baseLog) []byte {
			raw := b.raw()
			last := b.lines()[len(b.lines())-1]
			return raw[:len(raw)-len(last)/2]
		}, lost: 1, dropped: 1},
		{name: "zero-filled tail", corrupt: func(t *testing.T, b baseLog) []byte {
			return append(b.raw(), make([]byte, 4096)...)
		}, dropped: 1},
		{name: "missing final newline", corrupt: func(t *testing.T, b baseLog) []byte {
			raw := b.raw()
			return raw[:len(raw)-1]
		}},
		{name: "garbage line in the unfinished turn", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			i := findLine(t, ls, `"text":"three"`)
			return joinLines(append(append(ls[:i:i], []byte("#garbage\n")), ls[i:]...)...)
		}, lost: 4, dropped: 5},
		{name: "corrupt line before turn/end", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			ls[2] = []byte("{\"type\":\"step/start\",\"seq\":\n")
			return joinLines(ls...)
		}, want: sessionlog.ErrCorrupt, mention: []string{"repair.jsonl:3:", "before the complete turn/end on line"}},
		{name: "blank line before turn/end", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			return joinLines(append(append(ls[:3:3], []byte("\n")), ls[3:]...)...)
		}, want: sessionlog.ErrCorrupt, mention: []string{"repair.jsonl:4:", "empty line"}},
		{name: "seq gap before turn/end", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			return joinLines(append(ls[:3:3], ls[4:]...)...)
		}, want: sessionlog.ErrCorrupt, mention: []string{"repair.jsonl:4:", "seq 3 (request/header) breaks the contiguous sequence: expected seq 2"}},
		{name: "duplicate seq before turn/end", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			return joinLines(append(append(ls[:4:4], ls[3]), ls[4:]...)...)
		}, want: sessionlog.ErrCorrupt, mention: []string{"repair.jsonl:5:", "seq 2 (user/message) breaks the contiguous sequence: expected seq 3"}},
		{name: "turn/end itself corrupt", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			i := findLine(t, ls, firstTurnEnd)
			ls[i] = ls[i][:len(ls[i])/2]
			ls[i] = append(ls[i], '\n')
			return joinLines(ls...)
		}, want: sessionlog.ErrCorrupt},
		{name: "empty file", corrupt: func(t *testing.T, b baseLog) []byte { return nil },
			want: sessionlog.ErrHeader, mention: []string{"empty log"}},
		{name: "torn header", corrupt: func(t *testing.T, b baseLog) []byte { return b.header[:10] },
			want: sessionlog.ErrHeader, mention: []string{"repair.jsonl:1:"}},
		{name: "version 1", corrupt: func(t *testing.T, b baseLog) []byte {
			return bytes.Replace(b.raw(), []byte(`"version":0`), []byte(`"version":1`), 1)
		}, want: sessionlog.ErrVersion, mention: []string{"repair.jsonl:1:", "version 1"}},
		{name: "legacy delta mid-file", corrupt: func(t *testing.T, b baseLog) []byte {
			ls := b.lines()
			ls[3] = []byte("{\"type\":\"request/header-delta\",\"seq\":2,\"time\":1,\"data\":{}}\n")
			return joinLines(ls...)
		}, want: sessionlog.ErrLegacy, mention: []string{"repair.jsonl:4:", "seq 2 (request/header-delta)"}},
		{name: "other session in the file", corrupt: func(t *testing.T, b baseLog) []byte {
			return bytes.Replace(b.raw(), []byte(`"id":"repair"`), []byte(`"id":"other"`), 1)
		}, want: sessionlog.ErrHeader, mention: []string{`holds session "other"`}},

		{name: "zstd intact", zst: true, corrupt: func(t *testing.T, b baseLog) []byte { return b.zst(t) }},
		{name: "zstd torn final frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			z := b.zst(t)
			return z[:len(z)-7]
		}, lost: 6, dropped: 1},
		{name: "zstd flipped byte in final frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			z := b.zst(t)
			z[len(z)-6] ^= 0x55
			return z
		}, lost: 6, dropped: 1},
		{name: "zstd garbage after the last frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			return append(b.zst(t), "garbage"...)
		}, dropped: 1},
		{name: "zstd torn line inside the final frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			last := b.batches[2]
			cut := last[:len(last)-20] // cuts the final tool/call line
			return frames(t, b.header, b.batches[0], b.batches[1], cut)
		}, lost: 1, dropped: 1},
		{name: "zstd final frame lacks the newline", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			last := b.batches[2]
			return frames(t, b.header, b.batches[0], b.batches[1], last[:len(last)-1])
		}},
		{name: "zstd flipped byte in a middle frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			h := frames(t, b.header)
			one := frames(t, b.batches[0])
			one[len(one)-2] ^= 0x55
			return append(append(h, one...), frames(t, b.batches[1], b.batches[2])...)
		}, want: sessionlog.ErrCorrupt, mention: []string{"repair.jsonl.zst", "an intact frame follows"}},
		{name: "zstd damaged header frame", zst: true, corrupt: func(t *testing.T, b baseLog) []byte {
			return b.zst(t)[:5]
		}, want: sessionlog.ErrHeader, mention: []string{"first zstd frame is damaged"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCorruption(t, tc) })
	}
}

// checkCorruption writes the corrupted base log, then loads it: a refused
// log must be refused by Inspect and Open alike and left byte for byte as it
// was; a loadable one must lose exactly the torn tail, and after Open (which
// truncates the tail and commits the closers) read back intact, reopen
// without new closers and take a new turn.
func checkCorruption(t *testing.T, tc corruption) {
	ctx := context.Background()
	b := newBaseLog(t)
	dir := t.TempDir()
	name := repairID + jsonl.ExtRaw
	if tc.zst {
		name = repairID + jsonl.ExtZstd
	}
	path := filepath.Join(dir, name)
	content := tc.corrupt(t, b)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	var logbuf bytes.Buffer
	st, err := jsonl.Open(dir, jsonl.Options{Logger: slog.New(slog.NewTextHandler(&logbuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := st.Inspect(ctx, repairID)
	if tc.want != nil {
		if !errors.Is(err, tc.want) {
			t.Fatalf("Inspect: got %v, want %v", err, tc.want)
		}
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		for _, m := range tc.mention {
			if !strings.Contains(msg, m) {
				t.Fatalf("error %q does not mention %q", msg, m)
			}
		}
		if _, w, err := st.Open(ctx, repairID); !errors.Is(err, tc.want) {
			if w != nil {
				_ = w.Close()
			}
			t.Fatalf("Open: got %v, want %v", err, tc.want)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, content) {
			t.Fatal("a refused log was modified")
		}
		return
	}
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	want := b.events() - tc.lost
	if got := l.Log.Len() - len(l.Closers); got != want || l.DroppedRecords != tc.dropped {
		t.Fatalf("Inspect: %d stored events, %d dropped records; want %d, %d", got, l.DroppedRecords, want, tc.dropped)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, content) {
		t.Fatal("Inspect modified the log")
	}
	l, w, err := st.Open(ctx, repairID)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	// The third turn stays unfinished unless its whole batch was lost.
	if unfinished := tc.lost < b.counts[len(b.counts)-1]; unfinished != (len(l.Closers) > 0) {
		t.Fatalf("Open committed %d closers; unfinished turn: %v", len(l.Closers), unfinished)
	}
	committed := l.Log.Events()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if tc.dropped > 0 && !strings.Contains(logbuf.String(), "torn tail") {
		t.Fatalf("no warning logged for the torn tail; log: %s", logbuf.String())
	}
	d, err := jsonl.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile after Open: %v", err)
	}
	if d.Torn != nil {
		t.Fatalf("torn tail survived Open: %+v", d.Torn)
	}
	if len(d.Events) != len(committed) {
		t.Fatalf("file holds %d events after Open, want %d", len(d.Events), len(committed))
	}
	l2, w2, err := st.Open(ctx, repairID)
	if err != nil {
		t.Fatal(err)
	}
	if len(l2.Closers) != 0 {
		t.Fatalf("second Open added closers: %d", len(l2.Closers))
	}
	sess := sessionlog.NewSession(l2.Log, w2)
	nb := sessionlogtest.NewBuilder(l2.Log.Len())
	nb.Turn(sessionlogtest.NextTurn(l2.Log.Events()), "again", sessionlog.ReasonResume)
	if err := sess.Append(ctx, nb.Take()...); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	l3, err := st.Inspect(ctx, repairID)
	if err != nil || len(l3.Closers) != 0 || l3.DroppedRecords != 0 || l3.Log.Len() != nb.Next() {
		t.Fatalf("after a new turn: %v (closers %v)", err, l3)
	}
}
