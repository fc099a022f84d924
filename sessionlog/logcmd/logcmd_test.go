package logcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/logcmd"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// Repository fixtures used where any valid reel log will do, so these tests
// do not depend on the corpus being checked out.
const (
	toolCallLog = "../../fixtures/tool-call-turn/session.jsonl"
	textTurnLog = "../../fixtures/text-turn/session.jsonl"
)

// corpusLogs lists every session log of the conformance corpus; see
// corpustest for what a missing corpus does.
func corpusLogs(t *testing.T) []string {
	t.Helper()
	return corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
}

// run calls `reel log ARGS` and returns its stdout, stderr and error.
func run(args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := logcmd.Run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// count spells n of a noun as a user reads it: "1 event", "2 events".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func writeTo(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, path string) *jsonl.Decoded {
	t.Helper()
	d, err := jsonl.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lines splits a log file into its lines, each without the newline.
func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestVerifyCorpus(t *testing.T) {
	logs := corpusLogs(t)
	for _, f := range logs {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			out, _, err := run("verify", f)
			if err != nil {
				t.Fatalf("verify %s: %v", f, err)
			}
			want := fmt.Sprintf("%s: ok, %s", f, count(len(decode(t, f).Events), "event", "events"))
			if !strings.HasPrefix(out, want) {
				t.Errorf("verify printed %q, want it to start with %q", out, want)
			}
		})
	}
	// All at once: one ok line per file, in order, then one pairing line
	// per parent of subagents (each recorded link holds).
	out, _, err := run(append([]string{"verify"}, logs...)...)
	if err != nil {
		t.Fatalf("verify of the whole corpus: %v", err)
	}
	got := lines([]byte(out))
	var pairing []string
	for len(got) > 0 && strings.Contains(got[len(got)-1], ": pairing ok, ") {
		pairing, got = append(pairing, got[len(got)-1]), got[:len(got)-1]
	}
	children, _ := filepath.Glob(filepath.Join(corpustest.Dir(t), "*", "session.1.jsonl"))
	if len(pairing) != len(children) {
		t.Errorf("%d parents of subagents paired, want %d (the scenarios with child logs):\n%s", len(pairing), len(children), strings.Join(pairing, "\n"))
	}
	if len(got) != len(logs) {
		t.Fatalf("verify printed %d lines for %d files:\n%s", len(got), len(logs), out)
	}
	for i, f := range logs {
		if !strings.HasPrefix(got[i], f+": ok, ") {
			t.Errorf("line %d = %q, want the ok line of %s", i+1, got[i], f)
		}
	}
}

// legacyLog writes a copy of the text-turn fixture whose first
// request/header line is rewritten by edit, and returns the path, the
// physical line and the seq of that event.
func legacyLog(t *testing.T, edit func(string) string) (string, int, int) {
	t.Helper()
	d := decode(t, textTurnLog)
	seq := slices.IndexFunc(d.Events, func(e sessionlog.Event) bool { return e.Type == sessionlog.TypeRequestHeader })
	if seq < 0 {
		t.Fatalf("%s has no request/header", textTurnLog)
	}
	line := d.LineOf(seq)
	ls := lines(readBytes(t, textTurnLog))
	edited := edit(ls[line-1])
	if edited == ls[line-1] {
		t.Fatalf("the edit changed nothing in %q", ls[line-1])
	}
	ls[line-1] = edited
	return writeTo(t, t.TempDir(), "legacy.jsonl", []byte(strings.Join(ls, "\n")+"\n")), line, seq
}

