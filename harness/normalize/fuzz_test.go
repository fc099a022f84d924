package normalize

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzLine checks that Line never panics, keeps valid JSON valid, and is
// idempotent.
func FuzzLine(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":0,"id":"3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f","createdAt":1,"cwd":"/tmp/fz/w"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"s at /tmp/fz"}}}`))
	f.Add([]byte(`{"type":"text-chunks","seq0":1,"time0":5,"data":{"dt":[1,2],"id":"ABCDEF01-2345-4789-ABCD-EF0123456789"}}`))
	f.Add([]byte(`[1,"2026-03-01T12:34:56Z",{"a":{"b":[{"id":"x"}]}},"\u00e9\ud83d\ude00",-0.5e-3,true,null]`))
	f.Add([]byte("{\"a\":\"\xff\"}\r\n"))
	f.Add([]byte(`not json {"time":`))
	opts := Options{Cwd: "/tmp/fz/w", TempDirs: []string{"/tmp/fz"}}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := New(opts).Line(in)
		body, _ := splitEOL(in)
		outBody, _ := splitEOL(out)
		if json.Valid(body) && !json.Valid(outBody) {
			t.Fatalf("valid input %q gave invalid output %q", in, out)
		}
		if again := New(opts).Line(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n  in %q\nonce %q\ntwice %q", in, out, again)
		}
	})
}
