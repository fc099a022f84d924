package sessionlog

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// messageCases are messages at the edges of the hand read.
var messageCases = []string{
	`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"6df7d8a0"}`,
	`{"source":{"kind":"tool","callId":"call_1"},"content":[{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"     1\tone\n     2\ttwo\n"}],"isError":false}],"role":"tool"}`,
	`{"role":"assistant","content":[{"type":"tool-call","id":"call_1","name":"read","arguments":"{\"file_path\":\"f.txt\"}"}],"source":{"kind":"model","provider":"p","model":"m"}}`,
	`{"role":"assistant","content":[{"type":"reasoning","text":"hmm"},{"type":"text","text":"a \"quote\" \\ \/ \b\f\r"}]}`,
	`{"role":"assistant","content":[{"type":"text","text":"\u00e9 \ud83c\udfac \ud800"}]}`,
	`{"role":"assistant","content":[{"type":"text","text":"é raw"}]}`,
	"{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\"}]}",
	`{"Role":"user","content":[]}`, `{"role":"user","CONTENT":[]}`, `{"role":"user","content":[{"TYPE":"text"}]}`,
	`{"role":"user","role":"tool"}`, `{"role":"user","content":[{"type":"a","type":"b"}]}`,
	`{"role":null,"content":null,"id":null,"source":null}`, `{"content":[{"type":"text","text":null,"isError":null,"content":null}]}`,
	`{"content":[{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","width":1,"height":2,"bytes":3}}]}`,
	`{"content":[{"type":"image","attachment":null}]}`,
	`{"role":1}`, `{"content":{}}`, `{"content":[1]}`, `{"content":[{"isError":"yes"}]}`, `{"content":[{"isError":true}]}`,
	`{"extra":{"nested":[1,2,{"role":"x"}]},"role":"user","zz":null}`, `{"r\u006fle":"user"}`, `{"rolé":"user"}`,
	` { "role" : "user" , "content" : [ { "type" : "text" , "text" : "x" } ] } `,
	`{}`, `[]`, `null`, `"x"`, ``, `{"role":"user"`, `{"role":"user"}x`, `{"content":[]}`,
	`{"content":[{"type":"tool-result","content":[{"type":"tool-result","content":[]}]}]}`,
}

// checkMessage fails when DecodeMessage and json.Unmarshal differ.
func checkMessage(t *testing.T, raw []byte) {
	t.Helper()
	got, gerr := DecodeMessage(raw)
	var want Message
	werr := json.Unmarshal(raw, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, json.Unmarshal %v", raw, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", raw, got, want)
	}
}

// TestDecodeMessageIsUnmarshals holds DecodeMessage to json.Unmarshal over
// the edge cases, their prefixes and random messages, and checks that the
// engine's shapes are read by hand.
func TestDecodeMessageIsUnmarshals(t *testing.T) {
	for _, s := range messageCases {
		for i := range len(s) + 1 {
			checkMessage(t, []byte(s[:i]))
		}
	}
	// Texts long enough to be skipped eight bytes at a time, an escape at
	// every offset.
	for n := range 40 {
		for pos := range n {
			for _, odd := range []string{`\"`, `\\`, `\n`, `\u0041`} {
				text := strings.Repeat("a", pos) + odd + strings.Repeat("b", n-pos)
				checkMessage(t, []byte(`{"role":"user","content":[{"type":"text","text":"`+text+`"}],"id":"`+text+`"}`))
			}
		}
	}
	for _, s := range messageCases[:4] {
		var m Message
		if _, ok := fastMessage([]byte(s), 0, &m); !ok {
			t.Errorf("%s: not read by hand", s)
		}
	}
	r := rand.New(rand.NewPCG(34, 99))
	parts := []string{`"role":`, `"content":`, `"id":`, `"source":`, `"type":`, `"text":`, `"isError":`, `"toolCallId":`, `"Text":`, `"x":`, `"v"`, `"a\"b\n"`, `"\u00e9"`, `true`, `false`, `null`, `1`, `{`, `}`, `[`, `]`, `,`, ` `, `[{"type":"text","text":"t"}]`}
	for range 200000 {
		var sb strings.Builder
		sb.WriteString("{")
		for range r.IntN(14) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkMessage(t, []byte(sb.String()))
	}
}

// FuzzDecodeMessage holds DecodeMessage to json.Unmarshal on any input.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range messageCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkMessage(t, raw) })
}

// TestDecodeMessageDataIsUnmarshals holds DecodeMessageData to
// json.Unmarshal into {message, meta} over data wrapping every message
// case, and their prefixes.
func TestDecodeMessageDataIsUnmarshals(t *testing.T) {
	var cases []string
	for _, m := range messageCases {
		cases = append(cases, `{"turn":1,"message":`+m+`,"meta":{"diffs":[]}}`, `{"meta":null,"message":`+m+`}`, `{"message":`+m+`,"Message":{"id":"x"}}`, m)
	}
	for _, s := range cases {
		for i := range len(s) + 1 {
			raw := []byte(s[:i])
			m, meta, err := DecodeMessageData(raw)
			var want struct {
				Message Message         `json:"message"`
				Meta    json.RawMessage `json:"meta"`
			}
			werr := json.Unmarshal(raw, &want)
			if (err == nil) != (werr == nil) {
				t.Fatalf("%q: error %v, json.Unmarshal %v", raw, err, werr)
			}
			if err == nil && (!reflect.DeepEqual(m, want.Message) || string(meta) != string(want.Meta) || (meta == nil) != (want.Meta == nil)) {
				t.Fatalf("%q:\n got %#v %q\nwant %#v %q", raw, m, meta, want.Message, want.Meta)
			}
		}
	}
}
