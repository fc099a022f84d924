package equiv

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestTerminalEssences: each terminal rule reduces the reference's and
// reel's presentations of the same outcome to one essence, and tells a
// different outcome apart.
func TestTerminalEssences(t *testing.T) {
	viewport := func(v string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"viewport": v, "waitReason": "stdin_read"})
		return b
	}
	for _, tc := range []struct {
		tool        string
		ref, reel   string
		refM, reelM json.RawMessage
		other       string // a different outcome, "" for none
	}{
		{tool: "terminal_open", ref: "started terminal session pty-1 (main) [type: shell]\ndsh> ", reel: "started terminal session pty-1 (main) [type: shell]\nreel> ",
			other: "started terminal session pty-2 (main) [type: shell]\nreel> "},
		{tool: "terminal_send",
			ref: "K\ndsh> \n[wait: stdin_read]\n[session: running]\n[output truncated]", refM: viewport("printf 'PTY_OK\\n'\nPTY_OK\ndsh> "),
			reel: "printf 'PTY_OK\\n'\nPTY_OK\nreel> \n[wait: stdin_read]\n[session: running]", reelM: viewport("printf 'PTY_OK\\n'\nPTY_OK\nreel> "),
			other: "printf 'PTY_OK\\n'\nPTY_NO\nreel> \n[wait: stdin_read]\n[session: running]"},
		{tool: "terminal_send", ref: "x\ndsh> \n[wait: inferred_idle]\n[session: running]", reel: "x\nreel> \n[wait: inferred_idle]\n[session: running]",
			other: "x\nreel> \n[wait: timeout]\n[session: running]"},
		{tool: "terminal_read", ref: "dsh> printf 'PTY_OK\\n'\nPTY_OK\ndsh> \n[lines: 0-3 of 3]", reel: "reel> printf 'PTY_OK\\n'\nPTY_OK\nreel> \n[lines: 0-3 of 3]",
			other: "reel> printf 'PTY_OK\\n'\nPTY_OK\nreel> \n[lines: 0-3 of 4]"},
		{tool: "terminal_signal", ref: "delivered SIGINT to foreground process group 41", reel: "delivered SIGINT to foreground process group 7321",
			other: "delivered SIGTERM to foreground process group 7321"},
		{tool: "terminal_close", ref: "closed terminal session pty-1", reel: "closed terminal session pty-1", other: "terminal session pty-1 was already closing"},
		{tool: "terminal_list", ref: "(no terminal sessions)", reel: "(no terminal sessions)", other: "pty-1 (main) [shell] running pid=12"},
		{tool: "terminal_list", ref: "pty-1 (main) [shell] running pid=12\npty-2 [shell] exited code=0 signal=null", reel: "pty-1 (main) [shell] running pid=99\npty-2 [shell] exited code=0 signal=null",
			other: "pty-1 (main) [shell] running pid=99"},
	} {
		r := toolRule(tc.tool)
		if r == nil {
			t.Fatalf("%s: no rule", tc.tool)
		}
		want, ok1 := r.essence(tc.ref, tc.refM)
		got, ok2 := r.essence(tc.reel, tc.reelM)
		if !ok1 || !ok2 || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: reference %+v (%v) against reel %+v (%v)", tc.tool, want, ok1, got, ok2)
		}
		if tc.other != "" {
			if o, ok := r.essence(tc.other, nil); !ok || reflect.DeepEqual(o, got) {
				t.Errorf("%s: a different outcome %q reduces to the same essence %+v (%v)", tc.tool, tc.other, o, ok)
			}
		}
	}
}
