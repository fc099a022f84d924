package sessionlog

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// flatParts lists m's parts as ValidMessageParts does: in document order,
// a part's content after it, each with the index of the part holding it.
func flatParts(ps []Part, in int, out []Part, ins []int) ([]Part, []int) {
	for _, p := range ps {
		at := len(out)
		out, ins = append(out, p), append(ins, in)
		out, ins = flatParts(p.Content, at, out, ins)
	}
	return out, ins
}

// checkMessageParts fails when ValidMessageParts reads valid data other
// than DecodeValidMessageData does (the type, text, call id and error
// flag of every part, where it stands, and the meta).
func checkMessageParts(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return
	}
	got, meta, ok := ValidMessageParts(raw, nil)
	if !ok {
		return
	}
	m, wmeta, err := DecodeValidMessageData(raw)
	if err != nil {
		t.Fatalf("%q: read by ValidMessageParts, DecodeValidMessageData: %v", raw, err)
	}
	if string(meta) != string(wmeta) || (meta == nil) != (wmeta == nil) {
		t.Fatalf("%q: meta %q, DecodeValidMessageData %q", raw, meta, wmeta)
	}
	want, ins := flatParts(m.Content, -1, nil, nil)
	if len(got) != len(want) {
		t.Fatalf("%q: %d parts, DecodeValidMessageData %d", raw, len(got), len(want))
	}
	for k, p := range got {
		w := want[k]
		if p.Type != w.Type || Unquote(p.Text) != w.Text || Unquote(p.ToolCallID) != w.ToolCallID || p.IsError != w.IsError || p.In != ins[k] {
			t.Fatalf("%q: part %d is %q %q %q %v in %d; DecodeValidMessageData %q %q %q %v in %d", raw, k,
				p.Type, Unquote(p.Text), Unquote(p.ToolCallID), p.IsError, p.In, w.Type, w.Text, w.ToolCallID, w.IsError, ins[k])
		}
	}
}

// checkPlainMessage fails when ValidMessage reads valid data other than
// DecodeMessage does (the parts as checkMessageParts compares them, and
// the source).
func checkPlainMessage(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return
	}
	got, source, ok := ValidMessage(raw, nil)
	if !ok {
		return
	}
	m, err := DecodeMessage(raw)
	if err != nil {
		t.Fatalf("%q: read by ValidMessage, DecodeMessage: %v", raw, err)
	}
	if string(source) != string(m.Source) || (source == nil) != (m.Source == nil) {
		t.Fatalf("%q: source %q, DecodeMessage %q", raw, source, m.Source)
	}
	want, ins := flatParts(m.Content, -1, nil, nil)
	if len(got) != len(want) {
		t.Fatalf("%q: %d parts, DecodeMessage %d", raw, len(got), len(want))
	}
	for k, p := range got {
		w := want[k]
		if p.Type != w.Type || Unquote(p.Text) != w.Text || Unquote(p.ToolCallID) != w.ToolCallID || p.IsError != w.IsError || p.In != ins[k] {
			t.Fatalf("%q: part %d is %q %q %q %v in %d; DecodeMessage %q %q %q %v in %d", raw, k,
				p.Type, Unquote(p.Text), Unquote(p.ToolCallID), p.IsError, p.In, w.Type, w.Text, w.ToolCallID, w.IsError, ins[k])
		}
	}
}

// messagePartsCases are assistant/message and tool/result data around
// every message case.
func messagePartsCases() []string {
	var cases []string
	for _, m := range messageCases {
		cases = append(cases, `{"turn":1,"step":1,"message":`+m+`,"usage":{"inputTokens":1}}`, `{"turn":1,"message":`+m+`,"meta":{"diffs":[]}}`,
			`{"meta":null,"message":`+m+`}`, `{"message":`+m+`,"Message":{"id":"x"}}`, ` { "MESSAGE" : `+m+` } `, m,
			`{"message":`+m+`,"message":{"role":"x","content":[]}}`, `{"meta":1,"message":`+m+`,"Meta":2}`, `{"message":`+m+`,"m\u0065ta":[]}`)
	}
	return cases
}

// TestValidMessagePartsIsDecodeValidMessageData holds ValidMessageParts to
// DecodeValidMessageData over the cases, their prefixes, texts with an
// escape at every offset and random messages, and checks that the
// engine's messages are read.
func TestValidMessagePartsIsDecodeValidMessageData(t *testing.T) {
	for _, s := range messagePartsCases() {
		for i := range len(s) + 1 {
			checkMessageParts(t, []byte(s[:i]))
			checkPlainMessage(t, []byte(s[:i]))
		}
	}
	for n := range 24 {
		for pos := range n {
			for _, odd := range []string{`\"`, `\\`, `\n`, `\/`, `\u0041`, `<&>`, "é"} {
				text := strings.Repeat("a", pos) + odd + strings.Repeat("b", n-pos)
				msg := `{"role":"assistant","content":[{"type":"text","text":"` + text + `"},{"type":"tool-result","toolCallId":"` + text + `","content":[{"type":"text","text":"` + text + `"}],"isError":true}],"source":{"kind":"` + text + `"}}`
				checkMessageParts(t, []byte(`{"message":`+msg+`}`))
				checkPlainMessage(t, []byte(msg))
			}
		}
	}
	for _, s := range []string{
		`{"turn":1,"step":1,"message":` + messageCases[2] + `,"usage":{"inputTokens":0}}`,
		`{"turn":1,"step":1,"message":` + messageCases[1] + `}`,
		`{"turn":1,"step":1,"message":` + messageCases[3] + `}`,
	} {
		if _, _, ok := ValidMessageParts([]byte(s), nil); !ok {
			t.Errorf("%s: not read", s)
		}
	}
	if _, _, ok := ValidMessage([]byte(messageCases[0]), nil); !ok {
		t.Errorf("%s: not read", messageCases[0])
	}
	r := rand.New(rand.NewPCG(36, 31))
	parts := []string{`"role":`, `"content":`, `"id":`, `"source":`, `"type":`, `"text":`, `"isError":`, `"toolCallId":`, `"Text":`, `"x":`, `"v"`, `"a\"b\n"`, `"\u00e9"`, `true`, `false`, `null`, `1`, `{`, `}`, `[`, `]`, `,`, ` `, `[{"type":"text","text":"t"}]`, `[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"t"}]}]`}
	for range 100000 {
		var sb strings.Builder
		sb.WriteString(`{"message":{`)
		for range r.IntN(14) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		sb.WriteString(`}}`)
		checkMessageParts(t, []byte(sb.String()))
		checkPlainMessage(t, []byte(sb.String()[len(`{"message":`):sb.Len()-1]))
	}
}

// FuzzValidMessageParts holds ValidMessageParts to DecodeValidMessageData
// on any valid input.
func FuzzValidMessageParts(f *testing.F) {
	for _, s := range messagePartsCases() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkMessageParts(t, raw)
		checkPlainMessage(t, raw)
	})
}
