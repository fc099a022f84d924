package acpserver

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
)

// sdkFrame is the session/update frame the SDK writes for u: its
// SessionNotification marshalled, then the whole message around it.
func sdkFrame(session string, u acp.SessionUpdate) ([]byte, error) {
	params, err := json.Marshal(acp.SessionNotification{SessionId: acp.SessionId(session), Update: u})
	if err != nil {
		return nil, err
	}
	msg, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", "session/update", params})
	return append(msg, '\n'), err
}

// TestUpdateFrameBytesAreTheSDKs checks the frames reel encodes itself
// against the SDK's encoding of the same update, byte for byte: every
// update the adapter sends, with strings that need escaping, invalid
// UTF-8, raw inputs whose keys and numbers the SDK rewrites, and updates
// reel does not encode directly (wrapped after one marshal).
func TestUpdateFrameBytesAreTheSDKs(t *testing.T) {
	odd := []string{"", "plain", "<a & b>", "line\nnext\t\"q\"\\ \r\b\f", "\x00\x01\x1f\x7f", "bad \xff\xfe utf8", "\u2028\u2029", "emoji 🎬 é", "\ufffd", "\xe2\x80"}
	old := "old <text>"
	line, zero := 42, 0
	var cases []acp.SessionUpdate
	for _, s := range odd {
		cases = append(cases,
			acp.UpdateUserMessageText(s), acp.UpdateAgentMessageText(s), acp.UpdateAgentThoughtText(s),
			acp.UpdateToolCall(acp.ToolCallId(s), acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
				acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(s)), acp.ToolDiffContent("/p/"+s, s, old), acp.ToolDiffContent(s, s)})),
			acp.StartToolCall(acp.ToolCallId("c"+s), s, acp.WithStartKind(acp.ToolKindEdit), acp.WithStartStatus(acp.ToolCallStatusPending),
				acp.WithStartLocations([]acp.ToolCallLocation{{Path: s}, {Path: "/x", Line: &line}, {Path: "/y", Line: &zero}}),
				acp.WithStartRawInput(json.RawMessage(`{"z":`+string(mustJSON(t, s))+`,"a":[1.0,2e3,12345678901234567890,-0.5],"m":{"y":true,"b":null}}`))),
		)
	}
	cases = append(cases,
		acp.StartToolCall("id", "title"),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`"just a string"`))),
		// Inputs at the edges of the ones written as they are.
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"file_path":"f.txt"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1","b":"2","c":"x y"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"b":"2","a":"1"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1","a":"2"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1","B":"2"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"x<y"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"x\u0041"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"x\ny"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"é"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":1}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a": "1"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1",}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1"}x`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a":"1""b":"2"}`))),
		acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{"a"}`))),
		acp.UpdateToolCall("id"),
		acp.UpdateToolCall("id", acp.WithUpdateTitle("titled")),
		// Raw outputs reel does not send are wrapped after one marshal.
		acp.UpdateToolCall("id", acp.WithUpdateRawOutput(map[string]any{"output": "x", "isError": false})),
		acp.UpdateToolCall("id", acp.WithUpdateRawOutput(map[string]any{"output": 1})),
		acp.UpdateToolCall("id", acp.WithUpdateRawOutput(map[string]any{"output": "x", "other": "y"})),
		acp.UpdateToolCall("id", acp.WithUpdateRawOutput(map[string]any{"output": "x", "isError": true, "z": 1})),
		acp.UpdateToolCall("id", acp.WithUpdateRawOutput("text")),
		acp.UpdateToolCall("id", acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef("term")})),
		acp.UpdatePlan(acp.PlanEntry{Content: "do <it>", Priority: "high", Status: "pending"}),
		acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{SessionUpdate: "usage_update", Used: 10, Size: 100}},
		acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.TextBlock("x"), MessageId: acp.Ptr("m1")}},
		acp.SessionUpdate{AgentMessageChunk: &acp.SessionUpdateAgentMessageChunk{Content: acp.ImageBlock("aGk=", "image/png")}},
		titleUpdate(agent.Title{Text: "a <title>"}),
	)
	// What the adapter's own methods send.
	for _, s := range odd {
		cases = append(cases,
			toolStartUpdate(agent.ToolCall{ID: s, Title: s, Kind: "read", Locations: []tools.Location{{Path: s, Line: 3}}, Arguments: json.RawMessage(`{"path":"x"}`)}),
			toolStartUpdate(agent.ToolCall{ID: s, Title: s}),
			toolEndUpdate(s, tools.Result{Text: s, IsError: true}),
			toolEndUpdate(s, tools.Result{Text: s, Diff: &tools.Diff{Path: s, NewText: s, OldText: &old}}),
			toolEndUpdate(s, tools.Result{Text: s, Diff: &tools.Diff{Path: s, NewText: s}}),
			planUpdate([]tools.Todo{{Content: s, Status: "pending"}}),
		)
	}
	// Random strings over the bytes that need care.
	r := rand.New(rand.NewPCG(31, 5000))
	alphabet := []string{"a", " ", "\"", "\\", "<", ">", "&", "\n", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "é", "\u2028", "\u2029", "🎬", "\ufffd", "\xf0\x9f"}
	for range 500 {
		var sb bytes.Buffer
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		cases = append(cases, acp.UpdateAgentMessageText(s),
			acp.UpdateToolCall(acp.ToolCallId(s), acp.WithUpdateStatus(acp.ToolCallStatusFailed), acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(s))})),
			toolEndUpdate(s, tools.Result{Text: s, IsError: r.IntN(2) == 0}))
	}
	for i, u := range cases {
		for _, session := range []string{"0b9c2a7e-session", "odd \xff <id>"} {
			want, werr := sdkFrame(session, u)
			got, gerr := appendUpdateFrame([]byte("kept"), session, u)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("case %d: SDK error %v, reel error %v", i, werr, gerr)
			}
			if werr != nil {
				continue
			}
			if !bytes.HasPrefix(got, []byte("kept")) || !bytes.Equal(got[4:], want) {
				t.Errorf("case %d: frame differs from the SDK's\n got: %q\nwant: %q", i, got, want)
			}
		}
	}
	// An input that is not JSON fails as it does in the SDK.
	if _, err := appendUpdateFrame(nil, "s", acp.StartToolCall("id", "t", acp.WithStartRawInput(json.RawMessage(`{`)))); err == nil {
		t.Error("a raw input that is not JSON was encoded")
	}
}

func mustJSON(t *testing.T, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlainSortedObjectIsItsEncoding checks random flat objects: whenever
// plainSortedObject says an input is its own encoding, decoding it into Go
// values and encoding them again (the SDK's map copy) gives it back.
func TestPlainSortedObjectIsItsEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 7))
	parts := []string{`"a"`, `"b"`, `"B"`, `"ab"`, `"a b"`, `"<"`, `"&"`, `"\u0041"`, `"\\"`, `"é"`, `""`, `:`, `,`, `1`, `null`, ` `, `{`, `}`}
	seen := 0
	for range 200000 {
		var sb bytes.Buffer
		sb.WriteString("{")
		for range r.IntN(10) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		sb.WriteString("}")
		raw := sb.Bytes()
		if !plainSortedObject(raw) {
			continue
		}
		seen++
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: taken as is, but json.Unmarshal: %v", raw, err)
		}
		enc, err := json.Marshal(v)
		if err != nil || !bytes.Equal(enc, raw) {
			t.Fatalf("%s: taken as is, but encodes as %s (%v)", raw, enc, err)
		}
	}
	if seen < 100 {
		t.Fatalf("only %d random objects were plain", seen)
	}
}
