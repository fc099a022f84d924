package sessionlog_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// synthetic builds a valid log of about n events: steps of a user message,
// request context, 16 text deltas, an assistant message with a tool call,
// the call, its result. One request header opens it.
func synthetic(n int) (sessionlog.Header, []sessionlog.Event) {
	h := sessionlog.NewHeader("bench", 1, "/w")
	evs := make([]sessionlog.Event, 0, n+40)
	add := func(typ string, data string, op *sessionlog.SurfaceOp, src []int) int {
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
		am := add("assistant/message", `{"turn":`+t+`,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool-call","id":"c`+t+`","name":"bash","arguments":"{}"}],"id":"a`+t+`"}}`, sessionlog.AppendOp(), chunks)
		_ = am
		call := add("tool/call", `{"turn":`+t+`,"step":1,"callId":"c`+t+`","name":"bash","arguments":"{}"}`, nil, nil)
		add("tool/result", `{"turn":`+t+`,"step":1,"message":{"source":{"kind":"tool","callId":"c`+t+`"},"content":[{"type":"tool-result","toolCallId":"c`+t+`","content":[{"type":"text","text":"out"}],"isError":false}],"role":"user","id":"r`+t+`"}}`, sessionlog.AppendOp(), []int{call})
		add("step/end", `{"turn":`+t+`,"step":1}`, nil, nil)
		add("turn/end", `{"turn":`+t+`,"reason":{"kind":"completed"}}`, nil, nil)
	}
	return h, evs
}

// BenchmarkAppendValidate measures append + validation in memory.
func BenchmarkAppendValidate(b *testing.B) {
	h, evs := synthetic(100000)
	b.ResetTimer()
	for b.Loop() {
		l := sessionlog.New(h)
		for i := range evs {
			if err := l.Append(evs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(evs)*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReplace100k measures one replacement on a 100k-entry surface
// (the linear position lookup the seeds accept).
func BenchmarkReplace100k(b *testing.B) {
	h := sessionlog.NewHeader("bench", 1, "/w")
	l := sessionlog.New(h)
	for i := 0; i < 100000; i++ {
		if err := l.Append(sessionlog.Event{Type: "user/message", Seq: i, Data: json.RawMessage(`{"content":[],"role":"user"}`), SurfaceOp: sessionlog.AppendOp()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		// Replace the entry in the middle, then the replacement: the surface
		// keeps its size and every call does the same work.
		seqs := l.Surface().Seqs()
		mid := seqs[len(seqs)/2]
		seq := l.Len()
		if err := l.Append(sessionlog.Event{Type: "user/message", Seq: seq, Data: json.RawMessage(`{"content":[],"role":"user"}`), SurfaceOp: sessionlog.ReplaceOp(mid, mid), SourceEventSeqs: []int{mid}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReconstructAll rebuilds the request of every step; timing N and
// 2N steps shows whether it grows linearly.
func BenchmarkReconstructAll(b *testing.B) {
	for _, steps := range []int{5000, 10000} {
		h, evs := synthetic(steps * 25)
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			for b.Loop() {
				reqs, err := sessionlog.ReconstructAll(h, evs)
				if err != nil || len(reqs) < steps {
					b.Fatalf("%d requests, %v", len(reqs), err)
				}
			}
		})
	}
}

// BenchmarkAppendHeader measures appending a request/header of the size
// reel's first step writes (a 6 KiB system prompt, 9 KiB of tool
// schemas): the event is checked and its header kept parsed.
func BenchmarkAppendHeader(b *testing.B) {
	var tools []string
	for i := range 20 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool%d","description":%q,"parameters":{"type":"object","properties":{"file_path":{"type":"string","description":"The absolute path"}},"required":["file_path"]}}`, i, strings.Repeat("Reads a file. ", 20)))
	}
	h := sessionlog.RequestHeader{Config: json.RawMessage(`{"provider":"deepseek","model":"deepseek-chat"}`),
		System: strings.Repeat("You are reel, a coding agent.\n", 200), Tools: json.RawMessage("[" + strings.Join(tools, ",") + "]")}
	ev := sessionlog.Event{Type: sessionlog.TypeRequestHeader, Seq: 0, Data: sessionlog.HeaderData(h, sessionlog.ReasonInitial)}
	b.SetBytes(int64(len(ev.Data)))
	for b.Loop() {
		l := sessionlog.New(sessionlog.NewHeader("bench", 1, "/w"))
		if err := l.Append(ev); err != nil {
			b.Fatal(err)
		}
	}
}
