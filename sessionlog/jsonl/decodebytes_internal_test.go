package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// decodeBytesCases are logs whole, torn, damaged and without a final newline.
var decodeBytesCases = func() []string {
	h := string(sessionlog.NewHeader("d", 1, "").Raw)
	start := `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
	end := `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	row := `{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["a","b","c"]}}`
	return []string{
		"", "\n", h, h + "\n", h + "\n" + start + "\n" + end + "\n", h + "\n" + start + "\n" + end,
		h + "\r\n" + start + "\r\n" + end + "\r\n", h + "\n" + start + "\n" + end + "\n" + row + "\n",
		h + "\n" + start + "\n{broken\n", h + "\n" + start + "\n\n" + end + "\n", h + "\n{broken\n" + end + "\n",
		h + "\n" + start + "\n" + end + "\n" + `{"type":"x","seq":9,"time":1}` + "\n",
		h + "\n" + start + "\n" + start + "\n", "not a header\n" + start + "\n", h + "\n" + h + "\n",
	}
}()

// checkDecodeBytes fails when decodeBytes and Decode over a reader differ.
func checkDecodeBytes(t *testing.T, content []byte) {
	t.Helper()
	got, gerr := decodeBytes(content, "f")
	want, werr := Decode(bytes.NewReader(content), "f")
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%q: error %v, Decode %v", content, gerr, werr)
	}
	if gerr != nil {
		return
	}
	// The event slices' spare room may differ; their events may not.
	if !reflect.DeepEqual(got.Header, want.Header) || !reflect.DeepEqual(got.spans, want.spans) || fmt.Sprint(got.Torn) != fmt.Sprint(want.Torn) || got.GoodBytes != want.GoodBytes || len(got.Events) != len(want.Events) {
		t.Fatalf("%q:\n got %+v\nwant %+v", content, got, want)
	}
	for i := range got.Events {
		// load vouches for every decoded event's data (LoadOwnedValid).
		if d := got.Events[i].Data; d != nil && !json.Valid(d) {
			t.Fatalf("%q: event %d's data %q is not valid JSON", content, i, d)
		}
		if !reflect.DeepEqual(got.Events[i], want.Events[i]) {
			t.Fatalf("%q: event %d is %+v, Decode %+v", content, i, got.Events[i], want.Events[i])
		}
	}
}

// TestDecodeBytesIsDecode holds decodeBytes (lines cut from the content)
// to Decode over a reader (lines read through bufio), on every prefix of
// each case.
func TestDecodeBytesIsDecode(t *testing.T) {
	for _, c := range decodeBytesCases {
		for i := range len(c) + 1 {
			checkDecodeBytes(t, []byte(c[:i]))
		}
	}
}

// FuzzDecodeBytes holds decodeBytes to Decode on any input.
func FuzzDecodeBytes(f *testing.F) {
	for _, c := range decodeBytesCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, content []byte) { checkDecodeBytes(t, content) })
}

// TestDecodeBytesLinesEndTheirRoom checks that an event decoded from a
// file's content reaches no further than its own line, spare room
// included: an append to one event's data must not write over the next
// line's events.
func TestDecodeBytesLinesEndTheirRoom(t *testing.T) {
	h := string(sessionlog.NewHeader("d", 1, "").Raw)
	start := `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
	mid := `{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}`
	end := `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
	for _, c := range []string{h + "\n" + start + "\n" + mid + "\n" + end + "\n", h + "\n" + start + "\n" + mid + "\n" + end} {
		d, err := decodeBytes([]byte(c), "f")
		if err != nil || len(d.Events) != 3 {
			t.Fatalf("%q: %d events, %v", c, len(d.Events), err)
		}
		for i, e := range d.Events {
			if room := e.Data[:cap(e.Data)]; bytes.Count(room, []byte{'\n'}) > 1 {
				t.Fatalf("%q: event %d's data has room over the next lines: %q", c, i, room)
			}
			_ = append(e.Data, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"...)
		}
		want, _ := Decode(bytes.NewReader([]byte(c)), "f")
		for i := range d.Events {
			if !bytes.Equal(d.Events[i].Data, want.Events[i].Data) {
				t.Fatalf("%q: event %d's data %q after appends to the others, want %q", c, i, d.Events[i].Data, want.Events[i].Data)
			}
		}
	}
}
