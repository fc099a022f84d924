package scenario

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzLoadInput checks that ParseInput never panics, that every refusal is
// an *Error naming the file, and that an accepted input survives a
// marshal → parse round trip unchanged.
func FuzzLoadInput(f *testing.F) {
	f.Add([]byte(`{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"hi"}]}`))
	f.Add([]byte(`{"steps":[{"op":"promptAndCancel","text":"x","waitForFile":{"path":".r"}}],"permissionAnswers":[{"kind":"allow_once"}]}`))
	f.Add([]byte(`{"steps":[{"op":"prompt","txt":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput("input.json", data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "input.json" {
				t.Fatalf("error %v (%T) is not an *Error for input.json", err, err)
			}
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("marshal %+v: %v", in, err)
		}
		again, err := ParseInput("again.json", out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if !reflect.DeepEqual(in, again) {
			t.Fatalf("round trip differs:\n%+v\n%+v", in, again)
		}
	})
}

// FuzzParseOverride checks that ParseOverride never panics and that every
// refusal is an *Error naming the file.
func FuzzParseOverride(f *testing.F) {
	f.Add([]byte(`[{"kind":"throw","chunks":[],"message":"simulated provider error (HTTP 401)","code":"AUTH"}]`))
	f.Add([]byte(`[{"kind":"hang","readyFile":".dsh-snapshot-stream-ready"}]`))
	f.Add([]byte(`[{"kind":"chunks","chunks":[{"type":"block-start","index":0,"blockType":"text"},{"type":"text-delta","index":0,"text":"x"},{"type":"block-end","index":0,"block":{"type":"text","text":"x"}},{"type":"usage","usage":{"inputTokens":1,"outputTokens":2}},{"type":"finish","reason":{"kind":"stop"}}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseOverride("replay.override.json", data)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "replay.override.json" {
				t.Fatalf("error %v (%T) is not an *Error for replay.override.json", err, err)
			}
			return
		}
		if len(got) == 0 {
			t.Fatalf("accepted %q with no entries", data)
		}
		for _, o := range got {
			for _, c := range o.Chunks {
				if !json.Valid(c.Raw) {
					t.Fatalf("chunk raw %q is not JSON", c.Raw)
				}
			}
		}
	})
}
