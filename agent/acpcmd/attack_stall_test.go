package acpcmd_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// stallProc is `reel acp` with a stdout pipe the test reads only as long
// as it wants to: then it stops, like a client that hung.
type stallProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *os.File // the read end of reel's stdout
	r      *bufio.Reader
	stderr *lockedBuffer
	exited chan error
}

func startStalling(t *testing.T, dir string, env []string, args ...string) *stallProc {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(reelExe, args...)
	cmd.Dir, cmd.Env, cmd.Stdout = dir, withRaceEnv(env), wr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProc{t: t, cmd: cmd, stdin: stdin, out: rd, r: bufio.NewReaderSize(rd, 1<<10), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = wr.Close() // reel holds the only write end
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = rd.Close()
		if t.Failed() {
			t.Logf("reel stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *stallProc) send(v map[string]any) {
	p.t.Helper()
	v["jsonrpc"] = "2.0"
	b, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("writing to reel: %v", err)
	}
}

// readUntil reads frames until one satisfies ok and returns it.
func (p *stallProc) readUntil(what string, ok func(frame) bool) frame {
	p.t.Helper()
	for {
		line, err := p.r.ReadString('\n')
		if err != nil {
			p.t.Fatalf("reel closed stdout before %s: %v; stderr:\n%s", what, err, p.stderr.String())
		}
		var f frame
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			p.t.Fatalf("stdout line is not JSON: %q", line)
		}
		f.raw = line
		if ok(f) {
			return f
		}
	}
}

// waitPipeFull waits until reel's stdout pipe is full and reel is blocked
// in the middle of a frame write (its frames are larger than what room is
// left, see stallScript). A generous deadline only detects a reel that
// never fills it.
func (p *stallProc) waitPipeFull() {
	p.t.Helper()
	capacity, err := unix.FcntlInt(p.out.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	level, since := -1, time.Now()
	for {
		n, err := unix.IoctlGetInt(int(p.out.Fd()), unix.TIOCINQ)
		if err != nil {
			p.t.Fatal(err)
		}
		// A pipe counts its room in pages, so frames that straddle pages
		// leave it "full" well short of its capacity (54190 of 65536
		// bytes seen); full means a level that holds still while reel
		// streams as fast as it can, so reel is blocked in a write.
		if n != level {
			level, since = n, time.Now()
		} else if n >= capacity/2 && time.Since(since) > time.Second {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("reel's stdout pipe holds %d of %d bytes and does not fill", n, capacity)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits for reel to exit; the generous deadline detects a hang.
func (p *stallProc) waitExit(after string) (int, bool) {
	p.t.Helper()
	select {
	case err := <-p.exited:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), true
		} else if err != nil {
			p.t.Fatalf("waiting for reel: %v", err)
		}
		return 0, true
	case <-time.After(2 * time.Minute):
		p.t.Errorf("reel did not exit after %s while its client does not read stdout (hang)", after)
		_ = p.cmd.Process.Kill()
		<-p.exited
		return -1, false
	}
}

// stallScript streams a long answer (megabytes of session/update frames,
// far more than a pipe holds) and then hangs until reel hangs up.
func stallScript(t *testing.T) *standin.Script {
	s := &standin.Script{Responses: []standin.Response{
		// Chunks of 8192 runes make every frame larger than the room a
		// full pipe has left, so reel blocks in the middle of a frame
		// and the frames it writes at shutdown queue behind it: the
		// stall is certain, not a matter of how much room was left.
		{Text: strings.Repeat("All work and no play makes reel a dull agent. ", 40000), ChunkSize: 8192, Hang: true},
	}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// serveStandin serves script on 127.0.0.1 and returns the base URL.
func serveStandin(t *testing.T, s *standin.Script) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: standin.New(s, nil).Handler()}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/v1"
}

// startStalledTurn starts reel acp against the stalling stand-in, opens
// session S1, starts a prompt, reads until the answer streams, then stops
// reading and waits until reel's stdout pipe is full.
func startStalledTurn(t *testing.T, extra ...string) (*stallProc, string) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	args := append([]string{"acp", "--state-dir", state, "--session-id", "S1", "--log-level", "debug",
		"--mode", "read-only", "--provider", "deepseek", "--base-url", serveStandin(t, stallScript(t)), "--model", "standin"}, extra...)
	p := startStalling(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY=standin"), args...)
	p.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}})
	p.readUntil("the initialize answer", func(f frame) bool { return f.isResponse() })
	p.send(map[string]any{"id": 2, "method": "session/new", "params": map[string]any{"cwd": ws, "mcpServers": []any{}}})
	p.readUntil("the session/new answer", func(f frame) bool { return f.isResponse() })
	p.send(map[string]any{"id": 3, "method": "session/prompt", "params": promptParams("S1", "Tell me a long story.")})
	p.readUntil("the first answer chunk", func(f frame) bool { _, k, _ := f.update(); return k == "agent_message_chunk" })
	// The client stops reading here.
	p.waitPipeFull()
	return p, filepath.Join(state, "S1.jsonl")
}

// checkAbortedLog asserts the session log is valid and ends with the
// prompt's turn/end, aborted or interrupted.
func checkAbortedLog(t *testing.T, path string) {
	t.Helper()
	d, err := jsonl.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		t.Fatalf("S1's log: %v", err)
	}
	if d.Torn != nil {
		t.Errorf("S1's log has a torn tail at line %d", d.Torn.Line)
	}
	// The last turn/end: a title call may follow the turn (agent/title.go).
	last := d.Events[len(d.Events)-1]
	for i := len(d.Events) - 1; i > 0 && last.Type != sessionlog.TypeTurnEnd; i-- {
		last = d.Events[i-1]
	}
	if last.Type != sessionlog.TypeTurnEnd || !(strings.Contains(string(last.Data), `"kind":"aborted"`) || strings.Contains(string(last.Data), `"kind":"interrupted"`)) {
		t.Errorf("S1's log ends with seq %d %s %s, want turn/end aborted", last.Seq, last.Type, last.Data)
	}
}

// TestAttackStalledStdout: a client starts a long turn and stops reading
// stdout (reel's pipe fills, its frame writes block). Whatever it does
// next — session/cancel then SIGTERM, session/cancel alone, SIGTERM alone,
// or nothing — reel must exit, and the session log must end with the
// turn's turn/end. The default write timeout (30 s) is never waited for: a
// cancel or SIGTERM bounds the blocked write by a short grace; with
// nothing, a short --write-timeout is given.
func TestAttackStalledStdout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		flags   []string
		cancel  bool
		sigterm bool
		want    string // on stderr
	}{
		{name: "session/cancel then SIGTERM", cancel: true, sigterm: true, want: "reel: agent: the client stopped reading stdout: a "},
		{name: "session/cancel", cancel: true, want: "could not be written within 1s of session/cancel"},
		{name: "SIGTERM", sigterm: true, want: "could not be written within 1s of shutdown"},
		{name: "write timeout", flags: []string{"--write-timeout", "1s"}, want: "could not be written within 1s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each waits for its pipe to fill and a grace to pass
			p, log := startStalledTurn(t, tt.flags...)
			if tt.cancel {
				p.send(map[string]any{"method": "session/cancel", "params": map[string]any{"sessionId": "S1"}})
			}
			if tt.sigterm {
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			code, ok := p.waitExit(tt.name)
			if !ok {
				return
			}
			if code == 0 {
				t.Errorf("reel exited 0 after its client stopped reading")
			}
			if !strings.Contains(p.stderr.String(), tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, p.stderr.String())
			}
			checkAbortedLog(t, log)
		})
	}
}
