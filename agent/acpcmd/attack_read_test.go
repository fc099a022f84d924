package acpcmd_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// readAttackWatchdog is how long one attack may take before the test kills
// reel and fails: the attacks below must end on their own at once, so
// reaching it means reel hung (it is no assertion on speed).
const readAttackWatchdog = time.Minute

// underAttack bounds the reel under attack: its address space to
// readAttackMemory, its run to readAttackWatchdog (then it is killed and
// the test fails as hung).
func underAttack(t *testing.T, p *proc) {
	t.Helper()
	if err := unix.Prlimit(p.cmd.Process.Pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: readAttackMemory, Max: readAttackMemory}, nil); err != nil {
		t.Fatalf("limiting reel's memory: %v", err)
	}
	var fired atomic.Bool
	watchdog := time.AfterFunc(readAttackWatchdog, func() { fired.Store(true); _ = p.cmd.Process.Kill() })
	t.Cleanup(func() {
		watchdog.Stop()
		if fired.Load() {
			t.Errorf("watchdog: the attack did not end within %s, so reel hung and was killed", readAttackWatchdog)
		}
	})
}

// readAttackMemory is the address-space limit put on the reel under attack,
// so that a regression (reading a device or a huge file whole) ends in
// reel's own out-of-memory crash instead of taking the machine's memory.
const readAttackMemory = 4 << 30

// TestAttackReadBoundedFiles drives the real `reel acp` binary with a
// stand-in model that calls read on an 8 TiB sparse file, on /dev/zero and
// on a FIFO no one writes, and grep with path=/dev/zero (findings 6 and 7
// of issue 12). Each call gets an error tool result naming the path and
// what it is, the process survives, and a second turn of the same session
// is answered. In the last case the client cancels the turn after the FIFO
// read has failed on its own: the turn ends "cancelled" and the session
// still works.
func TestAttackReadBoundedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(ws, "sparse.bin")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 8<<40); err != nil {
		t.Skipf("this file system refuses an 8 TiB sparse file: %v", err)
	}
	fifo := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		want   string // in the error tool result
		cancel bool
	}{
		{"read an 8 TiB sparse file", "read", map[string]any{"file_path": sparse},
			sparse + " is a binary file; read shows text files only", false},
		{"read the zero device", "read", map[string]any{"file_path": "/dev/zero"},
			"/dev/zero is a character device, not a regular file; read reads regular files only", false},
		{"read a FIFO", "read", map[string]any{"file_path": fifo},
			fifo + " is a named pipe (FIFO), not a regular file; read reads regular files only", false},
		{"grep the zero device", "grep", map[string]any{"pattern": "x", "path": "/dev/zero", "output_mode": "content"},
			"/dev/zero is a character device, not a regular file or a directory; grep searches regular files and directories only", false},
		{"read a FIFO then cancel", "read", map[string]any{"file_path": "pipe"},
			fifo + " is a named pipe (FIFO), not a regular file; read reads regular files only", true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, err := json.Marshal(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			// The first turn's model: the attack, then an answer that
			// checks the model got the error (in the cancel case an answer
			// that hangs until cancelled). The second turn has a model of
			// its own, so the script cannot be thrown off by when the
			// cancel lands.
			after := standin.Response{Text: "survived", Expect: &standin.Expect{LastMessageContains: tc.want}}
			if tc.cancel {
				after = standin.Response{Text: "waiting", Hang: true}
			}
			first := &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "call_attack", Name: tc.tool, Arguments: string(args)}}},
				after,
			}}
			second := &standin.Script{Responses: []standin.Response{
				{Text: "second turn answered", Expect: &standin.Expect{LastUserContains: "second turn"}},
			}}
			for _, s := range []*standin.Script{first, second} {
				if err := s.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			url := serveReadAttackModel(t, first, second, "This is the second turn.")
			state := filepath.Join(dir, "state", string(rune('a'+i)))
			p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=standin"), "acp", "--state-dir", state,
				"--session-id", "S1", "--log-level", "debug", "--mode", "danger-full-access",
				"--provider", "deepseek", "--base-url", url, "--model", "standin")
			underAttack(t, p)

			p.initialize()
			sid := p.newSession(ws)
			var stop string
			var frames []frame
			if tc.cancel {
				id := p.request("session/prompt", promptParams(sid, "Read the pipe."))
				// Cancel as soon as the client is shown the read: whether
				// it lands during the read or after it failed, the turn
				// must end, cancelled.
				p.waitReadAttackToolCall("call_attack")
				p.notify("session/cancel", map[string]any{"sessionId": sid})
				var resp frame
				resp, frames = p.await(id)
				if resp.Error != nil {
					t.Fatalf("the prompt failed: %s", resp.raw)
				}
				var r struct {
					StopReason string `json:"stopReason"`
				}
				_ = json.Unmarshal(resp.Result, &r)
				stop = r.StopReason
				if stop != "cancelled" {
					t.Errorf("stopReason %q after session/cancel, want cancelled", stop)
				}
			} else {
				stop, frames = p.prompt(sid, "Attack.")
				if stop != "end_turn" {
					t.Errorf("stopReason %q, want end_turn", stop)
				}
			}
			// The client was shown the error, and the model got it (its
			// Expect held, so it answered). With the cancel, the read may
			// have been cancelled or have failed first: either way it
			// failed.
			if status, _ := readAttackToolResult(frames, "call_attack"); tc.cancel && status != "failed" {
				t.Errorf("the cancelled read ended %q, want failed", status)
			}
			if !tc.cancel {
				status, text := readAttackToolResult(frames, "call_attack")
				if status != "failed" || !strings.Contains(text, tc.want) {
					t.Errorf("the tool call ended %q with %q, want failed with %q", status, text, tc.want)
				}
				if got := readAttackMessage(frames); got != "survived" {
					t.Errorf("the model's answer after the tool result is %q, want survived (the model never saw the error)", got)
				}
			}

			// The same session answers a second turn.
			stop, frames = p.prompt(sid, "This is the second turn.")
			if stop != "end_turn" || readAttackMessage(frames) != "second turn answered" {
				t.Errorf("second turn: stopReason %q, answer %q", stop, readAttackMessage(frames))
			}
			if code := p.finish(); code != 0 {
				t.Errorf("reel exited %d; stderr:\n%s", code, p.stderr.String())
			}
			if strings.Contains(p.stderr.String(), "fatal error") || strings.Contains(p.stderr.String(), "panic:") {
				t.Errorf("reel's stderr reports a crash:\n%s", p.stderr.String())
			}
			checkFramesOnly(t, p.stdoutLines())
		})
	}
}

