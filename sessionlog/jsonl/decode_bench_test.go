package jsonl_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// syntheticFile encodes a valid log of about n events in the canonical
// layout (runs of 16 text deltas become packed rows).
func syntheticFile(n int) []byte {
	h := sessionlog.NewHeader("bench", 1, "/w")
	var evs []sessionlog.Event
	add := func(typ, data string, op *sessionlog.SurfaceOp, src []int) int {
		seq := len(evs)
		evs = append(evs, sessionlog.Event{Type: typ, Seq: seq, Time: int64(1000 + seq), Data: json.RawMessage(data), SurfaceOp: op, SourceEventSeqs: src})
		return seq
	}
	add("request/header", `{"header":{"config":{"provider":"p","model":"m"},"system":"sys"},"reason":"initial"}`, nil, nil)
	for turn := 1; len(evs) < n; turn++ {
		t := strconv.Itoa(turn)
		add("turn/start", `{"turn":`+t+`}`, nil, nil)
		add("step/start", `{"turn":`+t+`,"step":1}`, nil, nil)
		add("user/message", `{"content":[{"type":"text","text":"do the thing"}],"source":{"kind":"user"},"role":"user","id":"u`+t+`"}`, sessionlog.AppendOp(), nil)
		add("request/context", `{"provider":"p","model":"m"}`, nil, nil)
		var chunks []int
		for k := 0; k < 16; k++ {
			chunks = append(chunks, add("assistant/chunk", `{"turn":`+t+`,"step":1,"chunk":{"type":"text-delta","index":0,"text":"tok`+strconv.Itoa(k)+`"}}`, nil, nil))
		}
		add("assistant/message", `{"turn":`+t+`,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"id":"a`+t+`"}}`, sessionlog.AppendOp(), chunks)
		add("step/end", `{"turn":`+t+`,"step":1}`, nil, nil)
		add("turn/end", `{"turn":`+t+`,"reason":{"kind":"completed"}}`, nil, nil)
	}
	var b bytes.Buffer
	_ = jsonl.Encode(&b, h, evs)
	return b.Bytes()
}

// BenchmarkDecodeValidateFold decodes, validates and folds a synthetic
// log; the bare sub-benchmark is the anchor: one json.Decoder pass over the
// same bytes into json.RawMessage. Compare the two ns/op as a ratio.
func BenchmarkDecodeValidateFold(b *testing.B) {
	for _, n := range []int{500000, 1000000} {
		raw := syntheticFile(n)
		b.Run(fmt.Sprintf("reel/events=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				d, err := jsonl.Decode(bytes.NewReader(raw), "bench")
				if err != nil {
					b.Fatal(err)
				}
				l, err := sessionlog.Seed(d.Header, d.Events)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := sessionlog.FoldSurface(l.Events()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bare-json.Decoder/events=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(raw))
				for {
					var v json.RawMessage
					if err := dec.Decode(&v); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
