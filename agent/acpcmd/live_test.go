package acpcmd_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// liveScript is a two-turn stand-in script: a bash tool call whose output
// the second request must carry, then a text answer; then a second turn.
const liveScript = `{ "responses": [
  { "toolCalls": [{"id": "call_1", "name": "bash", "arguments": "{\"command\":\"echo STANDIN_TOOL_OK\",\"description\":\"print a marker\"}"}] },
  { "text": "The command printed the marker.", "expect": {"lastMessageContains": "STANDIN_TOOL_OK"} },
  { "text": "Second turn answered.", "expect": {"lastUserContains": "again"} }
] }`

// TestStandinLiveSession runs `reel acp --standin SCRIPT` with no key in
// the environment: a two-turn session with a real tool call is served by
// the in-process stand-in, the log is written, and no lock file is left
// behind after the clean exit.
func TestStandinLiveSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "standin.json")
	if err := os.WriteFile(script, []byte(liveScript), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	p := startProc(t, dir, baseEnv(t), "acp", "--standin", script, "--state-dir", state, "--session-id", "L1")
	p.initialize()
	sid := p.newSession(ws)
	stop, before := p.prompt(sid, "Run a command, then tell me what it printed.")
	if stop != "end_turn" {
		t.Fatalf("turn 1 stop reason %q", stop)
	}
	var sawTool bool
	var text string
	for _, f := range before {
		_, kind, tx := f.update()
		switch kind {
		case "tool_call":
			sawTool = true
		case "agent_message_chunk":
			text += tx
		}
	}
	if !sawTool || text != "The command printed the marker." {
		t.Fatalf("turn 1: tool call seen %v, text %q", sawTool, text)
	}
	if stop, _ := p.prompt(sid, "Say it again."); stop != "end_turn" {
		t.Fatalf("turn 2 stop reason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkFramesOnly(t, p.stdoutLines())
	raw, err := os.ReadFile(filepath.Join(state, "L1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"type":"turn/end"`); n != 2 {
		t.Errorf("log has %d turn/end events, want 2", n)
	}
	if strings.Contains(p.stderr.String(), "no API key") {
		t.Errorf("stderr asks for a key:\n%s", p.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(state, "L1.lock")); !os.IsNotExist(err) {
		t.Errorf("lock file after a clean exit: %v, want it removed", err)
	}
}

// recordingServer is a real local model endpoint: the stand-in's handler,
// or fail (when set), behind a recorder of each request's Authorization
// header.
type recordingServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newRecordingServer(t *testing.T, script string, fail http.HandlerFunc) *recordingServer {
	t.Helper()
	var h http.Handler = fail
	if fail == nil {
		s, err := standin.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		h = standin.New(s, nil).Handler()
	}
	rs := &recordingServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.auths = append(rs.auths, r.Header.Get("Authorization"))
		rs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *recordingServer) requests() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.auths...)
}

// TestLoopbackBaseURLNeedsNoKey: a --base-url on 127.0.0.1 (or localhost)
// serves prompts without any key variable, sending a placeholder key.
func TestLoopbackBaseURLNeedsNoKey(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			rs := newRecordingServer(t, `{"responses":[{"text":"LOCAL_OK"}]}`, nil)
			url := strings.Replace(rs.URL, "127.0.0.1", host, 1) + "/v1"
			dir := t.TempDir()
			p := startProc(t, dir, baseEnv(t), "acp", "--base-url", url, "--state-dir", filepath.Join(dir, "state"))
			p.initialize()
			sid := p.newSession(dir)
			if stop, _ := p.prompt(sid, "hello"); stop != "end_turn" {
				t.Fatalf("stop reason %q", stop)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			// The prompt's call and the title call after the turn.
			if got := rs.requests(); len(got) != 2 || got[0] != "Bearer local" || got[1] != "Bearer local" {
				t.Errorf("Authorization headers %q, want the placeholder \"Bearer local\" on both calls", got)
			}
			if strings.Contains(p.stderr.String(), "no API key") {
				t.Errorf("stderr asks for a key:\n%s", p.stderr.String())
			}
		})
	}
}

