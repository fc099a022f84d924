package acpserver

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// quotings are ways a log may hold s as a JSON string: encoding/json's,
// and with each character reel may find escaped otherwise (\/, or a
// printable character as \u00XX, which the plain frames leave alone).
func quotings(s string) [][]byte {
	std, _ := json.Marshal(s)
	out := [][]byte{std, []byte(strings.ReplaceAll(string(std), "/", `\/`))}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteString(`\` + string(c))
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20:
			b.WriteString(`\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&0xF]))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return append(out, []byte(b.String()))
}

// checkRetellFrames fails when a frame written from the JSON string quoted
// differs from appendUpdateFrame's of the update with the decoded string
// (itself held to the SDK's encoding by TestUpdateFrameBytesAreTheSDKs),
// or when one is written from a string the re-escaping does not take.
func checkRetellFrames(t *testing.T, quoted []byte) {
	t.Helper()
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return
	}
	_, plain := appendReescaped(nil, quoted)
	// What the re-escaping takes: the strings sessionlog's plain reader
	// hands on (ASCII, no \u escape).
	bare := len(quoted) >= 2 && quoted[0] == '"' && quoted[len(quoted)-1] == '"' // no whitespace around
	if want := bare && sessionlog.Unquote(quoted) == s && !hasUEscape(quoted) && isASCII(quoted); plain != want {
		t.Fatalf("%q: re-escaped %v, want %v", quoted, plain, want)
	}
	for _, c := range []struct {
		kind   string
		update acp.SessionUpdate
	}{
		{"user_message_chunk", acp.UpdateUserMessageText(s)},
		{"agent_message_chunk", acp.UpdateAgentMessageText(s)},
		{"agent_thought_chunk", acp.UpdateAgentThoughtText(s)},
	} {
		for _, id := range []*string{nil, acp.Ptr("m12"), acp.Ptr(s)} {
			up := c.update
			switch {
			case up.UserMessageChunk != nil:
				up.UserMessageChunk.MessageId = id
			case up.AgentMessageChunk != nil:
				up.AgentMessageChunk.MessageId = id
			default:
				up.AgentThoughtChunk.MessageId = id
			}
			prefix := []byte("before\n")
			got, ok := appendTextFrame(bytes.Clone(prefix), "sess<&>", c.kind, deref(id), id != nil, quoted)
			if ok != plain || (!ok && string(got) != string(prefix)) {
				t.Fatalf("%q %s: written %v (%q)", quoted, c.kind, ok, got)
			}
			if !ok {
				continue
			}
			want, err := appendUpdateFrame(bytes.Clone(prefix), "sess<&>", up)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%q %s:\n got %s\nwant %s (%v)", quoted, c.kind, got, want, err)
			}
		}
	}
	for _, isError := range []bool{false, true} {
		for _, texts := range [][][]byte{{quoted}, {quoted, []byte(`"-\n"`), quoted}, {}, {nil, quoted}} {
			var text string
			for _, t := range texts {
				text += sessionlog.Unquote(t)
			}
			prefix := []byte("x")
			got, ok := appendToolEndFrame(bytes.Clone(prefix), "s", quoted, texts, isError)
			if ok != plain || (!ok && string(got) != string(prefix)) {
				t.Fatalf("%q: tool end written %v (%q)", quoted, ok, got)
			}
			if !ok {
				continue
			}
			want, err := appendUpdateFrame(bytes.Clone(prefix), "s", toolEndUpdate(s, tools.Result{Text: text, IsError: isError}))
			if err != nil || string(got) != string(want) {
				t.Fatalf("%q tool end:\n got %s\nwant %s (%v)", quoted, got, want, err)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// hasUEscape reports whether the JSON string quoted holds a \u escape.
func hasUEscape(quoted []byte) bool {
	for i := 0; i+1 < len(quoted); i++ {
		if quoted[i] == '\\' {
			if quoted[i+1] == 'u' {
				return true
			}
			i++
		}
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// retellStrings are texts at the edges of the re-escaping.
var retellStrings = []string{"", "plain", "<a & b>", "line\nnext\t\"q\"\\ \r\b\f", "a/b", "\x00\x01\x1f\x7f", "bad \xff\xfe utf8", "\u2028\u2029", "emoji 🎬 é", "\ufffd", "{\"file_path\":\"f.txt\"}"}

// TestRetellFramesAreUpdateFrames holds the frames written straight from
// a log's JSON strings (a text chunk of each kind, a finished call's
// tool_call_update) to appendUpdateFrame's of the same updates, over odd
// texts in every quoting, quotings that are not strings, and random
// texts; and checks that a plain text and a plain result are written.
//
// 4,000 random texts (the first of the 20,000 of REEL_SOAK=1) cover every
// statement of the package the 20,000 cover (1,000 do too); under -race
// -cover, where every block of the frame writers is an atomic coverage
// count, the 20,000 took 24 s.
func TestRetellFramesAreUpdateFrames(t *testing.T) {
	for _, s := range retellStrings {
		for _, q := range quotings(s) {
			checkRetellFrames(t, q)
		}
	}
	for _, q := range []string{`"\u0041"`, `"\ud83c\udfac"`, `"a\"`, `"a`, `a"`, `"`, ``, `"a"b"`, "\"a\nb\"", `"\x"`} {
		if _, ok := appendReescaped(nil, []byte(q)); ok {
			t.Errorf("%q re-escaped", q)
		}
	}
	for _, q := range []string{`"ONE"`, `"a \"b\" <c> \/ \n"`} {
		if _, ok := appendTextFrame(nil, "s", "agent_message_chunk", "m1", true, []byte(q)); !ok {
			t.Errorf("%s: not written", q)
		}
		if _, ok := appendToolEndFrame(nil, "s", []byte(`"call_1"`), [][]byte{[]byte(q)}, false); !ok {
			t.Errorf("%s: tool end not written", q)
		}
	}
	r := rand.New(rand.NewPCG(36, 7))
	alphabet := []string{"a", "<", ">", "&", "\"", "\\", "/", "\n", "\t", "\b", "\f", "\r", "\x01", "\x7f", "é", " "}
	n := 4000
	if os.Getenv("REEL_SOAK") == "1" {
		n = 20000
	}
	for range n {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		for _, q := range quotings(sb.String()) {
			checkRetellFrames(t, q)
		}
	}
}

// FuzzRetellFrames holds the frames written from a JSON string to
// appendUpdateFrame's on any input.
func FuzzRetellFrames(f *testing.F) {
	for _, s := range retellStrings {
		for _, q := range quotings(s) {
			f.Add(q)
		}
	}
	f.Fuzz(func(t *testing.T, quoted []byte) { checkRetellFrames(t, quoted) })
}

// TestPlainRetellOnlyInBatches checks that updates take a plain text or
// result only while a history is being written in a batch.
func TestPlainRetellOnlyInBatches(t *testing.T) {
	var out bytes.Buffer
	srv := &Server{out: &lockedWriter{w: &out}}
	var pr agent.PlainRetell = updates{srv: srv, session: "s"}
	if pr.RetellText(t.Context(), agent.RetellAnswer, []byte(`"x"`)) || pr.RetellToolEnd(t.Context(), []byte(`"c"`), nil, false) {
		t.Fatal("taken outside a batch")
	}
	batch := &frameBatch{}
	pr = updates{srv: srv, session: "s", batch: batch}
	if !pr.RetellText(t.Context(), agent.RetellAnswer, []byte(`"x"`)) || !pr.RetellToolEnd(t.Context(), []byte(`"c"`), nil, false) {
		t.Fatal("not taken in a batch")
	}
	if pr.RetellText(t.Context(), "other", []byte(`"x"`)) {
		t.Fatal("an unknown kind taken")
	}
	if n := bytes.Count(batch.buf, []byte("\n")); n != 2 {
		t.Fatalf("batch holds %d frames, want 2: %s", n, batch.buf)
	}
}

// checkToolStart fails when the tool_call frame written from c differs
// from appendUpdateFrame's of toolStartUpdate(c), or is not written for a
// call with an input of plain strings.
func checkToolStart(t *testing.T, c agent.ToolCall) {
	t.Helper()
	prefix := []byte("x")
	got, ok := appendToolStartFrame(bytes.Clone(prefix), "s<1>", &c)
	if !ok {
		if string(got) != string(prefix) {
			t.Fatalf("%+v: not written, but b changed: %q", c, got)
		}
		if plainSortedObject(c.Arguments) && !hugeLine(c.Locations) {
			t.Fatalf("%+v: not written", c)
		}
		return
	}
	want, err := appendUpdateFrame(bytes.Clone(prefix), "s<1>", toolStartUpdate(c))
	if err != nil || string(got) != string(want) {
		t.Fatalf("%+v:\n got %s\nwant %s (%v)", c, got, want, err)
	}
}

func hugeLine(locs []tools.Location) bool {
	for _, l := range locs {
		if l.Line > 1<<53 {
			return true
		}
	}
	return false
}

// toolStartArgs are inputs at the edges of the ones written as they are.
var toolStartArgs = []string{`{"file_path":"f.txt"}`, `{}`, `{"a":"1","b":"2","c":"x y"}`, `{"b":"2","a":"1"}`, `{"a":"1","a":"2"}`,
	`{"a":"x<y"}`, `{"a":"x\u0041"}`, `{"a":1}`, `{"a": "1"}`, `"s"`, ``, `null`, `{"command":"ls","description":"list"}`}

// TestToolStartFramesAreUpdateFrames holds the tool_call frames written
// from a call to appendUpdateFrame's of toolStartUpdate (itself held to
// the SDK's bytes), over odd titles, ids, kinds, paths, lines and inputs.
func TestToolStartFramesAreUpdateFrames(t *testing.T) {
	for _, s := range retellStrings {
		for _, args := range toolStartArgs {
			for _, locs := range [][]tools.Location{nil, {}, {{Path: "/a/" + s}}, {{Path: s, Line: 3}, {Path: "/b", Line: 0}, {Path: "/c", Line: -2}}, {{Path: "/x", Line: 1<<53 + 1}}} {
				for _, kind := range []tools.Kind{"", tools.Kind("read"), tools.Kind(s)} {
					checkToolStart(t, agent.ToolCall{ID: "call " + s, Name: "read", Title: "Read " + s, Kind: kind, Locations: locs, Arguments: json.RawMessage(args)})
				}
			}
		}
	}
}

// FuzzToolStartFrames holds the tool_call frames written from a call to
// appendUpdateFrame's on any title, id, path, line and input.
func FuzzToolStartFrames(f *testing.F) {
	for i, s := range retellStrings {
		f.Add(s, "call_1", "/p/"+s, 3, toolStartArgs[i%len(toolStartArgs)])
	}
	f.Fuzz(func(t *testing.T, title, id, path string, line int, args string) {
		checkToolStart(t, agent.ToolCall{ID: id, Title: title, Kind: "edit", Locations: []tools.Location{{Path: path, Line: line}}, Arguments: json.RawMessage(args)})
	})
}