// serveReadAttackModel serves the stand-in model on 127.0.0.1 and returns
// its base URL: requests whose body holds marker are answered from second,
// the others from first.
func serveReadAttackModel(t *testing.T, first, second *standin.Script, marker string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, b := standin.New(first, nil).Handler(), standin.New(second, nil).Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(marker)) {
			b.ServeHTTP(w, r)
			return
		}
		a.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/v1"
}

// waitReadAttackToolCall consumes frames until the tool_call announcing
// tool call id; responses read meanwhile are kept for await.
func (p *proc) waitReadAttackToolCall(id string) {
	p.t.Helper()
	for {
		f := p.next()
		if f.isResponse() {
			p.parked = append(p.parked, f)
			continue
		}
		if _, kind, _ := f.update(); kind == "tool_call" && strings.Contains(f.raw, `"toolCallId":"`+id+`"`) {
			return
		}
	}
}

// readAttackToolResult returns the last status of tool call id among
// frames and the text of its content.
func readAttackToolResult(frames []frame, id string) (status, text string) {
	for _, u := range toolUpdates(frames) {
		if u.id != id {
			continue
		}
		if u.status != "" {
			status = u.status
		}
		text += u.text
	}
	return status, text
}

// readAttackMessage concatenates the agent_message_chunk texts of frames.
func readAttackMessage(frames []frame) string {
	var b strings.Builder
	for _, f := range frames {
		if _, kind, text := f.update(); kind == "agent_message_chunk" {
			b.WriteString(text)
		}
	}
	return b.String()
}
