package tools

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// failingWriter accepts limit bytes, then fails like a full disk.
type failingWriter struct {
	limit int
	got   []byte
}

func (w *failingWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.limit-len(w.got))
	w.got = append(w.got, p[:n]...)
	if n < len(p) {
		return n, &os.PathError{Op: "write", Path: "spill", Err: syscall.ENOSPC}
	}
	return n, nil
}

// TestSpillFileWriteError injects a failing writer: spilling stops at the
// error, the rest is counted, unwritten budget is given back.
func TestSpillFileWriteError(t *testing.T) {
	w := &failingWriter{limit: 10}
	budget := NewSpillBudget(100)
	s := &spillFile{w: w, name: "spill", budget: budget}
	for _, chunk := range []string{"12345678", "abcdef", "more"} {
		if n, err := s.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v; want the whole chunk taken", n, err)
		}
	}
	if string(w.got) != "12345678ab" || s.kept != 10 || s.total != 18 || !s.cut() {
		t.Errorf("kept %q (%d of %d)", w.got, s.kept, s.total)
	}
	if !errors.Is(s.err, syscall.ENOSPC) || !strings.Contains(s.reason(), "writing it failed: write spill: no space left on device") {
		t.Errorf("reason %q", s.reason())
	}
	if budget.Used() != 10 {
		t.Errorf("budget used %d, want the 10 bytes written", budget.Used())
	}
}

func TestSpillBudget(t *testing.T) {
	var none *SpillBudget
	if none.take(5) != 5 {
		t.Error("a nil budget does not grant everything")
	}
	b := NewSpillBudget(10)
	for _, tc := range []struct{ take, want int64 }{{4, 4}, {4, 4}, {4, 2}, {1, 0}} {
		if got := b.take(tc.take); got != tc.want {
			t.Errorf("take(%d) = %d, want %d", tc.take, got, tc.want)
		}
	}
	b.refund(3)
	if b.Used() != 7 || b.Limit() != 10 {
		t.Errorf("used %d of %d", b.Used(), b.Limit())
	}
	if NewSpillBudget(-1).take(1) != 0 {
		t.Error("a negative budget grants something")
	}
}

// TestSpillCaps covers spill (glob's and grep's spill files): a text over
// MaxSpillBytes or the budget is not reported as saved whole.
func TestSpillCaps(t *testing.T) {
	cases := []struct {
		name    string
		budget  int64
		text    int
		ok      bool
		wantErr string
		kept    int // bytes left in a file named by the error; 0: no file
	}{
		{name: "whole", text: 1000, ok: true},
		{name: "over the cap", text: MaxSpillBytes + 1, wantErr: fmt.Sprintf("holds only the first %d of %d bytes, the spill file cap of %d bytes was reached", MaxSpillBytes, MaxSpillBytes+1, MaxSpillBytes), kept: MaxSpillBytes},
		{name: "over the budget", budget: 600, text: 1000, wantErr: "holds only the first 600 of 1000 bytes, the session's spill budget of 600 bytes is used up", kept: 600},
		{name: "budget used up", budget: 0, text: 1000, wantErr: "nothing saved, the session's spill budget of 0 bytes is used up"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			if tc.name != "whole" && tc.name != "over the cap" {
				env.Spill = NewSpillBudget(tc.budget)
			}
			text := strings.Repeat("x", tc.text)
			p, err := env.spill("glob", text)
			entries, _ := os.ReadDir(env.SpillDir)
			if tc.ok {
				if err != nil || readFile(t, p) != text {
					t.Fatalf("spill = %q, %v", p, err)
				}
				return
			}
			if p != "" || !errors.Is(err, errSpillCut) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("spill = %q, %v; want no path and an error saying %q", p, err, tc.wantErr)
			}
			if tc.kept == 0 {
				if len(entries) != 0 {
					t.Errorf("spill dir holds %v; want the empty file removed", entries)
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("spill dir holds %v", entries)
			}
			name := env.SpillDir + "/" + entries[0].Name()
			if !strings.Contains(err.Error(), name) || len(readFile(t, name)) != tc.kept {
				t.Errorf("error %v; file %s of %d bytes, want %d", err, name, len(readFile(t, name)), tc.kept)
			}
		})
	}
}
