package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// CountCalls is len(Derive(events)) for a log Derive accepts, without
// building the script: the calls are counted from each chunk's turn, step
// and type, and each compaction summary's llmStreamCall mark. It reads
// less than Derive (a chunk's other members are not decoded), so for a log
// whose chunks Derive refuses it may count where Derive fails.
func CountCalls(events []sessionlog.Event) (int, error) {
	n := 0
	open := false
	var turn, step int
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeCompactionSum:
			open = false
			var d struct {
				LLMStreamCall bool            `json:"llmStreamCall"`
				RawOutput     json.RawMessage `json:"rawOutput"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return 0, fmt.Errorf("replay: seq %d (%s): %w", e.Seq, e.Type, err)
			}
			if !d.LLMStreamCall {
				continue
			}
			if d.RawOutput == nil || string(d.RawOutput) == "null" {
				return 0, fmt.Errorf("replay: seq %d (%s) marks a local stream call without rawOutput", e.Seq, e.Type)
			}
			n++
		case sessionlog.TypeAssistantChunk:
			d, ok := chunkHeadFast(e.Data)
			if !ok {
				if err := json.Unmarshal(e.Data, &d); err != nil {
					return 0, fmt.Errorf("replay: seq %d (assistant/chunk): %w", e.Seq, err)
				}
			}
			if open && (d.Turn != turn || d.Step != step) {
				open = false // the open call ended without a finish chunk
			}
			if !open {
				n++
				open, turn, step = true, d.Turn, d.Step
			}
			if d.Chunk.Type == llm.ChunkFinish {
				open = false
			}
		}
	}
	return n, nil
}

// chunkHead is what CountCalls reads of a chunk.
type chunkHead struct {
	Turn  int `json:"turn"`
	Step  int `json:"step"`
	Chunk struct {
		Type string `json:"type"`
	} `json:"chunk"`
}

// chunkHeadFast reads a chunk's turn, step and chunk type without
// decoding the rest of it (a long text delta is skipped, not unescaped):
// the members found as encoding/json finds them (sessionlog.ObjectMembers;
// a member given twice is left to encoding/json).
// ok is false unless all three are there and plain (integers in an int,
// a string without escapes); the caller then decodes the data with
// encoding/json, which says what is wrong. count_test.go holds it to
// json.Unmarshal.
func chunkHeadFast(data []byte) (d chunkHead, ok bool) {
	var head, inner [3]json.RawMessage
	if !sessionlog.ObjectMembers(data, []string{"turn", "step", "chunk"}, head[:]) {
		return d, false
	}
	turn, step, chunk := head[0], head[1], head[2]
	if turn == nil || step == nil || chunk == nil || !sessionlog.ObjectMembers(chunk, []string{"type"}, inner[:1]) {
		return d, false
	}
	typ := inner[0]
	if typ == nil {
		return d, false
	}
	if d.Turn, ok = plainInt(turn); !ok {
		return d, false
	}
	if d.Step, ok = plainInt(step); !ok {
		return d, false
	}
	if len(typ) < 2 || typ[0] != '"' || typ[len(typ)-1] != '"' || bytes.IndexByte(typ, '\\') >= 0 || !utf8.Valid(typ) {
		return d, false
	}
	d.Chunk.Type = string(typ[1 : len(typ)-1])
	return d, true
}

// plainInt is a JSON integer (digits, maybe a minus) that fits an int.
func plainInt(b []byte) (int, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil
}
