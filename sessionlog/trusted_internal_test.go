package sessionlog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// trustedCases are event data, valid JSON or not: messages, chunks and
// their prefixes are added by trustedInputs.
func trustedCases() []string {
	var cases []string
	for _, m := range messageCases {
		cases = append(cases, `{"turn":1,"message":`+m+`,"meta":{"diffs":[]}}`, `{"meta":null,"message":`+m+`}`, `{"message":`+m+`,"Message":{"id":"x"}}`, ` { "MESSAGE" : `+m+` } `, m)
	}
	return append(cases,
		`{"turn":1,"step":2,"chunk":{"type":"text-delta","delta":"a\"b"}}`,
		`{"turn":1,"step":2,"index":0,"chunk":{"type":"finish","usage":{"a":1}}}`,
		`{"Turn":1,"STEP":2,"chunk":{"Type":"finish"}}`, `{"turn":1,"turn":2,"step":2,"chunk":{"type":"x"}}`,
		`{"turn":1.5,"step":2,"chunk":{"type":"x"}}`, `{"turn":1,"step":2,"chunk":{"type":"\u0041"}}`,
		`{"turn":1,"step":2,"chunk":{"type":"a","type":"b"}}`, `{"turn":1,"step":2,"chunk":[]}`, `{"\u006dessage":{"role":"user"}}`,
		// The engine's layout (canonicalChunkHead) and its edges.
		`{"turn":12,"step":3,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"a\"}b"}}}`,
		`{"turn":-0,"step":3,"chunk":{"type":"finish","reason":{"kind":"stop"}}}`, `{"turn":1,"step":2,"chunk":{"type":"x","TYPE":"y"}}`,
		`{"turn":1,"step":2,"chunk":{"type":"x","t\u0079pe":"y"}}`, `{"turn":1,"step":2,"chunk":{"type":"x", "a":1}}`,
		`{"turn":1,"step":2,"chunk":{"type":"x","a" :1}}`, `{"turn":1,"step":2,"chunk":{"type":"x","a": 1}}`, `{"turn":1,"step":2,"chunk":{"type":"x","a":1 }}`,
		`{"turn":1,"step":2,"chunk":{"type":"x"},"turn":3}`, `{"turn":1,"step":2,"chunk":{"type":"x"} }`, `{"turn":1,"step":2,"chunk":{"type":"é"}}`,
		`{"turn":1,"step":2,"chunk":{"type":"a\u0041"}}`, `{"turn":99999999999999999999,"step":2,"chunk":{"type":"x"}}`, `{"turn":1,"step":2,"chunk":{"type":"x","a":{"type":"b"}}}`,
		`{"turn":1,"step":2,"chunk":{"type":""}}`, `{"turn":1,"step":2,"chunk":{"type":"x","":1}}`,
		`{"turn":{}}`, `{"turn":1,"step":"2","chunk":{"type":"x"}}`, `{"turn":-,"step":2}`)
}

// checkTrusted holds each reader's path for data known valid to its
// checking path on raw, when raw is valid JSON (the only data the trusted
// paths are given: Log.DataValid).
func checkTrusted(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return
	}
	m1, meta1, err1 := DecodeMessageData(raw)
	m2, meta2, err2 := DecodeValidMessageData(raw)
	if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(m1, m2) || string(meta1) != string(meta2) || (meta1 == nil) != (meta2 == nil) {
		t.Fatalf("%q: DecodeValidMessageData %#v %q %v, DecodeMessageData %#v %q %v", raw, m2, meta2, err2, m1, meta1, err1)
	}
	t1, s1, c1, ok1 := ChunkHead(raw)
	t2, s2, c2, ok2 := ChunkHeadValid(raw)
	if t1 != t2 || s1 != s2 || c1 != c2 || ok1 != ok2 {
		t.Fatalf("%q: ChunkHeadValid %d %d %q %v, ChunkHead %d %d %q %v", raw, t2, s2, c2, ok2, t1, s1, c1, ok1)
	}
	for _, typ := range []string{TypeAssistantMessage, TypeToolResult, TypeUserMessage} {
		e := &Event{Type: typ, Data: raw}
		p1, perr1 := projectMessage(e, false)
		p2, perr2 := projectMessage(e, true)
		if fmt.Sprint(perr1) != fmt.Sprint(perr2) || string(p1) != string(p2) {
			t.Fatalf("%s %q: projectMessage trusting %q %v, checking %q %v", typ, raw, p2, perr2, p1, perr1)
		}
	}
}

