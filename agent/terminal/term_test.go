package terminal

import (
	"context"
	"os"
	"strings"
	"testing"
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
