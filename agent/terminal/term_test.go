package terminal

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// open starts a terminal in a temp dir, directly (no sandbox).
func open(t *testing.T) (*Manager, *Terminal, string) {
	t.Helper()
	m := &Manager{}
	sc := Scope{Manager: m, Mode: "danger-full-access", Cwd: t.TempDir(), Env: os.Environ()}
	term, motd, err := sc.Open(context.Background(), ShellType, "main", "")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { m.CloseAll() })
	return m, term, motd
}

func TestSendReadsTheCommandsOutput(t *testing.T) {
	_, term, motd := open(t)
	if motd != Prompt {
		t.Errorf("motd = %q, want %q", motd, Prompt)
	}
	r, err := term.Send(context.Background(), `printf 'PTY_OK\n'`, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.WaitReason != WaitStdin || !strings.Contains(r.Viewport, "PTY_OK\n") {
		t.Errorf("send = %+v", r)
	}
	got := term.Read(0, 20)
	t.Logf("read: %+v", got)
	if got.Text != Prompt+"printf 'PTY_OK\\n'\nPTY_OK\n"+Prompt || got.TotalLines != 3 || got.LineEnd != 3 {
		t.Errorf("read = %+v", got)
	}
}

// TestInputTakenSettlesAtOnce: a send whose input a program has taken (a
// read since the write, nothing left queued, line mode) settles as
// stdin_read as soon as a program blocks reading the terminal again,
// without waiting probeAfter; input a program has not taken (typed ahead
// while a command runs that reads nothing) is not judged taken.
func TestInputTakenSettlesAtOnce(t *testing.T) {
	for _, c := range []struct {
		name, setup, text string
		taken             bool
	}{
		{"a program started by the send", "", "cat", true},
		{"the shell's read builtin", "", "read -r LINE; echo \"got $LINE\"", true},
		{"a program reading the next line", "cat", "a line for cat", true},
		{"typed ahead while a command runs", "sleep 2", "typed ahead", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, term, _ := open(t)
			if c.setup != "" {
				// Started without a wait: the send under test comes
				// while it runs.
				if _, err := term.begin(c.setup, true); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(30 * time.Second)
				for term.foreground() == term.shellSession() || (c.setup == "cat" && !term.waitingForInput()) {
					if time.Now().After(deadline) {
						t.Fatalf("%q did not start", c.setup)
					}
					time.Sleep(5 * time.Millisecond)
				}
				term.endSend()
			}
			began, err := term.begin(c.text, true)
			if err != nil {
				t.Fatal(err)
			}
			defer term.endSend()
			if !c.taken {
				if term.inputTaken() {
					t.Fatalf("input typed ahead to %q counts as taken", c.setup)
				}
				return
			}
			// Bounded: this detects a send that never counts as taken.
			deadline := time.Now().Add(30 * time.Second)
			for {
				term.mu.Lock()
				quiet := time.Since(term.lastOut) >= pollInterval
				term.mu.Unlock()
				if quiet && term.inputTaken() && term.waitingForInput() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the send's input never counted as taken (began %v ago)", time.Since(began))
				}
				time.Sleep(5 * time.Millisecond)
			}
			// Judged as if the send had just begun: only the taken
			// input lets it settle before probeAfter.
			w := &sendWait{began: time.Now()}
			term.settled(w)
			w.waitSince = w.waitSince.Add(-pollInterval) // a poll apart
			if got, _, _ := term.settled(w); got != WaitStdin {
				t.Errorf("a send whose input was taken settles as %q, want %q", got, WaitStdin)
			}
		})
	}
}
