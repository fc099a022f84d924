package logcmd_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/logcmd"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// storeSession is one session put in a test store: its id and the log whose
// events it holds.
type storeSession struct {
	id  string
	log string
}

// multiDB makes a store database in a temporary state directory holding,
// as `reel acp --store sqlite` does, several sessions: "done" (the tool
// call fixture), "text" (the text turn fixture) and "crashed" (the tool
// call fixture cut after its tool/call). It returns the database path and
// the JSONL encoding and the event count of each session.
func multiDB(t *testing.T) (string, map[string]string, map[string]int) {
	t.Helper()
	dir := t.TempDir()
	cut, _ := cutAfterFirstToolCall(t, t.TempDir(), "cut.jsonl")
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	enc, events := map[string]string{}, map[string]int{}
	for i, s := range []storeSession{{"done", toolCallLog}, {"text", textTurnLog}, {"crashed", cut}} {
		d := decode(t, s.log)
		h := sessionlog.NewHeader(s.id, int64(1700000000000+i*60000), "/work/"+s.id)
		w, err := st.Create(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(ctx, d.Events...); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := jsonl.Encode(&b, h, d.Events); err != nil {
			t.Fatal(err)
		}
		enc[s.id], events[s.id] = b.String(), len(d.Events)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, sqlite.DBName), enc, events
}

// TestSessionFlag: every command that reads one log refuses a database of
// several sessions without --session, naming the ids and the flag; refuses
// a --session the file does not hold; and reads the session it names.
func TestSessionFlag(t *testing.T) {
	db, enc, _ := multiDB(t)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	cases := []struct {
		name string
		args []string
	}{
		{"show", []string{"show", db}},
		{"surface", []string{"surface", db}},
		{"surface json", []string{"surface", db, "--json"}},
		{"encode", []string{"encode", db}},
		{"request", []string{"request", db, "--turn", "1", "--step", "1"}},
		{"convert", []string{"convert", db, out}},
		{"repair", []string{"repair", db}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(c.args...)
			var se *logcmd.SessionError
			if !errors.As(err, &se) || !errors.Is(err, logcmd.ErrSessionNeeded) {
				t.Fatalf("%q: %v, want a SessionError wrapping ErrSessionNeeded", c.args, err)
			}
			for _, want := range []string{db + " holds 3 sessions (crashed, done, text)", "pass --session ID", "reel log list " + db} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			_, _, err = run(append(c.args, "--session", "nosuch")...)
			if !errors.As(err, &se) || !errors.Is(err, sessionlog.ErrNotFound) || !strings.Contains(err.Error(), `no session "nosuch"`) || !strings.Contains(err.Error(), "crashed, done, text") {
				t.Errorf("--session nosuch: %v, want a SessionError wrapping ErrNotFound that lists the ids", err)
			}
		})
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused convert made %s", out)
	}

	got, _, err := run("encode", db, "--session", "text")
	if err != nil || got != enc["text"] {
		t.Errorf("encode --session text = %v:\n%s\nwant\n%s", err, got, enc["text"])
	}
	got, _, err = run("show", "--session", "done", db)
	if err != nil || !strings.HasPrefix(got, "session done  created 2023-11-14T22:13:20Z  cwd /work/done\n") {
		t.Errorf("show --session done = %v:\n%s", err, got)
	}
	if _, _, err := run("request", db, "--session", "done", "--turn", "1", "--step", "2"); err != nil {
		t.Errorf("request --session done: %v", err)
	}
	if _, _, err := run("convert", db, out, "--session", "text"); err != nil {
		t.Fatalf("convert --session text: %v", err)
	}
	if b := readBytes(t, out); string(b) != enc["text"] {
		t.Errorf("convert --session text wrote\n%s\nwant\n%s", b, enc["text"])
	}
	// A JSONL file holds one session: --session must name it.
	if _, _, err := run("show", out, "--session", "text"); err != nil {
		t.Errorf("show of a JSONL log with its own --session: %v", err)
	}
	if _, _, err := run("show", out, "--session", "done"); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Errorf("show of a JSONL log with another --session: %v, want ErrNotFound", err)
	}
}

