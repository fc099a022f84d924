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
			// Looked at as if the send had just begun (elapsed below
			// probeAfter), until a look sees the program wait (one can
			// catch it between its reads, as a send's can): only the
			// taken input settles it (byTaken), without the probe's
			// silence and second look.
			w := &sendWait{}
			for {
				w.began = time.Now()
				got, by, _ := term.settled(w)
				if got != "" {
					if got != WaitStdin || by != byTaken {
						t.Errorf("a send whose input was taken settles as %q by %s, want %q by %s", got, by, WaitStdin, byTaken)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a send whose input was taken does not settle before probeAfter")
				}
				if !w.waitSince.IsZero() {
					w.waitSince = w.waitSince.Add(-pollInterval)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestSendSettlesOnThePrompt: a command that returns to the shell settles
// on the shell's nonce-marked prompt with the shell in its read (byPrompt),
// not on output silence; a send of two lines settles after the second.
func TestSendSettlesOnThePrompt(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"one command", `printf 'PTY_OK\n'`, "PTY_OK\n" + Prompt},
		{"a builtin", `X=1; cd .`, Prompt},
		{"two lines in one send", "echo one\recho two", "two\n" + Prompt},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, term, _ := open(t)
			r, err := term.Send(context.Background(), c.text, true)
			if err != nil {
				t.Fatal(err)
			}
			if r.WaitReason != WaitStdin || r.by != byPrompt || !strings.HasSuffix(r.Viewport, c.want) {
				t.Errorf("send %q = %+v, want %s by %s ending %q", c.text, r, WaitStdin, byPrompt, c.want)
			}
		})
	}
}

// TestForgedPromptMarker: output that prints the prompt marker (without
// the terminal's nonce, or with it, read from PROMPT_COMMAND) and the
// prompt while the command still runs in the shell itself does not end
// the send: its result holds the command's output to the real prompt, and
// no marker is left in the text.
func TestForgedPromptMarker(t *testing.T) {
	const busy = `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo "loop-$i"`
	for _, c := range []struct{ name, forge string }{
		{"without the nonce", `printf '\033]133;D;0\007reel> '`},
		{"with the nonce", `eval "$PROMPT_COMMAND"; printf 'reel> '`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, term, _ := open(t)
			r, err := term.Send(context.Background(), c.forge+"; "+busy, true)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(r.Viewport, "loop-100000\n"+Prompt) || r.by != byPrompt {
				t.Errorf("a forged marker ended the send early: %+v", r)
			}
			if got := term.Read(0, 50).Text; strings.ContainsAny(got, "\x1b\x07") || !strings.HasSuffix(got, "\nreel> loop-100000\n"+Prompt) {
				t.Errorf("scrollback %q: a marker is left or the output after the forged prompt is missing", got)
			}
		})
	}
}

// TestSanitizerNonce: with a nonce, only a marker that carries it (after a
// numeric status) counts; without one, any `133;D;` marker does.
func TestSanitizerNonce(t *testing.T) {
	for _, c := range []struct {
		name, nonce, in string
		at              bool
	}{
		{"no nonce", "", "\x1b]133;D;0\x07reel> ", true},
		{"the nonce", "n0nce", "\x1b]133;D;0;n0nce\x07reel> ", true},
		{"the nonce, ST-terminated", "n0nce", "\x1b]133;D;127;n0nce\x1b\\reel> ", true},
		{"no nonce printed", "n0nce", "\x1b]133;D;0\x07reel> ", false},
		{"another nonce", "n0nce", "\x1b]133;D;0;n0ncf\x07reel> ", false},
		{"the nonce with a tail", "n0nce", "\x1b]133;D;0;n0nce;x\x07reel> ", false},
		{"a non-numeric status", "n0nce", "\x1b]133;D;x;n0nce\x07reel> ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Sanitizer{Nonce: c.nonce}
			out, _ := s.Push([]byte(c.in))
			if string(out) != Prompt || s.AtPrompt() != c.at {
				t.Errorf("%q: text %q, at prompt %v, want %q, %v", c.in, out, s.AtPrompt(), Prompt, c.at)
			}
		})
	}
}
