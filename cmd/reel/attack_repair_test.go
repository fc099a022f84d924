package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestAttackRepairLiveLog: `reel log repair` on the JSONL log of a session
// a running `reel acp` holds open (mid-turn, the model hanging) must not
// rename a new file over it — the agent would keep appending to the
// unlinked inode and lose the rest of the turn. It is refused, exit 1,
// naming the file and saying a reel process holds it; the log is left as
// it was. Once the agent is gone (killed mid-turn), repair closes the
// turn.
func TestAttackRepairLiveLog(t *testing.T) {
	script, err := standin.ParseScript([]byte(`{"responses":[
 {"text":"First turn done."},
 {"text":"partial","hang":true}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := standin.New(script, slog.New(slog.DiscardHandler))
	addr, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	p := startACP(t, state, "http://"+addr+"/v1")
	defer func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() }()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	p.await(t, 1)
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
	var res struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(p.await(t, 2)["result"], &res)
	prompt := func(id int, text string) {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, id, res.SessionID, text))
	}
	prompt(3, "one")
	if r := p.await(t, 3); r["error"] != nil {
		t.Fatalf("first prompt: %s", r["error"])
	}
	prompt(4, "two")
	// Wait until the second turn streams: the model now hangs mid-turn.
	for streaming := false; !streaming; {
		line, ok := <-p.lines
		if !ok {
			t.Fatal("the agent exited mid-turn")
		}
		streaming = bytes.Contains(line, []byte(`"agent_message_chunk"`))
	}

	log := filepath.Join(state, res.SessionID+".jsonl")
	before, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	fiBefore, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	repair := func() (int, string, string) {
		cmd := exec.Command(reelBin, "log", "repair", log)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, out.String(), errb.String()
		case errors.As(err, &ee):
			return ee.ExitCode(), out.String(), errb.String()
		}
		t.Fatalf("reel log repair: %v", err)
		return -1, "", ""
	}
	code, stdout, stderr := repair()
	if code != 1 {
		t.Errorf("reel log repair of a live log exited %d, want 1; stdout %q stderr %q", code, stdout, stderr)
	}
	want := "reel: repair: " + log + " is live: a reel process holds its session lock " + filepath.Join(state, res.SessionID+".lock")
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start with %q", stderr, want)
	}
	after, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	fiAfter, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fiBefore, fiAfter) || !bytes.Equal(before, after) {
		t.Errorf("the refused repair replaced or changed the live log (same inode %v)", os.SameFile(fiBefore, fiAfter))
	}

	// The agent dies mid-turn; its lock goes with it, and repair works.
	_ = p.cmd.Process.Kill()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the killed agent did not exit")
	}
	code, stdout, stderr = repair()
	if code != 0 || !strings.Contains(stdout, "(turn/end)") {
		t.Fatalf("repair after the agent exited: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	d, err := jsonl.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		t.Fatalf("the repaired log: %v", err)
	}
	if last := d.Events[len(d.Events)-1]; last.Type != sessionlog.TypeTurnEnd || !strings.Contains(string(last.Data), `"interrupted"`) {
		t.Errorf("the repaired log ends with %s %s, want turn/end interrupted", last.Type, last.Data)
	}
}