// TestVerifyEverySession: verify checks each session of a database unless
// --session picks one.
func TestVerifyEverySession(t *testing.T) {
	db, _, events := multiDB(t)
	n := func(id string) string { return count(events[id], "event", "events") }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"all", []string{"verify", db},
			db + " session crashed: ok, " + n("crashed") + "; unfinished turn (repair would add 3 closers)\n" +
				db + " session done: ok, " + n("done") + "\n" +
				db + " session text: ok, " + n("text") + "\n"},
		{"one", []string{"verify", db, "--session", "text"}, db + " session text: ok, " + n("text") + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run(c.args...)
			if err != nil || out != c.want {
				t.Errorf("%q = %v:\n%s\nwant\n%s", c.args, err, out, c.want)
			}
		})
	}
}

// TestRepairOneSession: repair --session appends the closers to that
// session only, under its lock; a live session is refused.
func TestRepairOneSession(t *testing.T) {
	db, enc, _ := multiDB(t)
	dir := filepath.Dir(db)
	st, err := sqlite.Open(dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, w, err := st.Open(context.Background(), "done")
	if err != nil {
		t.Fatal(err)
	}
	// Another session's writer does not block this one.
	out, _, err := run("repair", db, "--session", "crashed")
	if err != nil || strings.Count(out, ": added seq ") != 3 || !strings.HasPrefix(out, db+" session crashed: added seq ") {
		t.Fatalf("repair --session crashed = %v:\n%s", err, out)
	}
	// A live session is refused.
	_, _, err = run("repair", db, "--session", "done")
	var le *logcmd.LiveError
	if !errors.As(err, &le) || le.Session != "done" {
		t.Errorf("repair of a live session: %v, want a LiveError for session done", err)
	}
	if err := errors.Join(w.Close(), st.Close()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"done", "text"} {
		if got, _, err := run("encode", db, "--session", id); err != nil || got != enc[id] {
			t.Errorf("repair of crashed changed session %s (%v)", id, err)
		}
	}
	out, _, err = run("verify", db, "--session", "crashed")
	if err != nil || strings.Contains(out, "unfinished") {
		t.Errorf("verify after repair: %q, %v", out, err)
	}
	out, _, err = run("repair", db, "--session", "crashed")
	if err != nil || out != db+" session crashed: nothing to repair\n" {
		t.Errorf("second repair: %q, %v", out, err)
	}
}

// TestList lists a database and a state directory as a table, golden in
// testdata.
func TestList(t *testing.T) {
	db, _, _ := multiDB(t)
	dir := filepath.Dir(db)
	for _, id := range []string{"a-jsonl", "b-zst"} {
		ext := jsonl.ExtRaw
		if id == "b-zst" {
			ext = jsonl.ExtZstd
		}
		if _, _, err := run("convert", db, filepath.Join(dir, id+ext), "--session", "text"); err != nil {
			t.Fatal(err)
		}
	}
	writeTo(t, dir, "notes.txt", []byte("not a log"))
	cases := []struct {
		name, arg, golden string
	}{
		{"database", db, "testdata/list-db.txt"},
		// Converted copies keep their session's id: "text" is listed
		// three times, each with its file.
		{"state directory", dir, "testdata/list-dir.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run("list", c.arg)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.golden, out)
		})
	}
	empty := t.TempDir()
	if out, _, err := run("list", empty); err != nil || out != empty+": no sessions\n" {
		t.Errorf("list of an empty directory: %q, %v", out, err)
	}
	if _, _, err := run("list", textTurnLog); !errors.Is(err, logcmd.ErrUsage) {
		t.Errorf("list of a JSONL file: %v, want ErrUsage", err)
	}
	// A refused log is listed with its error, and the list fails.
	writeTo(t, empty, "bad.jsonl", []byte("{}\n"))
	out, _, err := run("list", empty)
	if err == nil || !strings.Contains(out, "refused: ") {
		t.Errorf("list with a bad log: %v:\n%s", err, out)
	}
}

// golden compares out with a file in testdata; REEL_WRITE_GOLDEN=1 rewrites
// it.
func golden(t *testing.T, path, out string) {
	t.Helper()
	if os.Getenv("REEL_WRITE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := string(readBytes(t, path)); out != want {
		t.Errorf("output differs from %s (REEL_WRITE_GOLDEN=1 rewrites it):\n%s\nwant\n%s", path, out, want)
	}
}

