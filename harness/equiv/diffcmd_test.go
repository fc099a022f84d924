package equiv

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog/logcmd"
)

// scenarioDir writes a folder in the corpus layout: the log of a committed
// fixture (edited by f) and its golden transcript as stdout.jsonl.
func scenarioDir(t *testing.T, name string, f func(t *testing.T, s *Side)) string {
	t.Helper()
	s := fixture(t, name)
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", name, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if f != nil {
		f(t, s)
		var b bytes.Buffer
		b.Write(s.Logs[0].Header.Raw)
		b.WriteByte('\n')
		for i := range s.Logs[0].Events {
			b.Write(s.Logs[0].Events[i].AppendJSON(nil))
			b.WriteByte('\n')
		}
		raw = b.Bytes()
	}
	if err := os.WriteFile(filepath.Join(dir, "session.jsonl"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stdout.jsonl"), s.Wire, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDiffMain(t *testing.T) {
	same := scenarioDir(t, "tool-call-turn", nil)
	changed := scenarioDir(t, "tool-call-turn", func(t *testing.T, s *Side) {
		edit(t, s, "tool/result", 0, func(d map[string]any) { resultPart(d)["isError"] = true })
	})
	empty := t.TempDir()
	corrupt := t.TempDir()
	if err := os.WriteFile(filepath.Join(corrupt, "session.jsonl"), []byte("{\"type\":\"session\",\"version\":7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(same, "session.jsonl")
	cases := []struct {
		name    string
		args    []string
		err     error // nil: success; errAny: any error
		outputs []string
	}{
		{"equivalent folders", []string{same, same}, nil, []string{"equivalent"}},
		{"different folders", []string{same, changed}, ErrDifferent, []string{"tool result, call 1 bash", "isError: A false, B true", "different: "}},
		{"log files only", []string{logFile, logFile}, nil, []string{"unchecked: the wire", "partial"}},
		{"flags anywhere", []string{same, "--env-line", "x", same}, nil, []string{"equivalent"}},
		{"one argument", []string{same}, logcmd.ErrUsage, nil},
		{"three arguments", []string{same, same, same}, logcmd.ErrUsage, nil},
		{"unknown flag", []string{"--nope", same, same}, logcmd.ErrUsage, nil},
		{"help", []string{"-h"}, flag.ErrHelp, []string{"usage: reel log diff A B", "--env-line"}},
		{"missing path", []string{filepath.Join(empty, "nope"), same}, errAny, nil},
		{"no log in folder", []string{empty, same}, ErrNoLog, nil},
		{"corrupt log", []string{same, corrupt}, errAny, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := DiffMain(context.Background(), c.args, &out, &out)
			switch {
			case c.err == nil && err != nil, c.err != nil && err == nil:
				t.Fatalf("DiffMain = %v, want %v\n%s", err, c.err, out.String())
			case c.err != nil && c.err != errAny && !errors.Is(err, c.err):
				t.Fatalf("DiffMain = %v, want %v", err, c.err)
			}
			for _, o := range c.outputs {
				if !strings.Contains(out.String(), o) {
					t.Errorf("output lacks %q:\n%s", o, out.String())
				}
			}
		})
	}
}

// errAny stands for "some error".
var errAny = errors.New("any error")

// TestDiffThroughLogcmd runs `reel log diff` the way cmd/reel wires it.
func TestDiffThroughLogcmd(t *testing.T) {
	dir := scenarioDir(t, "tool-call-turn", nil)
	var out, errOut bytes.Buffer
	if err := logcmd.Run(context.Background(), []string{"diff", dir, dir}, &out, &errOut, DiffCommand()); err != nil {
		t.Fatalf("reel log diff: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := logcmd.Run(context.Background(), []string{"help", "diff"}, &out, &errOut, DiffCommand()); err != nil || !strings.Contains(out.String(), "usage: reel log diff") {
		t.Errorf("reel log help diff = %v:\n%s", err, out.String())
	}
	out.Reset()
	if err := logcmd.Run(context.Background(), []string{"diff", "-h"}, &out, &errOut, DiffCommand()); err != nil || !strings.Contains(out.String(), "Exit status") {
		t.Errorf("reel log diff -h = %v:\n%s", err, out.String())
	}
	out.Reset()
	if err := logcmd.Run(context.Background(), []string{"-h"}, &out, &errOut, DiffCommand()); err != nil || !strings.Contains(out.String(), "  diff A B ") {
		t.Errorf("reel log -h does not list diff:\n%s", out.String())
	}
}
