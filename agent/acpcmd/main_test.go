package acpcmd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// reelExe is the reel binary, built once for the package's tests: they run
// `reel acp` as a subprocess over real pipes.
var reelExe string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reel-acpcmd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	reelExe = filepath.Join(dir, "reel")
	if _, set := os.LookupEnv("GORACE"); raceEnv != "" && !set {
		// Every reel started with the test's environment inherits it (a
		// GORACE of the caller's is kept).
		k, v, _ := strings.Cut(raceEnv, "=")
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	// Without the symbol table and DWARF, linking takes about half the
	// CPU time; a race report or a panic still names functions and lines
	// (from the runtime's own tables).
	args := []string{"build", "-ldflags=-s -w", "-o", reelExe}
	if raceBuild {
		// A data race in reel exits it with status 66 and a report on
		// stderr: the test driving it fails.
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../../cmd/reel")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building reel:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// withRaceEnv is env with raceEnv added (when the tests run under the race
// detector) for a reel process started with an environment of its own.
func withRaceEnv(env []string) []string {
	if raceEnv == "" || env == nil { // nil inherits the test's, set in TestMain
		return env
	}
	return append(env[:len(env):len(env)], raceEnv)
}

// fixture returns the path of a committed fixture file.
func fixture(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"..", "..", "fixtures"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return p
}

// workspace makes a test's folder dir with the session's working directory
// ws in it, and names its state directory (created by reel).
func workspace(t *testing.T) (dir, ws, state string) {
	t.Helper()
	dir = t.TempDir()
	ws, state = filepath.Join(dir, "ws"), filepath.Join(dir, "state")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, ws, state
}

// baseEnv is a minimal environment for the subprocess: no inherited keys.
func baseEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C"}
}

// frame is one JSON-RPC message read from the agent's stdout.
type frame struct {
	raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (f frame) isResponse() bool { return f.Method == "" && len(f.ID) > 0 }

// update returns the sessionUpdate kind and the text of a session/update
// notification ("" when f is none).
func (f frame) update() (sid, kind, text string) {
	if f.Method != "session/update" {
		return "", "", ""
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	_ = json.Unmarshal(f.Params, &p)
	return p.SessionID, p.Update.SessionUpdate, p.Update.Content.Text
}

// sameID compares two JSON-RPC ids by value.
func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// lockedBuffer collects stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is `reel acp` running as a subprocess, driven over its stdin and
// stdout.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File // read end of reel's stdout
	stderr *lockedBuffer

	mu     sync.Mutex
	cond   *sync.Cond
	lines  []string // every stdout line, in order
	eof    bool
	cursor int // first line not yet consumed
	// parked holds responses read while waiting for another id.
	parked []frame
	nextID int

	waited  bool
	waitErr error
}

// startProc starts reel with args in dir with env.
func startProc(t *testing.T, dir string, env []string, args ...string) *proc {
	t.Helper()
	return startProcWith(t, dir, env, nil, args...)
}

// startProcWith is startProc with prep applied to the command before it
// starts (a controlling terminal, extra files).
func startProcWith(t *testing.T, dir string, env []string, prep func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	cmd := exec.Command(reelExe, args...)
	cmd.Dir, cmd.Env = dir, withRaceEnv(env)
	if prep != nil {
		prep(cmd)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Not cmd.StdoutPipe: Wait closes that pipe's read end at exit and
	// drops the frames not read yet; finish reads to the end first.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = stdoutW
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: stdout, stderr: &lockedBuffer{}, nextID: 1000}
	p.cond = sync.NewCond(&p.mu)
	cmd.Stderr = p.stderr
	err = cmd.Start()
	_ = stdoutW.Close()
	if err != nil {
		_ = stdout.Close()
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			p.mu.Lock()
			if line != "" {
				p.lines = append(p.lines, strings.TrimSuffix(line, "\n"))
			}
			if err != nil {
				p.eof = true
			}
			p.cond.Broadcast()
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if !p.waited {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		_ = p.stdout.Close()
		if t.Failed() {
			t.Logf("reel stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// send writes one raw line to the agent's stdin.
func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing to reel: %v", err)
	}
}

// request sends a request with a fresh id and returns the id.
func (p *proc) request(method string, params any) json.RawMessage {
	p.t.Helper()
	p.nextID++
	id := json.RawMessage(fmt.Sprint(p.nextID))
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(string(b))
	return id
}

// notify sends a notification.
func (p *proc) notify(method string, params any) {
	p.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(string(b))
}

// next returns the next unconsumed stdout frame, failing on end of output.
func (p *proc) next() frame {
	p.t.Helper()
	p.mu.Lock()
	for p.cursor >= len(p.lines) && !p.eof {
		p.cond.Wait()
	}
	if p.cursor >= len(p.lines) {
		p.mu.Unlock()
		p.t.Fatalf("reel closed stdout; stderr:\n%s", p.stderr.String())
	}
	line := p.lines[p.cursor]
	p.cursor++
	p.mu.Unlock()
	var f frame
	if err := json.Unmarshal([]byte(line), &f); err != nil {
		p.t.Fatalf("stdout line is not JSON: %q: %v", line, err)
	}
	f.raw = line
	return f
}

// await returns the response to id and the other frames (notifications,
// requests) read before it. Responses to other ids are kept for later.
func (p *proc) await(id json.RawMessage) (frame, []frame) {
	p.t.Helper()
	for i, f := range p.parked {
		if sameID(f.ID, id) {
			p.parked = append(p.parked[:i], p.parked[i+1:]...)
			return f, nil
		}
	}
	var before []frame
	for {
		f := p.next()
		switch {
		case f.isResponse() && sameID(f.ID, id):
			return f, before
		case f.isResponse():
			p.parked = append(p.parked, f)
		default:
			before = append(before, f)
		}
	}
}

// call sends a request and returns its response, which must be a result.
func (p *proc) call(method string, params any) (json.RawMessage, []frame) {
	p.t.Helper()
	resp, before := p.await(p.request(method, params))
	if resp.Error != nil {
		p.t.Fatalf("%s: error response %s", method, resp.raw)
	}
	return resp.Result, before
}

// waitUpdate consumes frames until a session/update of kind whose text so
// far (concatenated) equals text.
func (p *proc) waitUpdate(kind, text string) {
	p.t.Helper()
	got := ""
	for got != text {
		f := p.next()
		if f.isResponse() {
			p.parked = append(p.parked, f)
			continue
		}
		if _, k, tx := f.update(); k == kind {
			got += tx
		}
	}
}

// finish closes stdin, waits for the exit and returns the exit code.
func (p *proc) finish() int {
	p.t.Helper()
	_ = p.stdin.Close()
	p.waitErr = p.cmd.Wait()
	p.waited = true
	p.readToEnd(30 * time.Second)
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0
	case errors.As(p.waitErr, &ee):
		return ee.ExitCode()
	}
	p.t.Fatalf("waiting for reel: %v", p.waitErr)
	return -1
}

// kill ends reel with SIGKILL (no chance to clean up) and reaps it.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.waited = true
	_ = p.stdout.Close()
}

// readToEnd waits, after the exit, until every frame reel wrote has been
// read (the pipe's end), at most grace (a process reel started could hold
// the pipe open), then closes the read end.
func (p *proc) readToEnd(grace time.Duration) {
	timer := time.AfterFunc(grace, func() { _ = p.stdout.Close() })
	defer timer.Stop()
	p.mu.Lock()
	for !p.eof {
		p.cond.Wait()
	}
	p.mu.Unlock()
	_ = p.stdout.Close()
}

// stdoutLines returns everything reel wrote to stdout (after finish).
func (p *proc) stdoutLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.eof {
		p.cond.Wait()
	}
	return append([]string(nil), p.lines...)
}

// checkFramesOnly asserts every stdout line is one JSON-RPC 2.0 object: a
// request or notification (method) or a response (id with result or error).
func checkFramesOnly(t *testing.T, lines []string) {
	t.Helper()
	for i, line := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("stdout line %d is not a JSON object: %q", i+1, line)
			continue
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			t.Errorf("stdout line %d lacks jsonrpc 2.0: %q", i+1, line)
		}
		_, method := m["method"]
		_, id := m["id"]
		_, result := m["result"]
		_, rpcErr := m["error"]
		if !method && !(id && (result != rpcErr)) {
			t.Errorf("stdout line %d is neither a request, a notification nor a response: %q", i+1, line)
		}
	}
}

// initialize performs the handshake.
func (p *proc) initialize() {
	p.t.Helper()
	res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var r struct {
		AgentInfo struct{ Name string } `json:"agentInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.AgentInfo.Name != "reel" {
		p.t.Fatalf("initialize result %s", res)
	}
}

// newSession opens a session in cwd and returns its id.
func (p *proc) newSession(cwd string) string {
	p.t.Helper()
	res, _ := p.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.SessionID == "" {
		p.t.Fatalf("session/new result %s", res)
	}
	return r.SessionID
}

// prompt runs a prompt to its end and returns the stop reason and the
// frames streamed before the answer.
func (p *proc) prompt(sid, text string) (string, []frame) {
	p.t.Helper()
	res, before := p.call("session/prompt", promptParams(sid, text))
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		p.t.Fatalf("prompt result %s", res)
	}
	return r.StopReason, before
}

func promptParams(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}
