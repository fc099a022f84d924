package sessionlog_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// payloadTypes are the event types reel has a payload type for.
var payloadTypes = []string{
	sessionlog.TypeTurnStart, sessionlog.TypeTurnEnd, sessionlog.TypeStepStart, sessionlog.TypeStepEnd,
	sessionlog.TypeUserMessage, sessionlog.TypeAssistantChunk, sessionlog.TypeAssistantMessage,
	sessionlog.TypeToolCall, sessionlog.TypeToolResult, sessionlog.TypeRequestHeader,
	sessionlog.TypeRequestContext, sessionlog.TypeSandboxMode, sessionlog.TypeApprovalPolicy,
	sessionlog.TypeLLMRetry, sessionlog.TypeCompactionStart, sessionlog.TypeCompactionSum,
	sessionlog.TypeCompactionEnd, sessionlog.TypeHookInvoked, sessionlog.TypeHookResult,
}

// roundTrip is what roundTripLogs saw: events re-encoded per type, events
// of types reel has no payload for (kept verbatim) per type, and per log
// the request/header events HeaderData over ParseRequestHeader does not
// reproduce (header members RequestHeader does not model).
type roundTrip struct {
	checked, other, lossy map[string]int
}

// roundTripLogs decodes every event of the logs (through jsonl, which
// expands packed chunk rows) and checks that each payload reel has a type
// for decodes and re-encodes to its logged bytes.
func roundTripLogs(t *testing.T, files []string) roundTrip {
	t.Helper()
	r := roundTrip{checked: map[string]int{}, other: map[string]int{}, lossy: map[string]int{}}
	for _, f := range files {
		d, err := jsonl.ReadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range d.Events {
			e := &d.Events[i]
			got, ok, err := sessionlog.ReencodePayload(e)
			switch {
			case !ok:
				r.other[e.Type]++
				continue
			case err != nil:
				t.Errorf("%s:%d: seq %d (%s): %v", f, d.LineOf(e.Seq), e.Seq, e.Type, err)
			case !bytes.Equal(got, e.Data):
				t.Errorf("%s:%d: seq %d (%s) re-encodes differently:\nlogged  %s\nencoded %s", f, d.LineOf(e.Seq), e.Seq, e.Type, e.Data, got)
			}
			r.checked[e.Type]++
			if e.Type == sessionlog.TypeRequestHeader && err == nil && !bytes.Equal(viaHeaderData(t, e), e.Data) {
				r.lossy[f]++
			}
		}
	}
	return r
}

// viaHeaderData re-encodes a request/header through the header type.
func viaHeaderData(t *testing.T, e *sessionlog.Event) []byte {
	t.Helper()
	d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](e)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sessionlog.ParseRequestHeader(d.Header)
	if err != nil {
		t.Fatal(err)
	}
	return sessionlog.HeaderData(h, d.Reason)
}

// counts renders per-type counts in a stable order.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	total := 0
	for k, n := range m {
		keys = append(keys, k)
		total += n
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-20s %5d", k, m[k])
	}
	fmt.Fprintf(&b, "\n  %-20s %5d", "total", total)
	return b.String()
}

// TestPayloadCorpusRoundTrip holds the canonical encoders to every log
// reel and dsh wrote: reel's fixtures (always) and the conformance corpus
// (skipped when absent, failing under CI=true; see corpustest). Every event
// of a type reel has a payload for must decode and re-encode to exactly its
// logged data; between them the two sets must exercise every payload type.
func TestPayloadCorpusRoundTrip(t *testing.T) {
	seen := map[string]int{}
	t.Run("fixtures", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join("..", "fixtures", "*", "session*.jsonl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixture logs under ../fixtures (%v)", err)
		}
		r := roundTripLogs(t, files)
		t.Logf("%d fixture logs; re-encoded per type:%s\nkept verbatim (no payload type):%s", len(files), counts(r.checked), counts(r.other))
		for f, n := range r.lossy {
			t.Errorf("%s: %d request/header events that HeaderData does not reproduce (reel wrote them with it)", f, n)
		}
		for k, n := range r.checked {
			seen[k] += n
		}
	})
	corpusRan := false
	t.Run("corpus", func(t *testing.T) {
		files := corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
		r := roundTripLogs(t, files)
		t.Logf("%d corpus logs; re-encoded per type:%s\nkept verbatim (no payload type):%s", len(files), counts(r.checked), counts(r.other))
		for f, n := range r.lossy {
			t.Logf("%s: %d request/header events carry header members RequestHeader does not model (HeaderData drops them; RequestHeaderData.AppendJSON keeps them)", f, n)
		}
		for k, n := range r.checked {
			seen[k] += n
		}
		corpusRan = true
	})
	if !corpusRan {
		return
	}
	for _, typ := range payloadTypes {
		if seen[typ] == 0 {
			t.Errorf("no log exercises the %s payload", typ)
		}
	}
}