// TestSurfaceReadable: the default surface listing names each seq's type
// and previews its message; --json keeps the machine format.
func TestSurfaceReadable(t *testing.T) {
	cases := []struct{ log, golden string }{
		{toolCallLog, "testdata/surface-tool-call.txt"},
		{"../../fixtures/compaction/session.jsonl", "testdata/surface-compaction.txt"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(filepath.Dir(c.log)), func(t *testing.T) {
			out, _, err := run("surface", c.log)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.golden, out)
			js, _, err := run("surface", c.log, "--json")
			if err != nil || !strings.HasPrefix(js, "{\n  \"surface\": [") {
				t.Errorf("surface --json = %v:\n%s", err, js)
			}
		})
	}
}

// TestConvertRefusesUnknownExtension: an output name that names no backend
// is refused before anything is read or written.
func TestConvertRefusesUnknownExtension(t *testing.T) {
	for _, name := range []string{"out.txt", "out", "out.json", "out.zst"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name)
			_, _, err := run("convert", textTurnLog, out)
			if !errors.Is(err, logcmd.ErrUsage) || !strings.Contains(err.Error(), "want one of .jsonl, .jsonl.zst, .db, .sqlite") || !strings.Contains(err.Error(), out) {
				t.Errorf("convert to %s: %v", name, err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused convert made %s", out)
			}
		})
	}
}

// TestShowColumnsFitLongTypes: a type longer than the usual column widens
// the column for the whole log, so every summary starts in one column.
func TestShowColumnsFitLongTypes(t *testing.T) {
	d := decode(t, textTurnLog)
	long := sessionlog.Event{Type: "vendor/an-unusually-long-event-type", Seq: len(d.Events), Time: 1, Data: []byte(`{"k":1}`)}
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := jsonl.WriteFile(path, d.Header, append(d.Events, long)); err != nil {
		t.Fatal(err)
	}
	out, _, err := run("show", path)
	if err != nil {
		t.Fatal(err)
	}
	col := 6 + 2 + len(long.Type) + 1 // seq, two spaces, the longest type, a space
	for _, r := range lines([]byte(out))[1:] {
		f := strings.Fields(r)
		end := strings.Index(r, f[1]) + len(f[1])
		if len(r) <= col || strings.TrimSpace(r[end:col]) != "" || r[col] == ' ' {
			t.Errorf("the summary of %q does not start at column %d:\n%s", r, col, out)
		}
	}
}

// TestHelp: -h and --help print the command's usage, summary, flags and
// example to stdout and succeed; `reel log -h` lists every command.
func TestHelp(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"usage: reel log <command>", "list DB|DIR", "--session ID", "example:"}},
		{[]string{"--help"}, []string{"usage: reel log <command>"}},
		{[]string{"help", "show"}, []string{"usage: reel log show FILE [--session ID]"}},
		{[]string{"show", "-h"}, []string{"usage: reel log show FILE [--session ID]", "flags:", "-session ID", "example:\n  reel log show"}},
		{[]string{"surface", "--help"}, []string{"usage: reel log surface", "-json", "example:"}},
		{[]string{"request", "a.jsonl", "-h"}, []string{"-turn T", "-step S"}},
		{[]string{"convert", "-h"}, []string{".jsonl, .jsonl.zst, or .db/.sqlite"}},
		{[]string{"list", "-h"}, []string{"usage: reel log list DB|DIR", "example:\n  reel log list"}},
		{[]string{"verify", "-h"}, []string{"usage: reel log verify FILE|DIR..."}},
		{[]string{"encode", "-h"}, []string{"usage: reel log encode"}},
		{[]string{"repair", "-h"}, []string{"usage: reel log repair", "running reel holds is refused"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, stderr, err := run(c.args...)
			if err != nil || stderr != "" {
				t.Fatalf("%q: %v (stderr %q)", c.args, err, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q lacks %q:\n%s", c.args, w, out)
				}
			}
		})
	}
	if strings.Contains(mustRun(t, "list", "-h"), "-session") {
		t.Error("list -h offers --session, which list does not take")
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, _, err := run(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return out
}
