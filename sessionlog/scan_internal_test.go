package sessionlog

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// The fast record decode before scanRecord: json.Valid of the record, then
// this envelope scan, then isCompact of its data. It is kept here as the
// reference scanRecord is held to.

// scanEnvelope splits a compact or loosely spaced JSON object into its
// known top-level members without decoding them. It returns ok=false for
// anything it does not fully recognise (an unknown or escaped key, a
// duplicate key, malformed syntax); callers then take the strict, slower
// path that produces a precise error.
func scanEnvelope(raw []byte) (f envelopeFields, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return f, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return f, skipWS(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return f, false
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' && raw[j] != '\\' {
			j++
		}
		if j >= len(raw) || raw[j] != '"' {
			return f, false
		}
		key := raw[i+1 : j]
		i = skipWS(raw, j+1)
		if i >= len(raw) || raw[i] != ':' {
			return f, false
		}
		i = skipWS(raw, i+1)
		end, vok := valueEnd(raw, i)
		if !vok {
			return f, false
		}
		val := raw[i:end]
		var slot *[]byte
		switch string(key) {
		case "type":
			slot = &f.typ
		case "seq":
			slot = &f.seq
		case "time":
			slot = &f.time
		case "data":
			slot = &f.data
		case "surfaceOp":
			slot = &f.surfaceOp
		case "sourceEventSeqs":
			slot = &f.sources
		default:
			return f, false
		}
		if *slot != nil {
			return f, false
		}
		*slot = val
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return f, skipWS(raw, i+1) == len(raw)
		}
		return f, false
	}
}

// recordCases are records at the edges of the envelope scan.
var recordCases = []string{
	`{"type":"turn/start","seq":2,"time":17,"data":{"turn":1}}`,
	`{"type":"user/message","seq":4,"time":1,"data":{"content":[{"type":"text","text":"say \"hi\" } ,"}],"source":{"kind":"user"},"role":"user"},"surfaceOp":"append"}`,
	`{"type":"tool/result","seq":14,"time":1,"data":{"message":{"content":[]}},"sourceEventSeqs":[13],"surfaceOp":"append"}`,
	`{ "type" : "x" , "seq" : 1 , "time" : 2 , "data" : { "a" : 1 } }`,
	`{"type":"x","seq":1,"time":2,"data":{"a": 1}}`,
	`{"type":"x","seq":1,"time":2,"data":{"a":"sp ace"}} `,
	`{"type":"x","seq":1,"time":2,"data":{"a":1},"type":"y"}`,
	`{"type":"x","seq":1,"time":2,"extra":0}`,
	`{"t\u0079pe":"x","seq":1,"time":2}`,
	`{"type":"x\"y","seq":1,"time":2}`,
	`{"type":"","seq":1,"time":2}`,
	`{"type":"x","seq":1.5,"time":2}`,
	`{"type":"x","seq":1,"time":2}x`,
	`{"type":"x","seq":1,"time":2`,
	`{"type":"x","seq":1,"time":2,"data":null,"surfaceOp":"append","sourceEventSeqs":[1,2]}`,
	`{"type":"x","seq":1,"time":2,"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"type":"x"}`,
	`{}`, `[]`, `"x"`, `1`, ``, ` `, `{"type":"x"}`, `{"data":{"data":{"type":"y"}}}`, `{"type":[1,{"a":"}"}],"seq":[],"time":{}}`,
}

// checkRecord fails when scanRecord and the reference disagree.
func checkRecord(t *testing.T, raw []byte) {
	t.Helper()
	f, compact, ok := scanRecord(raw)
	var want envelopeFields
	wok := json.Valid(raw)
	if wok {
		want, wok = scanEnvelope(raw)
	}
	if ok != wok {
		t.Fatalf("%q: scanRecord ok=%v, json.Valid+scanEnvelope ok=%v", raw, ok, wok)
	}
	if !ok {
		return
	}
	for _, p := range [][2][]byte{{f.typ, want.typ}, {f.seq, want.seq}, {f.time, want.time}, {f.data, want.data}, {f.surfaceOp, want.surfaceOp}, {f.sources, want.sources}} {
		if !bytes.Equal(p[0], p[1]) || (p[0] == nil) != (p[1] == nil) {
			t.Fatalf("%q: member %q, reference %q", raw, p[0], p[1])
		}
	}
	if f.data != nil && compact && !isCompact(f.data) {
		t.Fatalf("%q: compact, but its data %q is not", raw, f.data)
	}
}

// TestScanRecordIsValidAndScanEnvelope holds scanRecord to json.Valid and
// the envelope scan it replaced, over edge cases, their prefixes and
// random records.
func TestScanRecordIsValidAndScanEnvelope(t *testing.T) {
	for _, s := range recordCases {
		for i := range len(s) + 1 {
			checkRecord(t, []byte(s[:i]))
		}
	}
	r := rand.New(rand.NewPCG(34, 143))
	parts := []string{`"type":`, `"seq":`, `"time":`, `"data":`, `"surfaceOp":`, `"sourceEventSeqs":`, `"x":`, `"t\u0079pe":`, `"v"`, `"a\"b"`, `1`, `-2.5`, `null`, `{`, `}`, `[`, `]`, `,`, ` `, `"append"`, `{"a":[1,"]"]}`}
	for range 200000 {
		var sb strings.Builder
		sb.WriteString("{")
		for range r.IntN(14) {
			sb.WriteString(parts[r.IntN(len(parts))])
		}
		checkRecord(t, []byte(sb.String()))
	}
}

// FuzzScanRecord holds scanRecord to json.Valid and the envelope scan on
// any input.
func FuzzScanRecord(f *testing.F) {
	for _, s := range recordCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkRecord(t, raw) })
}
