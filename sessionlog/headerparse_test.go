package sessionlog_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// sameAsParsed checks the log's latest header, which Append keeps from
// the decode its validation made, against the old path: the event's data
// decoded again and its snapshot parsed by ParseRequestHeader, with the
// canonical form (which Equal compares) computed afresh.
func sameAsParsed(t *testing.T, l *sessionlog.Log, what string) {
	t.Helper()
	h, raw, seq, ok := l.LatestHeader()
	if !ok {
		t.Fatalf("%s: no latest header", what)
	}
	d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](l.Event(seq))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want, err := sessionlog.ParseRequestHeader(d.Header)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(raw, d.Header) || !bytes.Equal(h.Config, want.Config) || h.System != want.System ||
		!bytes.Equal(h.Tools, want.Tools) || (h.Tools == nil) != (want.Tools == nil) || (h.Config == nil) != (want.Config == nil) {
		t.Fatalf("%s: latest header %+v (raw %s), parsed afresh %+v (raw %s)", what, h, raw, want, d.Header)
	}
	if !h.Equal(want) || !bytes.Equal(h.Canonical(), want.Canonical()) {
		t.Fatalf("%s: latest header's canonical form differs from the fresh one:\n%s\n%s", what, h.Canonical(), want.Canonical())
	}
}

// TestAppendKeepsTheParsedHeader is the differential test of the header
// Append keeps: for every request/header event of the fixture logs, of
// the corpus, and of snapshots spelled unusually (a null system, members
// in other cases and orders, duplicates, spacing, escapes), it is what
// parsing the logged snapshot again gives.
func TestAppendKeepsTheParsedHeader(t *testing.T) {
	check := func(t *testing.T, files []string) {
		n := 0
		for _, f := range files {
			d, err := jsonl.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			l := sessionlog.New(d.Header)
			for _, e := range d.Events {
				if err := l.Append(e); err != nil {
					break // a refused log (crash fixtures): its prefix is checked
				}
				if e.Type == sessionlog.TypeRequestHeader {
					sameAsParsed(t, l, f)
					n++
				}
			}
		}
		t.Logf("%d logs, %d headers", len(files), n)
	}
	t.Run("fixtures", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join("..", "fixtures", "*", "session*.jsonl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixture logs (%v)", err)
		}
		check(t, files)
	})
	t.Run("corpus", func(t *testing.T) {
		check(t, corpustest.Files(t, filepath.Join("*", "session*.jsonl")))
	})
	for _, header := range []string{
		`{"config":{"model":"m"}}`,
		`{"config":{"model":"m"},"system":null}`,
		`{"config":{ "model" : "m" },"system":"s\u00e9\n\"q\"","tools":[ {"name":"bash"} ]}`,
		`{"Tools":[{"name":"a"}],"SYSTEM":"upper","Config":{}}`,
		`{"config":{"a":1},"config":{"b":2},"system":"one","system":"two","extra":[1,2]}`,
		`{"config":{},"tools":[{"name":"<&>"}],"system":"\u2028"}`,
		` {"config":{}} `,
	} {
		data, err := json.Marshal(sessionlog.RequestHeaderData{Header: json.RawMessage(header), Reason: sessionlog.ReasonInitial})
		if err != nil {
			t.Fatal(err)
		}
		l := sessionlog.New(sessionlog.NewHeader("id", 1, ""))
		if err := l.Append(sessionlog.Event{Type: sessionlog.TypeRequestHeader, Seq: 0, Data: data}); err != nil {
			t.Logf("%s: refused: %v", header, err)
			continue
		}
		sameAsParsed(t, l, header)
	}
}

// BenchmarkSeedFixtures validates every fixture log from its decoded
// events, as ReadValid does after reading: request/header snapshots (the
// system prompt and the tool schemas) dominate.
func BenchmarkSeedFixtures(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "*", "session*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture logs (%v)", err)
	}
	var logs []*jsonl.Decoded
	for _, f := range files {
		d, err := jsonl.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		logs = append(logs, d)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range logs {
			l := sessionlog.New(d.Header)
			for _, e := range d.Events {
				if l.Append(e) != nil {
					break
				}
			}
		}
	}
}

// BenchmarkParseRequestHeader parses every request header snapshot of the
// fixture logs: ParseRequestHeader (new) and json.Unmarshal (old, what it
// did before the read by hand).
func BenchmarkParseRequestHeader(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "*", "session*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture logs (%v)", err)
	}
	var raws []json.RawMessage
	for _, f := range files {
		d, err := jsonl.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for i := range d.Events {
			if d.Events[i].Type == sessionlog.TypeRequestHeader {
				hd, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&d.Events[i])
				if err != nil {
					b.Fatal(err)
				}
				raws = append(raws, hd.Header)
			}
		}
	}
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range raws {
				if _, err := sessionlog.ParseRequestHeader(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("old", func(b *testing.B) {
		for b.Loop() {
			for _, raw := range raws {
				var h sessionlog.RequestHeader
				if err := json.Unmarshal(raw, &h); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