func TestLegacyHeadersRefused(t *testing.T) {
	cases := []struct {
		name, wantType string
		edit           func(string) string
	}{
		{"header-delta", sessionlog.TypeLegacyHeaderDelta, func(l string) string {
			return strings.Replace(l, `"type":"request/header"`, `"type":"request/header-delta"`, 1)
		}},
		{"fallback", sessionlog.TypeRequestHeader, func(l string) string {
			return strings.Replace(l, `"reason":"initial"`, `"reason":"fallback"`, 1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, line, seq := legacyLog(t, c.edit)
			where := fmt.Sprintf("%s:%d: seq %d (%s)", path, line, seq, c.wantType)
			// verify, and every command that validates the log, refuses it
			// and says where.
			for _, args := range [][]string{
				{"verify", path},
				{"show", path},
				{"surface", path},
				{"encode", path},
				{"repair", path},
				{"request", path, "--turn", "1", "--step", "1"},
				{"convert", path, filepath.Join(t.TempDir(), "out.jsonl")},
			} {
				out, _, err := run(args...)
				if err == nil {
					t.Errorf("%s accepted a legacy log; printed %q", args[0], out)
					continue
				}
				if !errors.Is(err, sessionlog.ErrLegacy) {
					t.Errorf("%s: error %v is not sessionlog.ErrLegacy", args[0], err)
				}
				if !strings.Contains(err.Error(), where) {
					t.Errorf("%s: error %q does not name %q", args[0], err, where)
				}
				if errors.Is(err, logcmd.ErrUsage) {
					t.Errorf("%s: a refused log is not a usage error: %v", args[0], err)
				}
			}
		})
	}
}

func TestVerifyReportsEachFile(t *testing.T) {
	bad, _, _ := legacyLog(t, func(l string) string {
		return strings.Replace(l, `"reason":"initial"`, `"reason":"fallback"`, 1)
	})
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	out, _, err := run("verify", textTurnLog, bad, missing)
	if err == nil {
		t.Fatal("verify of a bad and a missing file succeeded")
	}
	if !strings.Contains(out, textTurnLog+": ok, ") {
		t.Errorf("the good file is not reported ok:\n%s", out)
	}
	for _, f := range []string{bad, missing} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not name %s", err, f)
		}
	}
}

// tornLog writes the text-turn fixture followed by a half-written record
// and returns its path and the line of the torn record.
func tornLog(t *testing.T, dir string) (string, int) {
	t.Helper()
	orig := readBytes(t, textTurnLog)
	torn := append(bytes.Clone(orig), `{"type":"turn/start","seq":25,"ti`...)
	return writeTo(t, dir, "torn.jsonl", torn), len(lines(orig)) + 1
}

func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	path, line := tornLog(t, dir)
	events := len(decode(t, textTurnLog).Events)

	out, _, err := run("verify", path)
	if err != nil {
		t.Fatalf("verify of a torn tail: %v", err)
	}
	for _, want := range []string{fmt.Sprintf("%s: ok, %s", path, count(events, "event", "events")), fmt.Sprintf("torn tail at line %d", line)} {
		if !strings.Contains(out, want) {
			t.Errorf("verify printed %q, want %q in it", out, want)
		}
	}

	dst := filepath.Join(dir, "out.db")
	_, _, err = run("convert", path, dst)
	if err == nil || !strings.Contains(err.Error(), "torn tail") || !strings.Contains(err.Error(), "repair") {
		t.Errorf("convert of a torn log: err = %v, want a refusal that suggests repair", err)
	}
	if _, serr := os.Stat(dst); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("convert of a torn log left %s behind (stat: %v)", dst, serr)
	}

	out, _, err = run("repair", path)
	if err != nil {
		t.Fatalf("repair of a torn log: %v", err)
	}
	if want := fmt.Sprintf("dropped a torn tail of 1 record at line %d", line); !strings.Contains(out, want) {
		t.Errorf("repair printed %q, want %q", out, want)
	}
	if !bytes.Equal(readBytes(t, path), readBytes(t, textTurnLog)) {
		t.Error("repair of a complete log with a torn tail did not leave exactly the complete log")
	}
}

func TestEncodeCorpus(t *testing.T) {
	for _, f := range corpusLogs(t) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			out, _, err := run("encode", f)
			if err != nil {
				t.Fatal(err)
			}
			if want := readBytes(t, f); out != string(want) {
				t.Errorf("encode of %s differs from the file (%d bytes, file %d)", f, len(out), len(want))
			}
		})
	}
}

