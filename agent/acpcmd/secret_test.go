package acpcmd_test

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
)

// TestSecretsNeverLeak runs a turn whose bash call prints the environment,
// with a fake key in every key variable reel knows: first live against the
// stand-in model (the provider really sends the key), then replayed from
// the log that run recorded. The key appears in no log, no stdout, no
// stderr and no file the runs left behind, while the tool output itself
// (a canary variable) does reach the log and the client.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const (
		key    = "sk-reel-fake-0123456789abcdef"
		canary = "REEL_TEST_CANARY=visible-canary-42"
	)
	keyVars := []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "REEL_API_KEY"}
	tests := []struct {
		mode     string
		landlock bool
	}{
		{"danger-full-access", false},
		{"workspace-write", true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			if tt.landlock {
				if abi, err := sandbox.Probe(); abi == 0 {
					if os.Getenv("CI") == "true" {
						t.Fatalf("Landlock is unavailable (%v): bash cannot run in %s", err, tt.mode)
					}
					t.Skipf("Landlock is unavailable (%v)", err)
				}
			}
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			env := append(baseEnv(t), canary)
			for _, k := range keyVars {
				env = append(env, k+"="+key)
			}

			script := &standin.Script{Responses: []standin.Response{
				{ToolCalls: []standin.ToolCall{{ID: "call_env", Name: "bash", Arguments: `{"command":"env; echo ENV-LISTED","description":"List the environment"}`}}},
				{Text: "done", Expect: &standin.Expect{LastMessageContains: canary}},
			}}
			if err := script.Validate(); err != nil {
				t.Fatal(err)
			}
			model := standin.New(script, nil)
			var mu sync.Mutex
			var auth []string
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auth = append(auth, r.Header.Get("Authorization"))
				mu.Unlock()
				model.Handler().ServeHTTP(w, r)
			})}
			go func() { _ = hs.Serve(ln) }()
			t.Cleanup(func() { _ = hs.Close() })

			type run struct {
				name           string
				stdout, stderr string
			}
			var runs []run
			drive := func(name string, args ...string) {
				p := startProc(t, dir, env, args...)
				p.initialize()
				sid := p.newSession(ws)
				if stop, _ := p.prompt(sid, "List the environment with bash."); stop != "end_turn" {
					t.Fatalf("%s: stopReason %q", name, stop)
				}
				if code := p.finish(); code != 0 {
					t.Fatalf("%s: exit %d; stderr:\n%s", name, code, p.stderr.String())
				}
				lines := p.stdoutLines()
				checkFramesOnly(t, lines)
				runs = append(runs, run{name, strings.Join(lines, "\n"), p.stderr.String()})
			}
			drive("live", "acp", "--state-dir", filepath.Join(dir, "live"), "--session-id", "REC", "--log-level", "debug",
				"--mode", tt.mode, "--provider", "deepseek", "--base-url", "http://"+ln.Addr().String()+"/v1", "--model", "standin")
			recorded := filepath.Join(dir, "live", "REC.jsonl")
			// The replayed bash runs env again, in a fresh private temp dir,
			// so its output is not the recorded one: the requests are
			// matched by their conversation (tool results by id and
			// isError), not byte for byte.
			drive("replay", "acp", "--state-dir", filepath.Join(dir, "replay"), "--session-id", "REP", "--log-level", "debug",
				"--mode", tt.mode, "--replay", recorded, "--replay-match", "messages")

			// The key was really in use: the provider sent it to the model.
			mu.Lock()
			// Two conversation calls and the title call after the first turn.
			if len(auth) != 3 || slices.ContainsFunc(auth, func(a string) bool { return a != "Bearer "+key }) {
				t.Errorf("the stand-in saw Authorization %q, want the fake key on all three calls", auth)
			}
			mu.Unlock()
			for i, body := range model.Requests() {
				if strings.Contains(string(body), key) {
					t.Errorf("model request %d carries the key in its body", i+1)
				}
			}

			// The tool output reached the logs and the client, so the scan
			// below sees what env printed.
			for _, r := range runs {
				if !strings.Contains(r.stdout, canary) {
					t.Errorf("%s: the env output (%s) never reached stdout", r.name, canary)
				}
				if strings.Contains(r.stdout, key) {
					t.Errorf("%s: stdout holds the key", r.name)
				}
				if strings.Contains(r.stderr, key) {
					t.Errorf("%s: stderr holds the key", r.name)
				}
				for _, k := range keyVars {
					if strings.Contains(r.stdout, k+"=") {
						t.Errorf("%s: the tool's environment had %s", r.name, k)
					}
				}
			}
			for _, log := range []string{recorded, filepath.Join(dir, "replay", "REP.jsonl")} {
				b, err := os.ReadFile(log)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), canary) {
					t.Errorf("%s lacks the env output", log)
				}
			}
			// No file left behind holds the key: logs, locks, spill files,
			// the workspace.
			seen, leaked := filesHolding(t, dir, func(b []byte) bool { return strings.Contains(string(b), key) })
			for _, path := range leaked {
				t.Errorf("%s holds the key", path)
			}
			if seen < 2 {
				t.Errorf("scanned %d files, want at least the two logs", seen)
			}
		})
	}
}
