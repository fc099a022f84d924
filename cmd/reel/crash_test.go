package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// acpProc is a reel acp process driven with raw frames.
type acpProc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
}

func startACP(t *testing.T, stateDir, baseURL string) *acpProc {
	t.Helper()
	cmd := exec.Command(reelBin, "acp", "--state-dir", stateDir, "--provider", "deepseek", "--model", "standin",
		"--base-url", baseURL, "--mode", "danger-full-access", "--log-level", "error")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + stateDir, "DEEPSEEK_API_KEY=standin"}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &acpProc{cmd: cmd, in: in, lines: make(chan []byte, 1024)}
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	return p
}

func (p *acpProc) send(t *testing.T, frame string) {
	t.Helper()
	if _, err := io.WriteString(p.in, frame+"\n"); err != nil {
		t.Fatal(err)
	}
}

// await returns the response to request id (notifications are skipped).
func (p *acpProc) await(t *testing.T, id int) map[string]json.RawMessage {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("agent exited before answering request %d", id)
			}
			var f map[string]json.RawMessage
			if err := json.Unmarshal(line, &f); err != nil {
				t.Fatalf("not a JSON-RPC frame: %q", line)
			}
			if string(f["id"]) == strconv.Itoa(id) && f["method"] == nil {
				return f
			}
		case <-timeout:
			t.Fatalf("no answer to request %d", id)
		}
	}
}

// crashScript streams slowly and runs a tool, so a kill lands in the model
// stream, in the tool run or around the header and checkpoint writes.
const crashScript = `{"responses":[
 {"reasoning":"Let me look.","toolCalls":[{"id":"call_1","name":"bash","arguments":"{\"command\":\"sleep 0.05; echo ran\",\"description\":\"slow\"}"}],"finish":"tool_calls","chunkSize":2,"delayMs":2},
 {"text":"The command ran and printed ran.","chunkSize":3,"delayMs":2},
 {"text":"Resumed fine.","chunkSize":4}
]}`

// TestCrashSoak kills reel acp with SIGKILL at random points of a real turn
// (model stream, tool run, header and checkpoint writes), then loads the
// session in a fresh process and prompts again: every session must load,
// be repaired, and resume. REEL_SOAK=1 runs 200 trials (default 6).
func TestCrashSoak(t *testing.T) {
	trials := 6
	if os.Getenv("REEL_SOAK") == "1" {
		trials = 200
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REEL_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (REEL_CRASH_SEED reproduces it)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	where := map[string]int{}
	for i := 0; i < trials; i++ {
		script, err := standin.ParseScript([]byte(crashScript))
		if err != nil {
			t.Fatal(err)
		}
		srv := standin.New(script, slog.New(slog.DiscardHandler))
		addr, err := srv.Start(context.Background(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + addr + "/v1"
		dir := t.TempDir()
		state := filepath.Join(dir, "state")

		p := startACP(t, state, base)
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		p.await(t, 1)
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, dir))
		resp := p.await(t, 2)
		var res struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(resp["result"], &res)
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, res.SessionID))
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond) // where the kill lands
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()

		d, err := jsonl.ReadFile(filepath.Join(state, res.SessionID+".jsonl"))
		if err != nil {
			t.Fatalf("trial %d: the killed session's log does not read: %v", i, err)
		}
		if n := len(d.Events); n > 0 {
			where[lastKind(d.Events[n-1].Type)]++
		}

		q := startACP(t, state, base)
		q.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		q.await(t, 1)
		q.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, res.SessionID, dir))
		if r := q.await(t, 2); r["error"] != nil {
			t.Fatalf("trial %d: load after the kill failed: %s", i, r["error"])
		}
		q.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"continue"}]}}`, res.SessionID))
		if r := q.await(t, 3); r["error"] != nil {
			t.Fatalf("trial %d: prompt after resume failed: %s", i, r["error"])
		}
		_ = q.in.Close()
		_ = q.cmd.Wait()
		srv.Close()

		d, err = jsonl.ReadFile(filepath.Join(state, res.SessionID+".jsonl"))
		if err != nil {
			t.Fatalf("trial %d: %v", i, err)
		}
		l, err := sessionlog.Seed(d.Header, d.Events)
		if err != nil {
			t.Fatalf("trial %d: the resumed log does not validate: %v", i, err)
		}
		if c := sessionlog.Repair(l.Events()); c != nil {
			t.Fatalf("trial %d: the resumed log still has an open turn", i)
		}
	}
	t.Logf("%d kills; the log ended in: %v", trials, where)
}

// lastKind buckets where a kill landed by the last durable event.
func lastKind(typ string) string {
	switch typ {
	case sessionlog.TypeAssistantChunk:
		return "model stream"
	case sessionlog.TypeToolCall:
		return "tool run"
	case sessionlog.TypeRequestHeader, sessionlog.TypeRequestContext:
		return "header/checkpoint before the model call"
	case sessionlog.TypeTurnEnd:
		return "after the turn"
	}
	return "other (" + typ + ")"
}
