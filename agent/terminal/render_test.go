package terminal

import (
	"strings"
	"testing"
)

// TestRender holds the results to the reference's texts, cuts included
// (the pty-tools recording caps a result at 64 bytes).
func TestRender(t *testing.T) {
	zero := 0
	named := &Terminal{ID: "pty-1", Name: "main", Type: "shell"}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"open", renderOpen(named, "dsh> ", 1000), "started terminal session pty-1 (main) [type: shell]\ndsh> "},
		{"open unnamed, no output", renderOpen(&Terminal{ID: "pty-2", Type: "shell"}, "", 1000), "started terminal session pty-2 [type: shell]\n(no startup output)"},
		{"open cut", renderOpen(named, strings.Repeat("m", 100), 100), "started terminal session pty-1 (main) [type: shell]\n" + strings.Repeat("m", 100-71) + "\n[output truncated]"},
		{"send", renderSend(SendResult{Viewport: "x\n", WaitReason: WaitStdin, Status: Status{Running: true}}, 1000), "x\n\n[wait: stdin_read]\n[session: running]"},
		{"send cut to its tail (the recording)", renderSend(SendResult{Viewport: "printf 'PTY_OK\\n'\nPTY_OK\ndsh> ", WaitReason: WaitStdin, Status: Status{Running: true}}, 64),
			"K\ndsh> \n[wait: stdin_read]\n[session: running]\n[output truncated]"},
		{"send already cut", renderSend(SendResult{Viewport: "tail", WaitReason: WaitIdle, Status: Status{Running: true}, Truncated: true}, 1000),
			"tail\n[wait: inferred_idle]\n[session: running]\n[output truncated]"},
		{"send exited", renderSend(SendResult{WaitReason: WaitExit, Status: Status{ExitCode: &zero}}, 1000), "(no new output)\n[wait: session_exit]\n[session: exited code=0 signal=null]"},
		{"send killed", renderSend(SendResult{WaitReason: WaitExit, Status: Status{Signal: "SIGKILL"}}, 1000), "(no new output)\n[wait: session_exit]\n[session: exited code=null signal=SIGKILL]"},
		{"read", renderRead(ReadResult{Text: "a\nb", TotalLines: 3, LineBegin: 0, LineEnd: 2}, 1000), "a\nb\n[lines: 0-2 of 3]"},
		{"read nothing", renderRead(ReadResult{TotalLines: 3, LineBegin: 5, LineEnd: 5}, 1000), "(no retained output)\n[lines: 5-5 of 3]"},
		{"list empty", renderList(nil, 1000), "(no terminal sessions)"},
		{"bound at a character", bound(strings.Repeat("é", 40), 30), strings.Repeat("é", 5) + "\n[output truncated]"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
		if len(tc.got) > 64 && strings.Contains(tc.name, "recording") {
			t.Errorf("%s: %d bytes, over the 64-byte cap", tc.name, len(tc.got))
		}
	}
}

// TestReadPages holds terminal_read's paging to the reference's: offset
// lines back from the newest, count lines, in order.
func TestReadPages(t *testing.T) {
	term := &Terminal{scroll: newRing(ScrollbackBytes)}
	term.scroll.Write([]byte("l1\nl2\nl3\nl4\nl5"))
	for _, tc := range []struct {
		offset, count int
		want          ReadResult
	}{
		{0, 500, ReadResult{Text: "l1\nl2\nl3\nl4\nl5", TotalLines: 5, LineBegin: 0, LineEnd: 5}},
		{0, 2, ReadResult{Text: "l4\nl5", TotalLines: 5, LineBegin: 0, LineEnd: 2}},
		{1, 3, ReadResult{Text: "l2\nl3\nl4", TotalLines: 5, LineBegin: 1, LineEnd: 4}},
		{4, 10, ReadResult{Text: "l1", TotalLines: 5, LineBegin: 4, LineEnd: 5}},
		{5, 10, ReadResult{TotalLines: 5, LineBegin: 5, LineEnd: 5}},
	} {
		if got := term.Read(tc.offset, tc.count); got != tc.want {
			t.Errorf("Read(%d, %d) = %+v, want %+v", tc.offset, tc.count, got, tc.want)
		}
	}
}