func TestConvertRoundTripCorpus(t *testing.T) {
	for _, f := range corpusLogs(t) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			want := readBytes(t, f)
			for _, ext := range []string{".db", ".jsonl.zst"} {
				dir := t.TempDir()
				mid := filepath.Join(dir, "mid"+ext)
				back := filepath.Join(dir, "back.jsonl")
				if _, _, err := run("convert", f, mid); err != nil {
					t.Fatalf("convert to %s: %v", ext, err)
				}
				if _, _, err := run("convert", mid, back); err != nil {
					t.Fatalf("convert from %s: %v", ext, err)
				}
				if !bytes.Equal(readBytes(t, back), want) {
					t.Errorf("jsonl → %s → jsonl is not byte-identical", ext)
				}
				// The intermediate file holds the same log: encode reads it.
				out, _, err := run("encode", mid)
				if err != nil {
					t.Fatalf("encode %s: %v", ext, err)
				}
				if out != string(want) {
					t.Errorf("encode of the %s copy differs from the original", ext)
				}
			}
		})
	}
}

// TestConvertFixturesBothWays: every fixture log goes to SQLite and to
// zstd JSONL and back byte for byte. .sqlite is the same backend as .db
// (the extension alone picks it), so the first fixture alone also goes
// through a .sqlite (every fixture did, a third of the test's 20 s under
// -race -cover). The fixtures run in parallel: each converts into a
// folder of its own, and Run keeps no state between calls.
func TestConvertFixturesBothWays(t *testing.T) {
	// Without the corpus the round trip is still checked on reel's own logs.
	logs, _ := filepath.Glob("../../fixtures/*/session*.jsonl")
	if len(logs) == 0 {
		t.Fatal("no fixture logs under ../../fixtures")
	}
	for i, f := range logs {
		exts := []string{".db", ".jsonl.zst"}
		if i == 0 {
			exts = append(exts, ".sqlite")
		}
		rel, err := filepath.Rel("../../fixtures", f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			for _, ext := range exts {
				dir := t.TempDir()
				mid, back := filepath.Join(dir, "mid"+ext), filepath.Join(dir, "back.jsonl")
				if _, _, err := run("convert", f, mid); err != nil {
					t.Fatalf("%s → %s: %v", f, ext, err)
				}
				if _, _, err := run("convert", mid, back); err != nil {
					t.Fatalf("%s → jsonl: %v", mid, err)
				}
				if !bytes.Equal(readBytes(t, back), readBytes(t, f)) {
					t.Errorf("%s: jsonl → %s → jsonl is not byte-identical", f, ext)
				}
			}
		})
	}
}

func TestConvertRefusesToOverwrite(t *testing.T) {
	for _, ext := range []string{".jsonl", ".db"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			out := writeTo(t, dir, "out"+ext, []byte("keep me\n"))
			_, _, err := run("convert", textTurnLog, out)
			if err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("convert over an existing file: err = %v, want a refusal", err)
			}
			if got := readBytes(t, out); string(got) != "keep me\n" {
				t.Errorf("the existing file was changed to %q", got)
			}
		})
	}
}

func TestVerifySQLite(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "log.db")
	if _, _, err := run("convert", toolCallLog, db); err != nil {
		t.Fatal(err)
	}
	out, _, err := run("verify", db)
	if err != nil {
		t.Fatalf("verify %s: %v", db, err)
	}
	if want := fmt.Sprintf("%s: ok, %d events\n", db, len(decode(t, toolCallLog).Events)); out != want {
		t.Errorf("verify printed %q, want %q", out, want)
	}
	// A file that is not a database is refused, not "verified".
	notDB := writeTo(t, dir, "junk.db", []byte("not a database"))
	if _, _, err := run("verify", notDB); err == nil {
		t.Error("verify accepted a junk .db file")
	}
}

// cutAfterFirstToolCall writes the tool-call fixture cut right after its
// first tool/call record (the crash point) and returns the path and the
// call's seq.
func cutAfterFirstToolCall(t *testing.T, dir, name string) (string, int) {
	t.Helper()
	d := decode(t, toolCallLog)
	seq := slices.IndexFunc(d.Events, func(e sessionlog.Event) bool { return e.Type == sessionlog.TypeToolCall })
	if seq < 0 {
		t.Fatalf("%s has no tool/call", toolCallLog)
	}
	ls := lines(readBytes(t, toolCallLog))
	path := writeTo(t, dir, name, []byte(strings.Join(ls[:d.LineOf(seq)], "\n")+"\n"))
	if cut := decode(t, path); len(cut.Events) != seq+1 || cut.Torn != nil {
		t.Fatalf("the cut log has %d events (torn %v), want %d ending in the tool/call", len(cut.Events), cut.Torn, seq+1)
	}
	return path, seq
}

