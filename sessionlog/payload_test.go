package sessionlog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestPayloadEncoders pins the exact bytes of every constructor and payload
// type: dsh's member order, JSON.stringify's escaping, optional members
// absent.
func TestPayloadEncoders(t *testing.T) {
	usage := json.RawMessage(`{"inputTokens":10,"outputTokens":2}`)
	interrupted := sessionlog.NewAssistantMessage(3, 1, "deepseek", "deepseek-chat", "a2", sessionlog.TextPart("partial"))
	interrupted.Interrupted = true
	withUsage := sessionlog.NewAssistantMessage(1, 2, "deepseek", "deepseek-chat", "a1",
		sessionlog.ReasoningPart("think"), sessionlog.TextPart("ok"), sessionlog.ToolCallPart("c1", "bash", `{"command":"ls"}`))
	withUsage.Usage = usage
	rawImage := json.RawMessage(`{"type":"image","attachment":{"attachmentId":"att-1","mediaType":"image/png","width":1,"height":1,"bytes":68}}`)

	tests := []struct {
		name string
		p    sessionlog.Payload
		want string
	}{
		{"turn/start", sessionlog.TurnData{Turn: 3}, `{"turn":3}`},
		{"step/start", sessionlog.StepData{Turn: 3, Step: 2}, `{"turn":3,"step":2}`},
		{"turn/end completed", sessionlog.TurnEnd(1, sessionlog.Completed()), `{"turn":1,"reason":{"kind":"completed"}}`},
		{"turn/end max-tokens", sessionlog.TurnEnd(2, sessionlog.EndedWith(sessionlog.EndMaxTokens)), `{"turn":2,"reason":{"kind":"max-tokens"}}`},
		{"turn/end blocked", sessionlog.TurnEnd(2, sessionlog.EndedWith(sessionlog.EndBlocked)), `{"turn":2,"reason":{"kind":"blocked"}}`},
		{"turn/end interrupted", sessionlog.TurnEnd(4, sessionlog.EndedWith(sessionlog.EndInterrupted)), `{"turn":4,"reason":{"kind":"interrupted"}}`},
		{"turn/end aborted", sessionlog.TurnEnd(5, sessionlog.Aborted(sessionlog.CauseUser)), `{"turn":5,"reason":{"kind":"aborted","reason":{"kind":"user"}}}`},
		{"turn/end error", sessionlog.TurnEnd(6, sessionlog.Failed(`simulated provider error (HTTP 401) "x"`, "AUTH")),
			`{"turn":6,"reason":{"kind":"error","error":{"message":"simulated provider error (HTTP 401) \"x\"","code":"AUTH"}}}`},
		{"turn/end error without code", sessionlog.TurnEnd(6, sessionlog.Failed("m", "")), `{"turn":6,"reason":{"kind":"error","error":{"message":"m","code":""}}}`},
		{"user/message", sessionlog.NewUserMessage("u1", sessionlog.TextPart("list <files> & \u2028 go\n")),
			"{\"content\":[{\"type\":\"text\",\"text\":\"list <files> & \u2028 go\\n\"}],\"source\":{\"kind\":\"user\"},\"role\":\"user\",\"id\":\"u1\"}"},
		{"user/message several parts", sessionlog.NewUserMessage("u2", sessionlog.TextPart("a"), sessionlog.RawPart(rawImage)),
			`{"content":[{"type":"text","text":"a"},` + string(rawImage) + `],"source":{"kind":"user"},"role":"user","id":"u2"}`},
		{"user/message compaction summary", sessionlog.UserMessage{
			Content: []sessionlog.ContentPart{sessionlog.TextPart("Summary of the earlier conversation (compacted):\n\nS")},
			Source:  sessionlog.CompactionSource(), ID: "u3"},
			`{"content":[{"type":"text","text":"Summary of the earlier conversation (compacted):\n\nS"}],"source":{"kind":"compaction"},"role":"user","id":"u3"}`},
		{"user message without source or id", sessionlog.UserMessage{Content: []sessionlog.ContentPart{sessionlog.TextPart("Summarize.")}},
			`{"content":[{"type":"text","text":"Summarize."}],"role":"user"}`},
		{"user/message no parts", sessionlog.NewUserMessage("u4"), `{"content":[],"source":{"kind":"user"},"role":"user","id":"u4"}`},
		{"user/message dsh source", sessionlog.UserMessage{
			Content: []sessionlog.ContentPart{sessionlog.TextPart("i")},
			Source: sessionlog.MessageSource{Kind: "plugin", Extra: []sessionlog.Member{
				{Key: "plugin", Value: json.RawMessage(`"reminders"`)}, {Key: "form", Value: json.RawMessage(`"sections"`)}}},
			ID: "u5"},
			`{"content":[{"type":"text","text":"i"}],"source":{"kind":"plugin","plugin":"reminders","form":"sections"},"role":"user","id":"u5"}`},
		{"assistant/message with usage", withUsage,
			`{"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"reasoning","text":"think"},{"type":"text","text":"ok"},` +
				`{"type":"tool-call","id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"},"id":"a1"},` +
				`"usage":{"inputTokens":10,"outputTokens":2}}`},
		{"assistant/message interrupted", interrupted,
			`{"turn":3,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"partial"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"},"id":"a2"},"interrupted":true}`},
		{"tool/result", sessionlog.NewToolResult(1, 2, "c1", "one.txt\ntwo.txt\n", false, "r1"),
			`{"turn":1,"step":2,"message":{"source":{"kind":"tool","callId":"c1"},"content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"one.txt\ntwo.txt\n"}],"isError":false}],"role":"user","id":"r1"}}`},
		{"tool/result error", sessionlog.NewToolResult(1, 2, "c2", "denied", true, "r2"),
			`{"turn":1,"step":2,"message":{"source":{"kind":"tool","callId":"c2"},"content":[{"type":"tool-result","toolCallId":"c2","content":[{"type":"text","text":"denied"}],"isError":true}],"role":"user","id":"r2"}}`},
		{"tool/result repaired", sessionlog.RepairedToolResult(2, 1, "c3", "lost", sessionlog.ToolOutcomeUnknown, "interrupted-tool-result-c3-9"),
			`{"turn":2,"step":1,"message":{"role":"user","content":[{"type":"tool-result","toolCallId":"c3","content":[{"type":"text","text":"lost"}],"isError":true}],"source":{"kind":"tool","callId":"c3"},"id":"interrupted-tool-result-c3-9"},"error":{"code":"TOOL_OUTCOME_UNKNOWN"}}`},
		{"tool/result meta and named error", sessionlog.ToolResultData{Turn: 1, Step: 1,
			Message: sessionlog.ToolResultMessage{Source: sessionlog.ToolSource("c4"), Content: []sessionlog.ContentPart{sessionlog.ToolResultPart("c4", "no such file", true)}, ID: "r4"},
			Meta:    json.RawMessage(`{"diffs":[]}`), Error: &sessionlog.ToolResultError{Name: "FsError", Code: "FS_NOT_FOUND"}},
			`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c4"},"content":[{"type":"tool-result","toolCallId":"c4","content":[{"type":"text","text":"no such file"}],"isError":true}],"role":"user","id":"r4"},"meta":{"diffs":[]},"error":{"name":"FsError","code":"FS_NOT_FOUND"}}`},
		{"tool/call", sessionlog.ToolCallData{Turn: 1, Step: 1, CallID: "c1", Name: "bash", Arguments: `{"command":"echo \"<hi>\""}`},
			`{"turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{\"command\":\"echo \\\"<hi>\\\"\"}"}`},
		{"assistant/chunk", sessionlog.ChunkData{Turn: 1, Step: 1, Chunk: json.RawMessage(`{"type":"text-delta","index":0,"text":"hi"}`)},
			`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"hi"}}`},
		{"request/context", sessionlog.RequestContextData{Provider: "deepseek", Model: "deepseek-chat"}, `{"provider":"deepseek","model":"deepseek-chat"}`},
		{"request/context window", sessionlog.RequestContextData{Provider: "p", Model: "m", ContextWindow: 128000}, `{"provider":"p","model":"m","contextWindow":128000}`},
		{"sandbox/mode", sessionlog.SandboxModeData{Mode: "read-only", Source: "config"}, `{"mode":"read-only","source":"config"}`},
		{"sandbox/mode no source", sessionlog.SandboxModeData{Mode: "workspace-write"}, `{"mode":"workspace-write"}`},
		{"approval/policy", sessionlog.ApprovalPolicyData{Policy: "on-request", Source: "config"}, `{"policy":"on-request","source":"config"}`},
		{"llm/retry", sessionlog.LLMRetryData{Turn: 1, Step: 2, Provider: "deepseek", Retry: 1, MaxRetries: 2, DelayMs: 500,
			Failure: sessionlog.ReasonError{Message: "HTTP 500", Code: "SERVER"}},
			`{"turn":1,"step":2,"provider":"deepseek","retry":1,"maxRetries":2,"delayMs":500,"failure":{"message":"HTTP 500","code":"SERVER"}}`},
		{"llm/retry dsh", sessionlog.LLMRetryData{RetryID: "r-1", Turn: 1, Step: 1, Provider: "p", Mode: "normal", PolicyKey: json.RawMessage(`["normal",2]`),
			Retry: 1, MaxRetries: 2, DelayMs: 0, Failure: sessionlog.ReasonError{Message: "empty", Code: "EMPTY_RESPONSE"}},
			`{"retryId":"r-1","turn":1,"step":1,"provider":"p","mode":"normal","policyKey":["normal",2],"retry":1,"maxRetries":2,"delayMs":0,"failure":{"message":"empty","code":"EMPTY_RESPONSE"}}`},
		{"compaction/start", sessionlog.CompactionStartData{Turn: 3, Step: 0, Reason: "manual", Start: 4, End: 33, Messages: 4},
			`{"turn":3,"step":0,"reason":"manual","start":4,"end":33,"messages":4}`},
		{"compaction/summary", sessionlog.CompactionSummaryData{Provider: "deepseek", Model: "standin", MaxTokens: 4096,
			RawOutput: json.RawMessage(`[{"type":"text","text":"S"}]`), Usage: json.RawMessage(`{"inputTokens":0}`), LLMStreamCall: true},
			`{"provider":"deepseek","model":"standin","maxTokens":4096,"rawOutput":[{"type":"text","text":"S"}],"usage":{"inputTokens":0},"llmStreamCall":true}`},
		{"compaction/summary no usage", sessionlog.CompactionSummaryData{Provider: "p", Model: "m", MaxTokens: 1, RawOutput: json.RawMessage(`[]`), LLMStreamCall: true},
			`{"provider":"p","model":"m","maxTokens":1,"rawOutput":[],"llmStreamCall":true}`},
		{"compaction/end ok", sessionlog.CompactionDone(3, 0), `{"turn":3,"step":0,"ok":true}`},
		{"compaction/end failed", sessionlog.CompactionFailed(3, 0, "the summary call returned no text"),
			`{"turn":3,"step":0,"ok":false,"error":"the summary call returned no text"}`},
		{"request/header", sessionlog.RequestHeaderData{Header: json.RawMessage(`{"config":{"provider":"p"},"system":"","tools":[]}`), Reason: sessionlog.ReasonInitial},
			`{"header":{"config":{"provider":"p"}},"reason":"initial"}`},
		{"request/header dsh member", sessionlog.RequestHeaderData{
			Header: json.RawMessage(`{"config":{"provider":"p"},"adapterDefaults":{"maxTokens":true},"system":"S <x>","tools":"{{tools}}"}`), Reason: sessionlog.ReasonResume},
			`{"header":{"config":{"provider":"p"},"adapterDefaults":{"maxTokens":true},"system":"S <x>","tools":"{{tools}}"},"reason":"resume"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.AppendJSON([]byte("prefix:"))
			if string(got) != "prefix:"+tt.want {
				t.Fatalf("AppendJSON:\ngot  %s\nwant prefix:%s", got, tt.want)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Fatalf("not valid JSON: %s", got)
			}
			// What a constructor writes decodes and re-encodes to itself.
			if typ := strings.Fields(tt.name)[0]; strings.Contains(typ, "/") {
				again, ok, err := sessionlog.ReencodePayload(&sessionlog.Event{Type: typ, Data: json.RawMessage(tt.want)})
				if !ok || err != nil || string(again) != tt.want {
					t.Fatalf("ReencodePayload(%s) = %s (%v, %v)", typ, again, ok, err)
				}
			}
		})
	}
}

// TestPayloadMarshalJSON: json.Marshal of a message or part gives its
// members (the same bytes as AppendJSON when nothing needs HTML escaping).
func TestPayloadMarshalJSON(t *testing.T) {
	for _, v := range []sessionlog.Payload{
		sessionlog.NewUserMessage("u", sessionlog.TextPart("x")),
		sessionlog.NewAssistantMessage(1, 1, "p", "m", "a", sessionlog.ToolCallPart("c", "bash", "{}")).Message,
		sessionlog.NewToolResult(1, 1, "c", "out", true, "r").Message,
		sessionlog.RepairedToolResult(1, 1, "c", "out", sessionlog.ToolNotStarted, "r").Message,
		sessionlog.ReasoningPart("r"),
		sessionlog.ModelSource("p", "m"),
	} {
		got, err := json.Marshal(v)
		if want := v.AppendJSON(nil); err != nil || !bytes.Equal(got, want) {
			t.Errorf("json.Marshal = %s (%v), want %s", got, err, want)
		}
	}
}

// TestPayloadStrings: every string goes through AppendString, so invalid
// UTF-8 becomes U+FFFD and only '"', '\\' and control characters are
// escaped, wherever the string sits.
func TestPayloadStrings(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    sessionlog.Payload
		want string
	}{
		{"invalid UTF-8 in a text part", sessionlog.NewUserMessage("u", sessionlog.TextPart("a\xffb\xc3")),
			"{\"content\":[{\"type\":\"text\",\"text\":\"a\uFFFDb\uFFFD\"}],\"source\":{\"kind\":\"user\"},\"role\":\"user\",\"id\":\"u\"}"},
		{"control characters in tool output", sessionlog.NewToolResult(1, 1, "c", "\x00\x1b[0m\t\r\b\f", false, "r"),
			`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"\u0000\u001b[0m\t\r\b\f"}],"isError":false}],"role":"user","id":"r"}}`},
		{"invalid UTF-8 in an id and a call id", sessionlog.ToolCallData{Turn: 1, Step: 1, CallID: "c\xfe", Name: "n\x80", Arguments: "{}"},
			"{\"turn\":1,\"step\":1,\"callId\":\"c\uFFFD\",\"name\":\"n\uFFFD\",\"arguments\":\"{}\"}"},
		{"html and line separators stay raw", sessionlog.TurnEnd(1, sessionlog.Failed("<&>\u2028\u2029", "X")),
			"{\"turn\":1,\"reason\":{\"kind\":\"error\",\"error\":{\"message\":\"<&>\u2028\u2029\",\"code\":\"X\"}}}"},
		{"escaped source key", sessionlog.UserMessage{Source: sessionlog.MessageSource{Kind: "k", Extra: []sessionlog.Member{{Key: "a\"b", Value: json.RawMessage(`1`)}}}},
			`{"content":[],"source":{"kind":"k","a\"b":1},"role":"user"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.p.AppendJSON(nil)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestContentPartDecode: a part with exactly the members of its type gets
// the typed fields; anything else stays verbatim.
func TestContentPartDecode(t *testing.T) {
	for _, tt := range []struct {
		in    string
		typed bool
	}{
		{`{"type":"text","text":"hi"}`, true},
		{`{"type":"reasoning","text":"hm"}`, true},
		{`{"type":"tool-call","id":"c","name":"bash","arguments":"{}"}`, true},
		{`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"x"}],"isError":false}`, true},
		{`{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","width":1,"height":1,"bytes":2}}`, true},
		{`{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":2,"width":1,"height":1}}`, false},
		{`{"type":"reasoning","text":"hm","signature":"sig"}`, false},
		{`{"text":"hi","type":"text"}`, false},
		{`{"type":"text","text":5}`, false},
		{`{"type":"text","text":null}`, false},
		{`{"type":"tool-call","id":"c","name":"bash","arguments":{}}`, false},
		{`{"type":"tool-result","toolCallId":"c","content":null,"isError":false}`, false},
		{`{"type":"tool-result","toolCallId":"c","content":[],"isError":"no"}`, false},
		{`{"type":"text","text":"a","text":"b"}`, false},
		{`{"type":"text"}`, false},
		{`null`, false},
		{`"text"`, false},
	} {
		var p sessionlog.ContentPart
		if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if typed := p.Raw == nil; typed != tt.typed {
			t.Errorf("%s: typed = %v, want %v (%+v)", tt.in, typed, tt.typed, p)
		}
		if got := string(p.AppendJSON(nil)); got != tt.in {
			t.Errorf("%s re-encodes as %s", tt.in, got)
		}
	}
	// A raw part nested in a tool result survives too.
	in := `{"type":"tool-result","toolCallId":"c","content":[{"type":"image","data":"AA=="}],"isError":false}`
	var p sessionlog.ContentPart
	if err := json.Unmarshal([]byte(in), &p); err != nil || p.Raw != nil || len(p.Content) != 1 || p.Content[0].Raw == nil {
		t.Fatalf("%s decodes as %+v (%v)", in, p, err)
	}
	if got := string(p.AppendJSON(nil)); got != in {
		t.Fatalf("re-encodes as %s", got)
	}
}

// TestPayloadDecode: the types decode with DecodeData, order-dependent
// and open-ended members included, and re-encode to the same bytes.
func TestPayloadDecode(t *testing.T) {
	ev := func(typ, data string) *sessionlog.Event {
		return &sessionlog.Event{Type: typ, Data: json.RawMessage(data)}
	}
	t.Run("tool/result layouts", func(t *testing.T) {
		for _, tt := range []struct {
			data     string
			repaired bool
		}{
			{string(sessionlog.NewToolResult(1, 1, "c", "x", false, "r").AppendJSON(nil)), false},
			{string(sessionlog.RepairedToolResult(1, 1, "c", "x", sessionlog.ToolNotStarted, "r").AppendJSON(nil)), true},
		} {
			d, err := sessionlog.DecodeData[sessionlog.ToolResultData](ev(sessionlog.TypeToolResult, tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if d.Message.Repaired != tt.repaired || d.Message.Source.CallID != "c" || len(d.Message.Content) != 1 || d.Message.Content[0].ToolCallID != "c" {
				t.Errorf("%s decodes as %+v", tt.data, d)
			}
			if got := string(d.AppendJSON(nil)); got != tt.data {
				t.Errorf("re-encodes as %s\nwant %s", got, tt.data)
			}
		}
	})
	t.Run("source extras", func(t *testing.T) {
		data := `{"content":[{"type":"text","text":"x"}],"source":{"kind":"agent-instructions","form":"delta","baseline":false,"changes":[{"action":"add","path":"AGENTS.md"}]},"role":"user","id":"m"}`
		m, err := sessionlog.DecodeData[sessionlog.UserMessage](ev(sessionlog.TypeUserMessage, data))
		if err != nil {
			t.Fatal(err)
		}
		want := sessionlog.MessageSource{Kind: "agent-instructions", Extra: []sessionlog.Member{
			{Key: "form", Value: json.RawMessage(`"delta"`)},
			{Key: "baseline", Value: json.RawMessage(`false`)},
			{Key: "changes", Value: json.RawMessage(`[{"action":"add","path":"AGENTS.md"}]`)},
		}}
		if !reflect.DeepEqual(m.Source, want) {
			t.Errorf("source = %+v, want %+v", m.Source, want)
		}
		if got := string(m.AppendJSON(nil)); got != data {
			t.Errorf("re-encodes as %s", got)
		}
	})
	t.Run("turn/end reasons", func(t *testing.T) {
		for _, r := range []sessionlog.TurnEndReason{sessionlog.Completed(), sessionlog.Aborted(sessionlog.CauseUser), sessionlog.Failed("m", "C")} {
			data := sessionlog.TurnEnd(7, r).AppendJSON(nil)
			d, err := sessionlog.DecodeData[sessionlog.TurnEndData](ev(sessionlog.TypeTurnEnd, string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d, sessionlog.TurnEnd(7, r)) {
				t.Errorf("%s decodes as %+v", data, d)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, tt := range []struct{ typ, data, want string }{
			{sessionlog.TypeUserMessage, `{"content":[],"source":{"kind":5}}`, "kind is not a string"},
			{sessionlog.TypeUserMessage, `{"content":[],"source":"user"}`, "message source"},
			{sessionlog.TypeTurnStart, `{"turn":"one"}`, "cannot unmarshal"},
			{sessionlog.TypeRequestHeader, `{"header":5,"reason":"initial"}`, "request header"},
		} {
			_, ok, err := sessionlog.ReencodePayload(ev(tt.typ, tt.data))
			if !ok || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %s: ok %v, err %v; want an error containing %q", tt.typ, tt.data, ok, err, tt.want)
			}
		}
	})
}

// TestReencodePayloadCanonicalizes: a payload not written canonically comes
// back in canonical form, so the round-trip test would catch one.
func TestReencodePayloadCanonicalizes(t *testing.T) {
	for _, tt := range []struct{ typ, in, want string }{
		{sessionlog.TypeStepStart, `{"step":2,"turn":1}`, `{"turn":1,"step":2}`},
		{sessionlog.TypeUserMessage, `{"role":"user","content":[{"type":"text","text":"caf\u00e9 \/"}],"source":{"kind":"user"},"id":"m"}`,
			`{"content":[{"type":"text","text":"café /"}],"source":{"kind":"user"},"role":"user","id":"m"}`},
		{sessionlog.TypeSandboxMode, `{"mode":"read-only","source":""}`, `{"mode":"read-only"}`},
		{sessionlog.TypeAssistantMessage, `{"turn":1,"step":1,"message":{"role":"assistant","content":[]},"interrupted":false}`,
			`{"turn":1,"step":1,"message":{"role":"assistant","content":[]}}`},
	} {
		got, ok, err := sessionlog.ReencodePayload(&sessionlog.Event{Type: tt.typ, Data: json.RawMessage(tt.in)})
		if !ok || err != nil || string(got) != tt.want {
			t.Errorf("%s %s → %s (%v, %v), want %s", tt.typ, tt.in, got, ok, err, tt.want)
		}
	}
	if _, ok, err := sessionlog.ReencodePayload(&sessionlog.Event{Type: "agent/inbox/spliced", Data: json.RawMessage(`{}`)}); ok || err != nil {
		t.Errorf("a type reel does not know: ok %v, err %v", ok, err)
	}
}

// TestRepairMatchesPayloads: the closers Repair writes are exactly what the
// payload constructors write, so Repair can be built on them.
func TestRepairMatchesPayloads(t *testing.T) {
	var events []sessionlog.Event
	add := func(typ string, p sessionlog.Payload) {
		events = append(events, sessionlog.Event{Type: typ, Seq: len(events), Time: 5, Data: p.AppendJSON(nil)})
	}
	add(sessionlog.TypeTurnStart, sessionlog.TurnData{Turn: 2})
	add(sessionlog.TypeStepStart, sessionlog.StepData{Turn: 2, Step: 1})
	add(sessionlog.TypeToolCall, sessionlog.ToolCallData{Turn: 2, Step: 1, CallID: "call-1", Name: "bash", Arguments: "{}"})
	out := sessionlog.Repair(events)
	if len(out) != 3 {
		t.Fatalf("Repair gave %d events, want 3", len(out))
	}
	d, err := sessionlog.DecodeData[sessionlog.ToolResultData](&out[0])
	if err != nil {
		t.Fatal(err)
	}
	text := d.Message.Content[0].Content[0].Text
	want := sessionlog.RepairedToolResult(2, 1, "call-1", text, sessionlog.ToolOutcomeUnknown, "interrupted-tool-result-call-1-3")
	for _, c := range []struct {
		name string
		got  []byte
		want sessionlog.Payload
	}{
		{"tool/result", out[0].Data, want},
		{"step/end", out[1].Data, sessionlog.StepData{Turn: 2, Step: 1}},
		{"turn/end", out[2].Data, sessionlog.TurnEnd(2, sessionlog.EndedWith(sessionlog.EndInterrupted))},
	} {
		if w := c.want.AppendJSON(nil); !bytes.Equal(c.got, w) {
			t.Errorf("%s: Repair wrote\n%s\nthe constructor writes\n%s", c.name, c.got, w)
		}
	}
}

func ExampleNewToolResult() {
	d := sessionlog.NewToolResult(1, 2, "call-1", "one.txt\ntwo.txt\n", false, "msg-7")
	fmt.Printf("%s\n", d.AppendJSON(nil))
	// Output:
	// {"turn":1,"step":2,"message":{"source":{"kind":"tool","callId":"call-1"},"content":[{"type":"tool-result","toolCallId":"call-1","content":[{"type":"text","text":"one.txt\ntwo.txt\n"}],"isError":false}],"role":"user","id":"msg-7"}}
}

func ExampleAborted() {
	fmt.Printf("%s\n", sessionlog.TurnEnd(3, sessionlog.Aborted(sessionlog.CauseUser)).AppendJSON(nil))
	// Output:
	// {"turn":3,"reason":{"kind":"aborted","reason":{"kind":"user"}}}
}

// TestHeaderSnapshotIsHeaderData: the payload the engine writes for a
// request/header is HeaderData's bytes, and they round-trip through
// RequestHeaderData's encoder unchanged.
func TestHeaderSnapshotIsHeaderData(t *testing.T) {
	h := sessionlog.RequestHeader{Config: []byte(`{"provider":"p","model":"m"}`), System: "sys <&>", Tools: []byte(`[{"name":"t"}]`)}
	got := h.Snapshot(sessionlog.ReasonChange).AppendJSON(nil)
	if want := sessionlog.HeaderData(h, sessionlog.ReasonChange); string(got) != string(want) {
		t.Fatalf("Snapshot %s, want %s", got, want)
	}
	e := sessionlog.Event{Type: sessionlog.TypeRequestHeader, Data: got}
	re, ok, err := sessionlog.ReencodePayload(&e)
	if err != nil || !ok || string(re) != string(got) {
		t.Fatalf("re-encoded %s (%v, %v), want %s", re, ok, err, got)
	}
}
