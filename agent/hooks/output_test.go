package hooks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/jsrules"
)

func code(n int) *int   { return &n }
func flag(b bool) *bool { return &b }

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name           string
		exit           *int
		stdout, stderr string
		event          string
		want           Output
	}{
		{"exit 0 plain", code(0), "  hello\n", "", "Stop",
			Output{ExitCode: code(0), Stdout: "hello"}},
		{"exit 2 blocks with stderr", code(2), `{"decision":"approve"}`, "  no way \n", "PreToolUse",
			Output{ExitCode: code(2), Stdout: `{"decision":"approve"}`, Stderr: "no way", Decision: "block", Reason: "no way"}},
		{"exit 2 without stderr", code(2), "", "\n", "Stop",
			Output{ExitCode: code(2), Decision: "block"}},
		{"exit 1 is no decision, JSON ignored", code(1), `{"decision":"block","reason":"r"}`, "oops", "Stop",
			Output{ExitCode: code(1), Stdout: `{"decision":"block","reason":"r"}`, Stderr: "oops"}},
		{"no exit", nil, `{"decision":"block"}`, "killed", "Stop",
			Output{Stdout: `{"decision":"block"}`, Stderr: "killed"}},
		{"top-level fields", code(0),
			`{"continue":false,"stopReason":"enough","systemMessage":"hi","decision":"block","reason":"why"}`, "", "Stop",
			Output{ExitCode: code(0), Stdout: `{"continue":false,"stopReason":"enough","systemMessage":"hi","decision":"block","reason":"why"}`,
				Continue: flag(false), StopReason: "enough", SystemMessage: "hi", Decision: "block", Reason: "why"}},
		{"top-level deny is invalid", code(0), `{"decision":"deny","reason":"r"}`, "", "PreToolUse",
			Output{ExitCode: code(0), Stdout: `{"decision":"deny","reason":"r"}`, Reason: "r"}},
		{"wrong types ignored", code(0), `{"continue":"no","decision":1,"reason":null,"systemMessage":[]}`, "", "Stop",
			Output{ExitCode: code(0), Stdout: `{"continue":"no","decision":1,"reason":null,"systemMessage":[]}`}},
		{"hook-specific overrides", code(0),
			`{"decision":"approve","reason":"top","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check","additionalContext":"ctx","updatedInput":{"b":1,"a":[true]}}}`, "", "PreToolUse",
			Output{ExitCode: code(0), Decision: "ask", Reason: "check", HookEventName: "PreToolUse", AdditionalContext: "ctx", UpdatedInput: []byte(`{"b":1,"a":[true]}`)}},
		{"mismatched event keeps top level only", code(0),
			`{"decision":"block","reason":"top","hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"allow","additionalContext":"ctx"}}`, "", "PreToolUse",
			Output{ExitCode: code(0), Decision: "block", Reason: "top", HookEventName: "PostToolUse"}},
		{"missing event name drops the block", code(0),
			`{"hookSpecificOutput":{"permissionDecision":"deny","additionalContext":"ctx"}}`, "", "PreToolUse",
			Output{ExitCode: code(0)}},
		{"no guard without an event", code(0),
			`{"hookSpecificOutput":{"permissionDecision":"deny"}}`, "", "",
			Output{ExitCode: code(0), Decision: "deny"}},
		{"invalid permission decision", code(0),
			`{"hookSpecificOutput":{"hookEventName":"Stop","permissionDecision":"block","updatedInput":[1]}}`, "", "Stop",
			Output{ExitCode: code(0), HookEventName: "Stop"}},
		{"malformed JSON stays plain", code(0), `{"decision":"block"`, "", "Stop",
			Output{ExitCode: code(0), Stdout: `{"decision":"block"`}},
		{"JSON not first", code(0), `note {"decision":"block"}`, "", "Stop",
			Output{ExitCode: code(0), Stdout: `note {"decision":"block"}`}},
		{"array is not an object", code(0), `[{"decision":"block"}]`, "", "Stop",
			Output{ExitCode: code(0), Stdout: `[{"decision":"block"}]`}},
		{"JS trim: BOM and NBSP go, NEL stays", code(0), "\ufeff\u00a0x\u0085", "", "Stop",
			Output{ExitCode: code(0), Stdout: "x\u0085"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseOutput(tt.exit, tt.stdout, tt.stderr, tt.event)
			want := tt.want
			if want.Stdout == "" && strings.HasPrefix(jsrules.Trim(tt.stdout), "{") {
				want.Stdout = jsrules.Trim(tt.stdout)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestResultDecision(t *testing.T) {
	tests := []struct {
		out  Output
		want string
	}{
		{Output{}, "pass"},
		{Output{Continue: flag(true)}, "pass"},
		{Output{Continue: flag(false)}, "stop"},
		{Output{Continue: flag(false), Decision: "approve"}, "approve"},
		{Output{Decision: "ask"}, "ask"},
	}
	for _, tt := range tests {
		if got := tt.out.resultDecision(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		outs []Output
		want Merged
	}{
		{"none", nil, Merged{Decision: "none"}},
		{"allow", []Output{{Decision: "approve", Reason: "fine"}, {Decision: "allow"}}, Merged{Decision: "allow"}},
		{"ask beats allow", []Output{{Decision: "allow", Reason: "a"}, {Decision: "ask", Reason: "q1"}, {Decision: "ask"}, {Decision: "ask", Reason: "q2"}},
			Merged{Decision: "ask", Reason: "q1\n\nq2"}},
		{"deny beats ask, only deny reasons", []Output{{Decision: "ask", Reason: "q"}, {Decision: "block", Reason: "b"}, {Decision: "deny", Reason: "d"}},
			Merged{Decision: "deny", Reason: "b\n\nd"}},
		{"first stop sticks", []Output{{Continue: flag(true), StopReason: "x"}, {Continue: flag(false), StopReason: "first"}, {Continue: flag(false), StopReason: "second"}},
			Merged{Decision: "none", Stop: true, StopReason: "first"}},
		{"contexts and messages accumulate", []Output{{AdditionalContext: "c1", SystemMessage: "m1"}, {AdditionalContext: ""}, {AdditionalContext: "c2", SystemMessage: "m2"}},
			Merged{Decision: "none", Contexts: []string{"c1", "c2"}, SystemMessages: []string{"m1", "m2"}}},
	}
	for _, tt := range tests {
		if got := Merge(tt.outs); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	long := strings.Repeat("a", 499)
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"  \n", ""},
		{" short \n", "short"},
		{strings.Repeat("x", 500), strings.Repeat("x", 500)},
		{strings.Repeat("x", 501), strings.Repeat("x", 500) + "…"},
		{long + "é" + "z", long + "é…"}, // é is one code unit
		{long + "😀", long + "…"},        // 501 units: the pair is not split
		{strings.Repeat("😀", 250), strings.Repeat("😀", 250)},
		{strings.Repeat("😀", 251), strings.Repeat("😀", 250) + "…"},
	}
	for _, tt := range tests {
		if got := summarize(tt.in, 500); got != tt.want {
			t.Errorf("summarize(%.20q…) = %.30q… (len %d), want len %d", tt.in, got, len(got), len(tt.want))
		}
	}
}