func TestRepairClosesACrashedToolCall(t *testing.T) {
	dir := t.TempDir()
	path, call := cutAfterFirstToolCall(t, dir, "cut.jsonl")

	out, _, err := run("verify", path)
	if err != nil {
		t.Fatalf("verify of an unfinished log: %v", err)
	}
	if !strings.Contains(out, "unfinished turn (repair would add 3 closers)") {
		t.Errorf("verify printed %q, want the unfinished-turn note", out)
	}

	out, _, err = run("repair", path)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	want := fmt.Sprintf("%[1]s: added seq %[2]d (tool/result)\n%[1]s: added seq %[3]d (step/end)\n%[1]s: added seq %[4]d (turn/end)\n",
		path, call+1, call+2, call+3)
	if out != want {
		t.Errorf("repair printed\n%s\nwant\n%s", out, want)
	}
	d := decode(t, path)
	if len(d.Events) != call+4 {
		t.Fatalf("the repaired log has %d events, want %d", len(d.Events), call+4)
	}
	res := d.Events[call+1]
	if res.Type != sessionlog.TypeToolResult || !slices.Equal(res.SourceEventSeqs, []int{call}) || res.SurfaceOp == nil || res.SurfaceOp.Replace {
		t.Errorf("closer %s cites %v with op %v; want a tool/result appended citing seq %d", res.Type, res.SourceEventSeqs, res.SurfaceOp, call)
	}
	end, err := sessionlog.DecodeData[sessionlog.TurnEndData](&d.Events[call+3])
	if err != nil || end.Reason.Kind != "interrupted" {
		t.Errorf("the last closer is %s %+v (%v), want turn/end interrupted", d.Events[call+3].Type, end, err)
	}
	out, _, err = run("verify", path)
	if err != nil || strings.Contains(out, "unfinished") {
		t.Errorf("verify after repair: %q, %v", out, err)
	}

	repaired := readBytes(t, path)
	out, _, err = run("repair", path)
	if err != nil {
		t.Fatal(err)
	}
	if want := path + ": nothing to repair\n"; out != want {
		t.Errorf("second repair printed %q, want %q", out, want)
	}
	if !bytes.Equal(readBytes(t, path), repaired) {
		t.Error("a repair with nothing to repair changed the file")
	}

	// The same crash stored in SQLite repairs to the same log.
	cut, _ := cutAfterFirstToolCall(t, dir, "cut2.jsonl")
	db := filepath.Join(dir, "cut.db")
	if _, _, err := run("convert", cut, db); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run("repair", db); err != nil {
		t.Fatalf("repair %s: %v", db, err)
	}
	enc, _, err := run("encode", db)
	if err != nil {
		t.Fatal(err)
	}
	// Closers take the time of the last event, so both repairs agree byte
	// for byte.
	if enc != string(repaired) {
		t.Errorf("the repaired database encodes differently from the repaired JSONL:\n%s\nwant\n%s", enc, repaired)
	}
}

func TestRepairRefusesMissingFile(t *testing.T) {
	if _, _, err := run("repair", filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("repair of a missing file: %v, want os.ErrNotExist", err)
	}
}

// surfaceJSON is the shape `reel log surface` prints.
type surfaceJSON struct {
	Surface      []int `json:"surface"`
	Replacements []struct {
		Seq      int   `json:"seq"`
		Start    int   `json:"start"`
		End      int   `json:"end"`
		Shadowed []int `json:"shadowed"`
	} `json:"replacements"`
}

