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
	"strings"
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
	return runACP(t, cmd)
}

// runACP starts cmd, a reel acp command, and reads its stdout line by line
// into lines until the end. Not cmd.StdoutPipe: Wait closes that pipe's
// read end at exit and drops the frames not read yet; this read end is
// closed by the reader at the end of the output, or by the test's cleanup.
func runACP(t *testing.T, cmd *exec.Cmd) *acpProc {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = out.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
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
	where := map[string]int{}
	crashSoak(t, crashScript, 150, func(t *testing.T, i int, dir, state, sid string, killed *jsonl.Decoded) {
		if n := len(killed.Events); n > 0 {
			where[lastKind(killed.Events[n-1].Type)]++
		}
	})
	t.Logf("the logs ended in: %v", where)
}

// crashSubagentScript delegates to a foreground child that runs a slow
// command and streams its answer, so a kill lands in the parent's or the
// child's stream, the child's tool run, or between them; every suffix of it
// is a conversation a resumed session can have.
const crashSubagentScript = `{"responses":[
 {"toolCalls":[{"id":"call_sub","name":"subagent","arguments":"{\"description\":\"Slow child\",\"prompt\":\"Run the slow command.\",\"run_in_background\":false}"}],"finish":"tool_calls","chunkSize":2,"delayMs":2},
 {"toolCalls":[{"id":"call_1","name":"bash","arguments":"{\"command\":\"sleep 0.05; echo ran\",\"description\":\"slow\"}"}],"finish":"tool_calls","chunkSize":2,"delayMs":2},
 {"text":"The child's command ran.","chunkSize":3,"delayMs":2},
 {"text":"The subagent reported that the command ran.","chunkSize":3,"delayMs":2},
 {"text":"Resumed fine."},
 {"text":"Resumed fine."},
 {"text":"Resumed fine."}
]}`

// TestCrashSoakSubagents is the crash soak with a subagent: SIGKILL at
// random points of a parent's turn that delegates to a child, then every
// log (the parent's and the child's) is loaded in a fresh process, where
// the parent prompts again. Every log must load and end repaired, and
// reel log verify must accept the parent–child pairing of the state dir.
func TestCrashSoakSubagents(t *testing.T) {
	children := 0
	crashSoak(t, crashSubagentScript, 250, func(t *testing.T, i int, dir, state, sid string, _ *jsonl.Decoded) {
		paths, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
		for _, path := range paths {
			d, err := jsonl.ReadFile(path)
			if err != nil {
				t.Fatalf("trial %d: %s does not read: %v", i, path, err)
			}
			if _, ok := d.Header.Child(); ok {
				children++
			}
			l, err := sessionlog.Seed(d.Header, d.Events)
			if err != nil {
				t.Fatalf("trial %d: %s does not validate: %v", i, path, err)
			}
			if c := sessionlog.Repair(l.Events()); c != nil {
				t.Fatalf("trial %d: %s still has an open turn", i, path)
			}
		}
		if out, err := exec.Command(reelBin, "log", "verify", state).CombinedOutput(); err != nil {
			t.Fatalf("trial %d: reel log verify: %v\n%s", i, err, out)
		}
	})
	t.Logf("%d child logs across the trials", children)
}

// crashSoak runs the trials of a crash soak: a turn on script killed after
// a random delay below maxDelayMs, the killed log read back, then a fresh
// process that loads every log of the state dir (the session first) and
// prompts the session again; check sees each trial after that resume.
// REEL_SOAK=1 runs 200 trials (default 6); REEL_CRASH_SEED reproduces one.
func crashSoak(t *testing.T, scriptJSON string, maxDelayMs int, check func(t *testing.T, i int, dir, state, sid string, killed *jsonl.Decoded)) {
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
	for i := 0; i < trials; i++ {
		script, err := standin.ParseScript([]byte(scriptJSON))
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
		time.Sleep(time.Duration(rng.IntN(maxDelayMs)) * time.Millisecond) // where the kill lands
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()

		killed, err := jsonl.ReadFile(filepath.Join(state, res.SessionID+".jsonl"))
		if err != nil {
			t.Fatalf("trial %d: the killed session's log does not read: %v", i, err)
		}

		q := startACP(t, state, base)
		q.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		q.await(t, 1)
		ids := []string{res.SessionID}
		paths, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
		for _, path := range paths {
			if id := strings.TrimSuffix(filepath.Base(path), ".jsonl"); id != res.SessionID {
				ids = append(ids, id)
			}
		}
		for k, id := range ids {
			q.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, 10+k, id, dir))
			if r := q.await(t, 10+k); r["error"] != nil {
				t.Fatalf("trial %d: load of %s after the kill failed: %s", i, id, r["error"])
			}
		}
		q.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"continue"}]}}`, res.SessionID))
		if r := q.await(t, 3); r["error"] != nil {
			t.Fatalf("trial %d: prompt after resume failed: %s", i, r["error"])
		}
		_ = q.in.Close()
		_ = q.cmd.Wait()
		srv.Close()

		d, err := jsonl.ReadFile(filepath.Join(state, res.SessionID+".jsonl"))
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
		check(t, i, dir, state, res.SessionID, killed)
	}
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