// TestTrustedReadersAreCheckingReaders holds DecodeValidMessageData,
// ChunkHeadValid and projectMessage of valid data to the readers that
// check (themselves held to encoding/json by the tests beside them), on
// every case and every prefix of it that is valid JSON.
func TestTrustedReadersAreCheckingReaders(t *testing.T) {
	for _, s := range trustedCases() {
		for i := range len(s) + 1 {
			checkTrusted(t, []byte(s[:i]))
		}
	}
}

// TestEngineChunksTakeTheCanonicalRead checks that chunks as the engine
// writes them are read in one walk (canonicalChunkHead), not by the member
// walk.
func TestEngineChunksTakeTheCanonicalRead(t *testing.T) {
	for _, c := range []struct {
		data, typ  string
		turn, step int
	}{
		{`{"turn":3,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}`, "block-start", 3, 1},
		{`{"turn":3,"step":2,"chunk":{"type":"text-delta","index":0,"text":"ONE \"two\" {"}}`, "text-delta", 3, 2},
		{`{"turn":10,"step":4,"chunk":{"type":"finish","reason":{"kind":"stop"}}}`, "finish", 10, 4},
	} {
		turn, step, typ, ok := canonicalChunkHead([]byte(c.data))
		if !ok || turn != c.turn || step != c.step || typ != c.typ {
			t.Errorf("%s: canonicalChunkHead %d %d %q %v, want %d %d %q", c.data, turn, step, typ, ok, c.turn, c.step, c.typ)
		}
	}
}

// FuzzTrustedReaders holds the trusted readers to the checking ones on
// any valid input.
func FuzzTrustedReaders(f *testing.F) {
	for _, s := range trustedCases() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkTrusted(t, raw) })
}

// TestLoadOwnedValidTrustsOnlyTheLoadedEvents checks that a log loaded
// with LoadOwnedValid vouches for the loaded events' data and for no event
// appended after, and that LoadOwned vouches for none.
func TestLoadOwnedValidTrustsOnlyTheLoadedEvents(t *testing.T) {
	h := NewHeader("s", 1, "")
	evs := func() []Event {
		return []Event{
			{Type: TypeTurnStart, Seq: 0, Time: 1, Data: json.RawMessage(`{"turn":1}`)},
			{Type: TypeTurnEnd, Seq: 1, Time: 1, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)},
		}
	}
	for _, c := range []struct {
		name  string
		load  func(string, Header, []Event) (*Loaded, error)
		valid []bool
	}{
		{"LoadOwnedValid", LoadOwnedValid, []bool{true, true, false, false}},
		{"LoadOwned", LoadOwned, []bool{false, false, false, false}},
		{"Load", Load, []bool{false, false, false, false}},
	} {
		l, err := c.load("s", h, evs())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := l.Log.Append(Event{Type: TypeTurnStart, Seq: 2, Time: 2, Data: json.RawMessage(`{"turn":2}`)}); err != nil {
			t.Fatalf("%s: append: %v", c.name, err)
		}
		for seq, want := range c.valid {
			if got := l.Log.DataValid(seq); got != want {
				t.Errorf("%s: DataValid(%d) = %v, want %v", c.name, seq, got, want)
			}
		}
		if l.Log.DataValid(-1) {
			t.Errorf("%s: DataValid(-1)", c.name)
		}
	}
}