func TestSurfaceWithReplacement(t *testing.T) {
	// Find a corpus log with a replace surfaceOp by scanning.
	var path string
	var replace *sessionlog.Event
	var d *jsonl.Decoded
	for _, f := range corpusLogs(t) {
		dd := decode(t, f)
		for i := range dd.Events {
			if op := dd.Events[i].SurfaceOp; op != nil && op.Replace {
				path, replace, d = f, &dd.Events[i], dd
				break
			}
		}
		if replace != nil {
			break
		}
	}
	if replace == nil {
		t.Fatal("no corpus log has a replace surfaceOp")
	}
	out, _, err := run("surface", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s surfaceJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("surface output is not the expected JSON: %v\n%s", err, out)
	}
	if len(s.Replacements) == 0 {
		t.Fatalf("%s: no replacements reported:\n%s", path, out)
	}
	r := s.Replacements[0]
	if r.Seq != replace.Seq || r.Start != replace.SurfaceOp.Start || r.End != replace.SurfaceOp.End {
		t.Errorf("first replacement %+v, want seq %d start %d end %d", r, replace.Seq, replace.SurfaceOp.Start, replace.SurfaceOp.End)
	}
	if len(r.Shadowed) == 0 {
		t.Errorf("replacement %+v shadows nothing", r)
	}
	for _, seq := range r.Shadowed {
		if !slices.Contains(replace.SourceEventSeqs, seq) {
			t.Errorf("shadowed seq %d is not among the replace event's sourceEventSeqs %v", seq, replace.SourceEventSeqs)
		}
	}
	// Independently: the surface is every surface event minus what
	// replacements shadowed.
	shadowed := map[int]bool{}
	for _, r := range s.Replacements {
		for _, seq := range r.Shadowed {
			shadowed[seq] = true
		}
	}
	var want []int
	for _, e := range d.Events {
		if e.SurfaceOp != nil && !shadowed[e.Seq] {
			want = append(want, e.Seq)
		}
	}
	got := slices.Sorted(slices.Values(s.Surface))
	if !slices.Equal(got, want) {
		t.Errorf("surface %v, want the seqs %v", s.Surface, want)
	}
	if !slices.Contains(s.Surface, replace.Seq) {
		t.Errorf("the replace event %d is not on the surface %v", replace.Seq, s.Surface)
	}
}

func TestSurfaceWithoutReplacement(t *testing.T) {
	out, _, err := run("surface", toolCallLog, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.Join(bytes.Fields(raw["replacements"]), nil)); got != "[]" {
		t.Errorf("replacements = %s, want []", raw["replacements"])
	}
	var s surfaceJSON
	_ = json.Unmarshal([]byte(out), &s)
	var want []int
	for _, e := range decode(t, toolCallLog).Events {
		if e.SurfaceOp != nil {
			want = append(want, e.Seq)
		}
	}
	if len(want) == 0 || !slices.Equal(s.Surface, want) {
		t.Errorf("surface %v, want every appended seq in order %v", s.Surface, want)
	}
}

