package acpcmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/acpcmd"
)

// getenv serves a fixed environment.
func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// TestRunRefusesBadFlags runs acpcmd.Run in process: bad flags fail before
// anything is served, with nothing on stdout.
func TestRunRefusesBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		wantUsage bool
		frag      string
	}{
		{"unknown flag", []string{"--frobnicate"}, true, "flag provided but not defined: -frobnicate"},
		{"positional argument", []string{"extra"}, true, "reel acp takes no arguments"},
		{"unknown mode", []string{"--mode", "yolo"}, true, `--mode "yolo"`},
		{"override without replay", []string{"--replay-override", "o.json"}, true, "--replay-override needs --replay"},
		{"title override without replay", []string{"--replay-title-override", "o.json"}, true, "--replay-title-override needs --replay"},
		{"unknown log level", []string{"--log-level", "loud"}, true, `--log-level "loud"`},
		{"unknown store", []string{"--store", "csv"}, true, `--store "csv"`},
		{"unknown provider", []string{"--provider", "acme"}, true, `--provider "acme"`},
		{"unknown approval policy", []string{"--approval", "sometimes"}, true, `--approval "sometimes": want on-request or never`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"--state-dir", filepath.Join(t.TempDir(), "state")}, tt.args...)
			err := acpcmd.Run(context.Background(), args, acpcmd.IO{
				Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
				Getenv: getenv(nil), Executable: reelExe,
			})
			if err == nil {
				t.Fatal("Run succeeded")
			}
			if errors.Is(err, acpcmd.ErrUsage) != tt.wantUsage {
				t.Errorf("errors.Is(%v, ErrUsage) = %v, want %v", err, !tt.wantUsage, tt.wantUsage)
			}
			if !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q does not mention %q", err, tt.frag)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
}

func TestDefaultStateDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/reel/sessions"},
		{"HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/reel/sessions"},
		{"neither", nil, filepath.Join(os.TempDir(), ".local", "state", "reel", "sessions")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := acpcmd.DefaultStateDir(getenv(tt.env)); got != tt.want {
				t.Errorf("DefaultStateDir = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRunWithoutKey: without an API key for a remote endpoint, reel acp
// says so on stderr at start-up naming the variable; initialize advertises
// the variable as the auth method, and session/new, session/prompt and
// authenticate fail with ACP auth-required (-32000) naming it, while an
// existing session still loads.
func TestRunWithoutKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider, keyVar string
	}{
		{"deepseek", "DEEPSEEK_API_KEY"},
		{"openai", "OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			// A session to load, written by a replaying run.
			p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--session-id", "K1",
				"--replay", fixture(t, "text-turn", "session.jsonl"))
			p.initialize()
			p.newSession(dir)
			if code := p.finish(); code != 0 {
				t.Fatalf("replaying run: exit %d", code)
			}

			p = startProc(t, dir, baseEnv(t), "acp", "--state-dir", state, "--provider", tt.provider)
			res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			var init struct {
				AuthMethods []struct{ ID, Name string } `json:"authMethods"`
			}
			if err := json.Unmarshal(res, &init); err != nil || len(init.AuthMethods) != 1 ||
				init.AuthMethods[0].ID != "env:"+tt.keyVar || !strings.Contains(init.AuthMethods[0].Name, tt.keyVar) {
				t.Errorf("initialize authMethods %s, want one naming %s", res, tt.keyVar)
			}
			for _, req := range []struct {
				method string
				params any
			}{
				{"session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}},
				{"authenticate", map[string]any{"methodId": "env:" + tt.keyVar}},
			} {
				resp, _ := p.await(p.request(req.method, req.params))
				if e := decodeError(t, resp); e.Code != -32000 || !strings.Contains(e.Data.Error, "set "+tt.keyVar) {
					t.Errorf("%s: %s, want auth-required naming %s", req.method, resp.raw, tt.keyVar)
				}
			}
			p.call("session/load", map[string]any{"sessionId": "K1", "cwd": dir, "mcpServers": []any{}})
			resp, _ := p.await(p.request("session/prompt", promptParams("K1", "hi")))
			if e := decodeError(t, resp); e.Code != -32000 || !strings.Contains(e.Data.Error, "set "+tt.keyVar) {
				t.Errorf("session/prompt: %s, want auth-required naming %s", resp.raw, tt.keyVar)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			// Read after the exit: stderr is copied from its pipe
			// asynchronously, and only Wait guarantees it is all there.
			if !strings.Contains(p.stderr.String(), "no API key for --provider "+tt.provider) || !strings.Contains(p.stderr.String(), "set "+tt.keyVar) {
				t.Errorf("stderr at start-up does not name %s:\n%s", tt.keyVar, p.stderr.String())
			}
			checkFramesOnly(t, p.stdoutLines())
		})
	}
}