// TestFailingEndpointRetries: an endpoint answering HTTP 500 gets exactly
// the policy's bound of requests (1 + 2 retries, no retries nested inside
// the provider), each retry is shown to the editor as a thought, and the
// prompt fails with the provider's message, not "Internal error".
func TestFailingEndpointRetries(t *testing.T) {
	t.Parallel()
	rs := newRecordingServer(t, "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"the model is overloaded","type":"server_error"}}`))
	})
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	p := startProc(t, dir, baseEnv(t), "acp", "--base-url", rs.URL+"/v1", "--state-dir", state, "--session-id", "R1")
	p.initialize()
	sid := p.newSession(dir)
	resp, before := p.await(p.request("session/prompt", promptParams(sid, "hello")))
	if resp.Error == nil {
		t.Fatalf("prompt succeeded: %s", resp.raw)
	}
	if resp.Error.Code != -32603 || resp.Error.Message != "model call failed: the model is overloaded" {
		t.Errorf("error %d %q, want -32603 with the provider's message", resp.Error.Code, resp.Error.Message)
	}
	var thoughts []string
	for _, f := range before {
		if _, kind, tx := f.update(); kind == "agent_thought_chunk" {
			thoughts = append(thoughts, tx)
		}
	}
	want := []string{
		"model endpoint failed (HTTP 500), retrying in 1 s (attempt 2 of 3)\n",
		"model endpoint failed (HTTP 500), retrying in 2 s (attempt 3 of 3)\n",
	}
	if strings.Join(thoughts, "|") != strings.Join(want, "|") {
		t.Errorf("thoughts %q, want %q", thoughts, want)
	}
	if n := len(rs.requests()); n != 3 {
		t.Errorf("the endpoint got %d requests, want 3 (one policy: 1 attempt + 2 retries)", n)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// The retries are in the log as llm/retry events, not as model output,
	// and the log still verifies.
	raw, err := os.ReadFile(filepath.Join(state, "R1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"type":"llm/retry"`); n != 2 {
		t.Errorf("log has %d llm/retry events, want 2", n)
	}
	if strings.Contains(string(raw), "retrying in") {
		t.Errorf("the editor's retry notice reached the log:\n%s", raw)
	}
	if out, err := exec.Command(reelExe, "log", "verify", filepath.Join(state, "R1.jsonl")).CombinedOutput(); err != nil {
		t.Errorf("reel log verify: %v\n%s", err, out)
	}
}

// TestSessionIDReuse: a second session/new with an id whose log exists is
// the caller's mistake (invalid params naming the id), not an internal
// error, and the existing log is left as it was.
func TestSessionIDReuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	fx := fixture(t, "text-turn", "session.jsonl")
	p := startProc(t, dir, baseEnv(t), "acp", "--replay", fx, "--state-dir", state, "--session-id", "DUP")
	p.initialize()
	p.newSession(dir)
	if code := p.finish(); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	before, err := os.ReadFile(filepath.Join(state, "DUP.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p = startProc(t, dir, baseEnv(t), "acp", "--replay", fx, "--state-dir", state, "--session-id", "DUP")
	p.initialize()
	resp, _ := p.await(p.request("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}))
	if resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(string(resp.Error.Data), "session DUP already exists") {
		t.Fatalf("session/new with a used id: %s, want -32602 saying the session exists", resp.raw)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("second run: exit %d", code)
	}
	after, err := os.ReadFile(filepath.Join(state, "DUP.jsonl"))
	if err != nil || string(after) != string(before) {
		t.Errorf("the existing log changed (err %v)", err)
	}
}

// TestHelp: -h and --help print the summary, the flags, the environment
// and an example on stdout and exit 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"-h", "--help"} {
		t.Run(arg, func(t *testing.T) {
			cmd := exec.Command(reelExe, "acp", arg)
			cmd.Env = withRaceEnv(baseEnv(t))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("reel acp %s: %v\n%s", arg, err, stderr.String())
			}
			for _, want := range []string{
				"usage: reel acp [flags]", "Serve the Agent Client Protocol", "-standin SCRIPT", "-base-url",
				"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "REEL_MODEL", "XDG_STATE_HOME", "examples:",
			} {
				if !strings.Contains(string(out), want) {
					t.Errorf("help lacks %q:\n%s", want, out)
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}

// authError is the ACP error of a response, decoded.
type authError struct {
	Code int `json:"code"`
	Data struct {
		Error string `json:"error"`
	} `json:"data"`
}

func decodeError(t *testing.T, f frame) authError {
	t.Helper()
	if f.Error == nil {
		t.Fatalf("want an error response, got %s", f.raw)
	}
	var e authError
	e.Code = f.Error.Code
	_ = json.Unmarshal(f.Error.Data, &e.Data)
	return e
}