// expectedRequest rebuilds, independently of Reconstruct, the request step
// (turn, step) sent: the latest header and the projection of the surface as
// it stood when the step's model call began.
func expectedRequest(t *testing.T, d *jsonl.Decoded, turn, step int) (json.RawMessage, []json.RawMessage) {
	t.Helper()
	start := -1
	for i := range d.Events {
		e := &d.Events[i]
		if e.Type != sessionlog.TypeStepStart {
			continue
		}
		sd, err := sessionlog.DecodeData[sessionlog.StepData](e)
		if err != nil {
			t.Fatal(err)
		}
		if sd.Turn == turn && sd.Step == step {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("no step/start for turn %d step %d", turn, step)
	}
	call := start + 1
	for call < len(d.Events) && d.Events[call].Type != sessionlog.TypeRequestContext && d.Events[call].Type != sessionlog.TypeAssistantChunk {
		call++
	}
	prefix := d.Events[:call]
	var header json.RawMessage
	for i := range prefix {
		if prefix[i].Type == sessionlog.TypeRequestHeader {
			hd, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&prefix[i])
			if err != nil {
				t.Fatal(err)
			}
			header = hd.Header
		}
	}
	fold, err := sessionlog.FoldSurface(prefix)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	for _, seq := range fold.Seqs {
		m, err := sessionlog.ProjectMessage(&d.Events[seq])
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return header, msgs
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return c.String()
}

func TestRequest(t *testing.T) {
	d := decode(t, toolCallLog)
	cases := []struct {
		name       string
		args       []string
		turn, step int
	}{
		{"flags after file", []string{"request", toolCallLog, "--turn", "1", "--step", "1"}, 1, 1},
		{"flags before file", []string{"request", "--turn=1", "--step=1", toolCallLog}, 1, 1},
		{"second step", []string{"request", toolCallLog, "--turn", "1", "--step", "2"}, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run(c.args...)
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				Header   json.RawMessage   `json:"header"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal([]byte(out), &req); err != nil {
				t.Fatalf("request output is not JSON: %v\n%s", err, out)
			}
			header, msgs := expectedRequest(t, d, c.turn, c.step)
			if compact(t, req.Header) != compact(t, header) {
				t.Errorf("header\n%s\nwant\n%s", req.Header, header)
			}
			if len(req.Messages) != len(msgs) || len(msgs) == 0 {
				t.Fatalf("%d messages, want %d (the surface projection)", len(req.Messages), len(msgs))
			}
			for i := range msgs {
				if compact(t, req.Messages[i]) != compact(t, msgs[i]) {
					t.Errorf("message %d\n%s\nwant\n%s", i, req.Messages[i], msgs[i])
				}
			}
		})
	}
}

func TestRequestMissingStep(t *testing.T) {
	_, _, err := run("request", toolCallLog, "--turn", "9", "--step", "1")
	if err == nil {
		t.Fatal("request for a step that does not exist succeeded")
	}
	if !errors.Is(err, sessionlog.ErrNotFound) || !strings.Contains(err.Error(), toolCallLog) {
		t.Errorf("error %v: want sessionlog.ErrNotFound naming the file", err)
	}
	if _, _, err := run("request", filepath.Join(t.TempDir(), "none.jsonl"), "--turn", "1", "--step", "1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("request on a missing file: %v, want os.ErrNotExist", err)
	}
}

func TestShow(t *testing.T) {
	out, _, err := run("show", toolCallLog)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, toolCallLog)
	if first := lines([]byte(out))[0]; !strings.HasPrefix(first, "session "+d.Header.ID+"  created ") {
		t.Errorf("first line %q, want the session header", first)
	}
	// Types are padded to the longest one shown (at least 18 columns).
	tw := 18
	for i := range d.Events {
		if d.Events[i].Type != sessionlog.TypeAssistantChunk {
			tw = max(tw, len(d.Events[i].Type))
		}
	}
	for i := range d.Events {
		e := &d.Events[i]
		if e.Type == sessionlog.TypeAssistantChunk {
			continue
		}
		line := fmt.Sprintf("%6d  %-*s %s\n", e.Seq, tw, e.Type, logcmd.Summary(e))
		if !strings.Contains(out, line) {
			t.Errorf("show lacks the line %q", line)
		}
	}
	// Summaries carry the content a reader looks for.
	call := d.Events[slices.IndexFunc(d.Events, func(e sessionlog.Event) bool { return e.Type == sessionlog.TypeToolCall })]
	tc, err := sessionlog.DecodeData[sessionlog.ToolCallData](&call)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"chunks through seq",
		"turn 1: completed",
		"initial (full snapshot; system prompt",
		"mode workspace-write",
		"policy on-request",
		tc.CallID + " " + tc.Name,
		"← ok: ",
		"Use the bash tool to run exactly",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

func TestShowCorpus(t *testing.T) {
	for _, f := range corpusLogs(t) {
		out, _, err := run("show", f)
		if err != nil {
			t.Errorf("show %s: %v", f, err)
			continue
		}
		for _, e := range decode(t, f).Events {
			if !strings.Contains(out, fmt.Sprintf("%6d  %s", e.Seq, e.Type)) && e.Type != sessionlog.TypeAssistantChunk {
				t.Errorf("show %s lacks seq %d (%s)", f, e.Seq, e.Type)
			}
		}
	}
}

func TestSummary(t *testing.T) {
	ev := func(typ, data string, op *sessionlog.SurfaceOp) *sessionlog.Event {
		return &sessionlog.Event{Type: typ, Data: json.RawMessage(data), SurfaceOp: op}
	}
	long := strings.Repeat("é", 150)
	cases := []struct {
		name string
		e    *sessionlog.Event
		want string
	}{
		{"turn start", ev("turn/start", `{"turn":3}`, nil), "turn 3"},
		{"step end", ev("step/end", `{"turn":3,"step":2}`, nil), "turn 3 step 2"},
		{"turn end error", ev("turn/end", `{"turn":2,"reason":{"kind":"error","error":{"message":"boom"}}}`, nil), "turn 2: error: boom"},
		{"user clipped", ev("user/message", `{"role":"user","content":[{"type":"text","text":"`+long+`"}]}`, &sessionlog.SurfaceOp{}),
			strings.Repeat("é", 100) + "…"},
		{"newlines", ev("user/message", `{"role":"user","content":[{"type":"text","text":"a\nb"}]}`, &sessionlog.SurfaceOp{}), "a⏎b"},
		{"replace", ev("user/message", `{"role":"user","content":[{"type":"text","text":"sum"}]}`, &sessionlog.SurfaceOp{Replace: true, Start: 4, End: 9}),
			"[replaces 4…9] sum"},
		{"assistant", ev("assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"hm"},{"type":"text","text":"hi"},{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}]}}`, &sessionlog.SurfaceOp{}),
			"(thinking) hm | hi | → read {}"},
		{"tool result error", ev("tool/result", `{"turn":1,"step":1,"message":{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","isError":true,"content":[{"type":"text","text":"denied"}]}]}}`, &sessionlog.SurfaceOp{}),
			"← error: denied"},
		{"tool call", ev("tool/call", `{"turn":1,"step":1,"callId":"c9","name":"grep","arguments":"{\"q\":1}"}`, nil), `c9 grep {"q":1}`},
		{"unknown type verbatim", ev("x/custom", `{"k":1}`, nil), `{"k":1}`},
		{"no system prompt", ev("request/header", `{"header":{"config":{"provider":"p","model":"m"}},"reason":"resume"}`, nil), "resume (full snapshot; no system prompt)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := logcmd.Summary(c.e); !strings.HasPrefix(got, c.want) {
				t.Errorf("Summary = %q, want it to start with %q", got, c.want)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"frobnicate"}},
		{"verify without files", []string{"verify"}},
		{"show without file", []string{"show"}},
		{"show two files", []string{"show", "a", "b"}},
		{"surface two files", []string{"surface", "a", "b"}},
		{"encode without file", []string{"encode"}},
		{"repair two files", []string{"repair", "a", "b"}},
		{"convert one arg", []string{"convert", "a"}},
		{"convert three args", []string{"convert", "a", "b", "c"}},
		{"request without file", []string{"request", "--turn", "1", "--step", "1"}},
		{"request without step", []string{"request", "a", "--turn", "1"}},
		{"request two files", []string{"request", "a", "b", "--turn", "1", "--step", "1"}},
		{"request unknown flag", []string{"request", "a", "--bogus"}},
		{"request zero turn", []string{"request", "a", "--turn", "0", "--step", "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run(c.args...)
			if !errors.Is(err, logcmd.ErrUsage) {
				t.Errorf("Run(%q) = %v, want logcmd.ErrUsage", c.args, err)
			}
			if out != "" {
				t.Errorf("a usage error printed to stdout: %q", out)
			}
		})
	}
	for _, h := range []string{"help", "-h", "--help"} {
		out, _, err := run(h)
		if err != nil || !strings.HasPrefix(out, "usage: reel log") {
			t.Errorf("Run(%q) = %q, %v; want the usage on stdout", h, out, err)
		}
	}
	_, stderr, _ := run("frobnicate")
	if !strings.Contains(stderr, "usage: reel log") {
		t.Errorf("an unknown command does not print the usage to stderr: %q", stderr)
	}
}

