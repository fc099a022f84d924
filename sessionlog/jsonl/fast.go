package jsonl

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reel-agent/reel/sessionlog"
)

// The fast paths below parse the canonical byte layouts this package
// writes, in their fixed key order, without encoding/json. Anything else
// falls back to the strict decoders, which also produce the error messages.

// lit consumes the literal s at b[i:].
func lit(b []byte, i int, s string) (int, bool) {
	if len(b)-i < len(s) || string(b[i:i+len(s)]) != s {
		return i, false
	}
	return i + len(s), true
}

// intTok consumes a JSON integer token (optional minus, digits, no leading
// zero unless the number is 0).
func intTok(b []byte, i int) ([]byte, int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	k := j
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	if k == j || (b[j] == '0' && k-j > 1) {
		return nil, i, false
	}
	return b[i:k], k, true
}

// strTok consumes a JSON string token; it checks escapes and rejects raw
// control characters, so the token is valid JSON.
func strTok(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return b[i : j+1], j + 1, true
		case c < 0x20:
			return nil, i, false
		case c == '\\':
			if j+1 >= len(b) {
				return nil, i, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(b) {
					return nil, i, false
				}
				for _, h := range b[j+2 : j+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, i, false
					}
				}
				j += 5
			default:
				return nil, i, false
			}
		}
	}
	return nil, i, false
}

// fastClassify recognises the canonical delta shape
// {"turn":T,"step":S,"chunk":{"type":K,"index":I,…}} directly.
func fastClassify(e *sessionlog.Event) (*delta, bool) {
	if e.Type != sessionlog.TypeAssistantChunk || e.SurfaceOp != nil || e.SourceEventSeqs != nil {
		return nil, false
	}
	b := e.Data
	v := &delta{}
	i, ok := lit(b, 0, `{"turn":`)
	if v.turn, i, ok = intTokIf(ok, b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"step":`); !ok {
		return nil, false
	}
	if v.step, i, ok = intTok(b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"chunk":{"type":"`); !ok {
		return nil, false
	}
	switch {
	case bytes.HasPrefix(b[i:], []byte(`text-delta"`)):
		v.kind = "text-delta"
	case bytes.HasPrefix(b[i:], []byte(`reasoning-delta"`)):
		v.kind = "reasoning-delta"
	case bytes.HasPrefix(b[i:], []byte(`tool-call-delta"`)):
		v.kind = "tool-call-delta"
	default:
		return nil, false
	}
	i += len(v.kind) + 1
	if i, ok = lit(b, i, `,"index":`); !ok {
		return nil, false
	}
	if v.index, i, ok = intTok(b, i); !ok {
		return nil, false
	}
	if v.kind == "tool-call-delta" {
		if i, ok = lit(b, i, `,"id":`); !ok {
			return nil, false
		}
		if v.id, i, ok = strTok(b, i); !ok {
			return nil, false
		}
		if j, named := lit(b, i, `,"name":`); named {
			if v.name, i, ok = strTok(b, j); !ok {
				return nil, false
			}
		}
		if i, ok = lit(b, i, `,"argumentsDelta":`); !ok {
			return nil, false
		}
	} else if i, ok = lit(b, i, `,"text":`); !ok {
		return nil, false
	}
	if v.payload, i, ok = strTok(b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `}}`); !ok || i != len(b) {
		return nil, false
	}
	return v, true
}

func intTokIf(ok bool, b []byte, i int) ([]byte, int, bool) {
	if !ok {
		return nil, i, false
	}
	return intTok(b, i)
}

// fastExpandRow expands a row in the canonical layout appendRow writes.
func fastExpandRow(tag string, b []byte) ([]sessionlog.Event, bool) {
	i, ok := lit(b, 0, `{"type":"`+tag+`","seq0":`)
	seq0, i, ok := intTokIf(ok, b, i)
	if !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"time0":`); !ok {
		return nil, false
	}
	time0, i, ok := intTok(b, i)
	if !ok {
		return nil, false
	}
	proto := delta{}
	if i, ok = lit(b, i, `,"data":{"turn":`); !ok {
		return nil, false
	}
	if proto.turn, i, ok = intTok(b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"step":`); !ok {
		return nil, false
	}
	if proto.step, i, ok = intTok(b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"index":`); !ok {
		return nil, false
	}
	if proto.index, i, ok = intTok(b, i); !ok {
		return nil, false
	}
	if i, ok = lit(b, i, `,"dt":[`); !ok {
		return nil, false
	}
	var dts []int64
	for i < len(b) && b[i] != ']' {
		if len(dts) > 0 {
			if i, ok = lit(b, i, `,`); !ok {
				return nil, false
			}
		}
		var tok []byte
		if tok, i, ok = intTok(b, i); !ok {
			return nil, false
		}
		d, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return nil, false
		}
		dts = append(dts, d)
	}
	if i, ok = lit(b, i, `]`); !ok {
		return nil, false
	}
	key := `,"texts":[`
	switch tag {
	case rowText:
		proto.kind = "text-delta"
	case rowReasoning:
		proto.kind = "reasoning-delta"
	case rowToolCall:
		proto.kind = "tool-call-delta"
		key = `,"args":[`
		if i, ok = lit(b, i, `,"id":`); !ok {
			return nil, false
		}
		if proto.id, i, ok = strTok(b, i); !ok {
			return nil, false
		}
		if j, named := lit(b, i, `,"name":`); named {
			if proto.name, i, ok = strTok(b, j); !ok {
				return nil, false
			}
		}
	}
	if i, ok = lit(b, i, key); !ok {
		return nil, false
	}
	s0, err1 := strconv.Atoi(string(seq0))
	t, err2 := strconv.ParseInt(string(time0), 10, 64)
	if err1 != nil || err2 != nil || s0 < 0 {
		return nil, false
	}
	out := make([]sessionlog.Event, 0, len(dts)+1)
	for k := 0; i < len(b) && b[i] != ']'; k++ {
		if k > 0 {
			if i, ok = lit(b, i, `,`); !ok {
				return nil, false
			}
			if k-1 >= len(dts) {
				return nil, false
			}
			t += dts[k-1]
		}
		var payload []byte
		if payload, i, ok = strTok(b, i); !ok {
			return nil, false
		}
		v := proto
		v.payload = payload
		out = append(out, sessionlog.Event{Type: sessionlog.TypeAssistantChunk, Seq: s0 + k, Time: t, Data: json.RawMessage(v.chunkData())})
	}
	if len(out) == 0 || len(dts) != len(out)-1 {
		return nil, false
	}
	if i, ok = lit(b, i, `]}}`); !ok || i != len(b) {
		return nil, false
	}
	return out, true
}
