package acpcmd_test

import (
	"bytes"
	"context"
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

// TestRunWithoutKey: without an API key reel acp still serves sessions; a
// prompt fails with an error naming the variable to set, and the turn is
// closed in the log.
func TestRunWithoutKey(t *testing.T) {
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
			in := strings.Join([]string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
				`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + dir + `","mcpServers":[]}}`,
				`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"K1","prompt":[{"type":"text","text":"hi"}]}}`,
			}, "\n") + "\n"
			// The SDK may log "connection closed" after Run returned: stderr
			// is a locked buffer.
			var stdout bytes.Buffer
			stderr := &lockedBuffer{}
			err := acpcmd.Run(context.Background(), []string{"--state-dir", state, "--session-id", "K1", "--provider", tt.provider}, acpcmd.IO{
				Stdin: strings.NewReader(in), Stdout: &stdout, Stderr: stderr,
				Getenv: getenv(map[string]string{"HOME": dir}), Executable: reelExe,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			checkFramesOnly(t, lines)
			var answer string
			for _, l := range lines {
				if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":3,`) {
					answer = l
				}
			}
			if !strings.Contains(answer, `"code":-32603`) || !strings.Contains(answer, "set "+tt.keyVar) {
				t.Errorf("prompt answer %q, want an internal error naming %s", answer, tt.keyVar)
			}
			if !strings.Contains(stderr.String(), "no model available") {
				t.Errorf("stderr does not warn about the missing model:\n%s", stderr.String())
			}
			raw, err := os.ReadFile(filepath.Join(state, "K1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), `"type":"turn/end"`) || !strings.Contains(string(raw), `"kind":"error"`) {
				t.Errorf("the failed turn is not closed with turn/end error:\n%s", raw)
			}
		})
	}
}
