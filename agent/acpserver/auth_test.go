package acpserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// serveAuth serves an adapter with the given key settings and returns a
// connected client.
func serveAuth(t *testing.T, keyVar, missing string) *acp.ClientSideConnection {
	t.Helper()
	dir := t.TempDir()
	store, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.New(agent.Config{Store: store, Models: agent.SharedModels{Provider: replay.New(nil, 0, dir)}, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := acpserver.New(acpserver.Config{Engine: eng, KeyVar: keyVar, MissingKey: missing})
	if err != nil {
		t.Fatal(err)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), agentIn, agentOut) }()
	conn := acp.NewClientSideConnection(newClient(), clientOut, clientIn)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		_ = clientOut.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = agentOut.Close()
		_ = store.Close()
	})
	return conn
}

// TestAuthMethods: the env-var method is advertised whenever the model
// reads a key (not only when it is missing); authenticate with it succeeds
// when the key is set and is auth-required when it is not; any other
// method id is invalid params; a model that needs no key offers none.
func TestAuthMethods(t *testing.T) {
	code := func(err error) int {
		var re *acp.RequestError
		if errors.As(err, &re) {
			return re.Code
		}
		return 0
	}
	for _, tc := range []struct {
		name, keyVar, missing string
		wantMethods           []string
		authWith              string
		wantCode              int // 0: success
	}{
		{"key set", "DEEPSEEK_API_KEY", "", []string{"env:DEEPSEEK_API_KEY"}, "env:DEEPSEEK_API_KEY", 0},
		{"key missing", "", "DEEPSEEK_API_KEY", []string{"env:DEEPSEEK_API_KEY"}, "env:DEEPSEEK_API_KEY", -32000},
		{"unknown method", "DEEPSEEK_API_KEY", "", []string{"env:DEEPSEEK_API_KEY"}, "oauth", -32602},
		{"no key needed", "", "", nil, "env:DEEPSEEK_API_KEY", -32602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := serveAuth(t, tc.keyVar, tc.missing)
			resp, err := conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range resp.AuthMethods {
				if m.Agent != nil {
					got = append(got, m.Agent.Id)
				}
			}
			if len(got) != len(tc.wantMethods) || len(got) > 0 && got[0] != tc.wantMethods[0] {
				t.Errorf("authMethods %v, want %v", got, tc.wantMethods)
			}
			if resp.AgentCapabilities.SessionCapabilities.Close == nil {
				t.Error("sessionCapabilities.close is not advertised")
			}
			_, err = conn.Authenticate(context.Background(), acp.AuthenticateRequest{MethodId: tc.authWith})
			if c := code(err); c != tc.wantCode {
				t.Errorf("authenticate %q: code %d (%v), want %d", tc.authWith, c, err, tc.wantCode)
			}
		})
	}
}
