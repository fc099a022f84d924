package acpcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackRefusedFramesKeepTheirID sends frames reel refuses for their
// size (over 8 MiB) or their nesting (deeper than encoding/json accepts).
// Each is answered with its own request id wherever the id sits in the
// frame (first, after megabytes of params, a string, an escaped key), so
// the client's request does not wait forever; a frame whose id cannot be
// read (an object id, no id, not JSON) is still answered with null.
func TestAttackRefusedFramesKeepTheirID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, dir, baseEnv(t), "acp", "--state-dir", filepath.Join(dir, "state"), "--session-id", "S1",
		"--replay", fixture(t, "text-turn", "session.jsonl"))
	p.initialize()
	p.newSession(ws)

	pad := strings.Repeat("x", 8<<20)
	deep := strings.Repeat(`{"a":[`, 6000) + strings.Repeat(`]}`, 6000) // 12000 levels
	tests := []struct {
		name  string
		frame string
		id    string
		code  int
		frag  string
	}{
		{"oversize, id first", `{"jsonrpc":"2.0","id":31,"method":"session/list","params":{"pad":"` + pad + `"}}`, `31`, -32600, "frame larger than 8 MiB"},
		{"oversize, id after the params", `{"jsonrpc":"2.0","method":"session/list","params":{"pad":"` + pad + `","n":[1,{"id":9}]},"id":32}`, `32`, -32600, "frame larger than 8 MiB"},
		{"oversize, string id with escapes", `{"jsonrpc":"2.0","id":"a\"b<c>","method":"session/list","params":{"pad":"` + pad + `"}}`, `"a\"b<c>"`, -32600, "frame larger than 8 MiB"},
		{"oversize, escaped key", `{"jsonrpc":"2.0","\u0069d":34,"method":"session/list","params":{"pad":"` + pad + `"}}`, `34`, -32600, "frame larger than 8 MiB"},
		{"oversize, pad with quotes and brackets before the id", `{"jsonrpc":"2.0","params":{"pad":"` + strings.Repeat(`\"}{[`, 2<<20) + `"},"id":35,"method":"session/list"}`, `35`, -32600, "frame larger than 8 MiB"},
		{"oversize, object id", `{"jsonrpc":"2.0","id":{"n":36},"method":"session/list","params":{"pad":"` + pad + `"}}`, `null`, -32600, "frame larger than 8 MiB"},
		{"nested too deep, id first", `{"jsonrpc":"2.0","id":37,"method":"session/list","params":` + deep + `}`, `37`, -32700, "Parse error"},
		{"nested too deep, id last", `{"jsonrpc":"2.0","method":"session/list","params":` + deep + `,"id":"deep-38"}`, `"deep-38"`, -32700, "Parse error"},
		{"not JSON, id readable", `{"jsonrpc":"2.0","id":39,"method":`, `null`, -32700, "Parse error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			defer func() { p.t = nil }()
			p.send(tt.frame)
			// The refusal is written before the next frame is read, so it
			// is among the answers parked while this request is awaited
			// (and the process keeps serving).
			res, _ := p.call("session/list", map[string]any{})
			if !strings.Contains(string(res), `"sessions":[`) {
				t.Errorf("session/list after the refused frame: %s", res)
			}
			var resp *frame
			for i, f := range p.parked {
				if sameID(f.ID, json.RawMessage(tt.id)) {
					resp = &f
					p.parked = append(p.parked[:i], p.parked[i+1:]...)
					break
				}
			}
			if resp == nil {
				var got []string
				for _, f := range p.parked {
					got = append(got, f.raw)
				}
				p.parked = nil
				t.Fatalf("no answer with id %s before the next request's; got %q", tt.id, got)
			}
			if resp.Error == nil || resp.Error.Code != tt.code || !strings.Contains(resp.raw, tt.frag) {
				t.Fatalf("answer %s, want error %d mentioning %q", resp.raw, tt.code, tt.frag)
			}
		})
	}
	p.t = t
	if code := p.finish(); code != 0 {
		t.Errorf("reel acp exited %d; stderr:\n%s", code, p.stderr.String())
	}
	for _, f := range p.parked {
		t.Errorf("unexpected answer %s", f.raw)
	}
}