// A SQLite log holding a legacy header delta or a fallback header is
// refused by verify with the seq and the event named, like JSONL.
func TestVerifyRefusesLegacySQLite(t *testing.T) {
	h := sessionlog.NewHeader("legacy", 1, "/w")
	base := []sessionlog.Event{
		{Type: "turn/start", Seq: 0, Time: 1, Data: json.RawMessage(`{"turn":1}`)},
		{Type: "request/header", Seq: 1, Time: 1, Data: json.RawMessage(`{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}`)},
	}
	cases := map[string]sessionlog.Event{
		"delta":    {Type: "request/header-delta", Seq: 2, Time: 1, Data: json.RawMessage(`{"system":{"op":"keep"}}`)},
		"fallback": {Type: "request/header", Seq: 2, Time: 1, Data: json.RawMessage(`{"header":{"config":{}},"reason":"fallback"}`)},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "legacy.db")
			if err := sqlite.WriteFile(db, h, append(append([]sessionlog.Event(nil), base...), bad)); err != nil {
				t.Fatal(err)
			}
			_, _, err := run("verify", db)
			if !errors.Is(err, sessionlog.ErrLegacy) || !strings.Contains(err.Error(), "seq 2 ("+bad.Type+")") || !strings.Contains(err.Error(), db) {
				t.Fatalf("verify %s: %v", name, err)
			}
		})
	}
}

