package openai_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestWarmSendsNothing pins what Provider.Warm may do: first-use work in
// the process only. It sends no request, logs nothing, and the request a
// warmed provider sends next is byte for byte the one a fresh provider
// sends.
func TestWarmSendsNothing(t *testing.T) {
	req := userRequest("hello")
	req.System = "You are reel."
	var bodies [][]byte
	for _, warm := range []bool{false, true} {
		f := newFixture(t, standin.Script{Responses: []standin.Response{{Text: "ok"}}}, nil)
		if warm {
			f.prov.Warm()
			if n := len(f.srv.Requests()); n != 0 {
				t.Fatalf("Warm sent %d requests", n)
			}
			if logs := f.logs.String(); logs != "" {
				t.Fatalf("Warm logged:\n%s", logs)
			}
		}
		s, err := f.prov.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llm.Collect(s); err != nil {
			t.Fatal(err)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("warm=%t: %d requests, want 1", warm, len(reqs))
		}
		bodies = append(bodies, reqs[0])
	}
	if !bytes.Equal(bodies[0], bodies[1]) {
		t.Fatalf("a warmed provider sent\n%s\na fresh one\n%s", bodies[1], bodies[0])
	}
}
