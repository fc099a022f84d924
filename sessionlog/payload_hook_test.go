package sessionlog_test

import (
	"math"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestAppendNumber: numbers are written as JSON.stringify writes them (the
// want column is node's output for each value).
func TestAppendNumber(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-2, "-2"},
		{3.6819170000001122, "3.6819170000001122"}, {0.1, "0.1"}, {1e-6, "0.000001"},
		{1e-7, "1e-7"}, {1.5e-9, "1.5e-9"}, {123456789012345680000, "123456789012345680000"},
		{1e21, "1e+21"}, {-1.25e22, "-1.25e+22"}, {math.NaN(), "null"}, {math.Inf(1), "null"},
	} {
		if got := string(sessionlog.AppendNumber(nil, c.f)); got != c.want {
			t.Errorf("AppendNumber(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

// TestHookPayloads: the hook records encode in dsh's member order, with
// the optional members absent when empty.
func TestHookPayloads(t *testing.T) {
	two := 2
	for _, c := range []struct {
		p    sessionlog.Payload
		want string
	}{
		{sessionlog.HookInvokedData{Turn: 1, Point: "PreToolUse", Dialect: "claude-code", HandlerID: "claude-code:PreToolUse:1", Matcher: "bash"},
			`{"turn":1,"point":"PreToolUse","dialect":"claude-code","handlerId":"claude-code:PreToolUse:1","matcher":"bash"}`},
		{sessionlog.HookInvokedData{Turn: 2, Point: "Stop", Dialect: "codex", HandlerID: "codex:Stop:3"},
			`{"turn":2,"point":"Stop","dialect":"codex","handlerId":"codex:Stop:3"}`},
		{sessionlog.HookResultData{Turn: 1, Point: "PreToolUse", HandlerID: "h", Decision: "block", ExitCode: &two, StderrSummary: "no <bash> & co", DurationMs: 3.5},
			`{"turn":1,"point":"PreToolUse","handlerId":"h","decision":"block","exitCode":2,"stderrSummary":"no <bash> & co","durationMs":3.5}`},
		{sessionlog.HookResultData{Turn: 1, Point: "Stop", HandlerID: "h", Decision: "pass", DurationMs: 1000},
			`{"turn":1,"point":"Stop","handlerId":"h","decision":"pass","durationMs":1000}`},
	} {
		if got := string(c.p.AppendJSON(nil)); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