// TestShowSubagents: show of a parent's log lists the subagents' logs
// beside it, in creation order; show of a child's log names its parent,
// its depth and, for a fork, the events it copied.
func TestShowSubagents(t *testing.T) {
	src := filepath.Join(corpustest.Dir(t), "subagent-mixed")
	dir := t.TempDir()
	var ids []string
	for _, name := range []string{"session.jsonl", "session.1.jsonl", "session.2.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		id := decode(t, filepath.Join(src, name)).Header.ID
		ids = append(ids, id)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := run("show", filepath.Join(dir, ids[0]+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := "subagent " + ids[1] + "  " + filepath.Join(dir, ids[1]+".jsonl") + "\nsubagent " + ids[2] + "  " + filepath.Join(dir, ids[2]+".jsonl") + "\n"
	if !strings.Contains(out, want) {
		t.Errorf("show of the parent lacks\n%s\ngot:\n%.600s", want, out)
	}
	out, _, err = run("show", filepath.Join(dir, ids[2]+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "subagent of "+ids[0]+"  depth 1  forked: its first 36 events are the parent's\n") {
		t.Errorf("show of the fork child:\n%.400s", out)
	}
}

// TestVerifyPairing: verify of a folder checks both sides of every
// parent–subagent link; a child whose parent made no call for it, a fork
// whose seed is not the parent's, or a call left unanswered fails.
func TestVerifyPairing(t *testing.T) {
	src := filepath.Join(corpustest.Dir(t), "subagent-mixed")
	for _, c := range []struct {
		name, file, old, new, want string
	}{
		{name: "as recorded", want: "pairing ok, 2 subagents"},
		{name: "the fork's seed edited", file: "session.2.jsonl", old: `"turn":1}`, new: `"turn":7}`, want: "the fork's seed: event"},
		{name: "the spawn call renamed", file: "session.jsonl", old: `"name":"subagent",`, new: `"name":"other_tool",`, want: "2 subagent logs, but the parent"},
		{name: "the fork called as a spawn", file: "session.jsonl", old: `"name":"subagent_fork"`, new: `"name":"subagent"`, want: "is a fork (subagent_fork), but the parent's call 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"session.jsonl", "session.1.jsonl", "session.2.jsonl"} {
				b, err := os.ReadFile(filepath.Join(src, name))
				if err != nil {
					t.Fatal(err)
				}
				if name == c.file {
					// The first line holding old that is a tool/call (a
					// call's name) or, for a child, any event.
					lines := strings.SplitAfter(string(b), "\n")
					changed := false
					for i, l := range lines {
						if i > 0 && strings.Contains(l, c.old) && (name != "session.jsonl" || strings.HasPrefix(l, `{"type":"tool/call"`)) {
							lines[i] = strings.Replace(l, c.old, c.new, 1)
							changed = true
							break
						}
					}
					if !changed {
						t.Fatalf("the tampering changed nothing in %s", name)
					}
					b = []byte(strings.Join(lines, ""))
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, err := run("verify", dir)
			if got := out + errOut + fmt.Sprint(err); !strings.Contains(got, c.want) || (err == nil) != (c.file == "") {
				t.Errorf("verify: err %v, output:\n%s\nwant %q", err, got, c.want)
			}
		})
	}
}
