package replay

import (
	"encoding/json"
	"fmt"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// CountCalls is len(Derive(events)) for a log Derive accepts, without
// building the script: the calls are counted from each chunk's turn, step
// and type, and each compaction summary's llmStreamCall mark. It reads
// less than Derive (a chunk's other members are not decoded), so for a log
// whose chunks Derive refuses it may count where Derive fails.
func CountCalls(events []sessionlog.Event) (int, error) {
	return countCalls(events, func(int) bool { return false })
}

// CountLogCalls is CountCalls of l's events; a chunk whose data l's
// decoder checked (l.DataValid) is read without checking it again.
func CountLogCalls(l *sessionlog.Log) (int, error) {
	return countCalls(l.Events(), l.DataValid)
}

// countCalls is CountCalls; valid says which seqs' data is known valid.
func countCalls(events []sessionlog.Event, valid func(seq int) bool) (int, error) {
	n := 0
	open := false
	var turn, step int
	// One head for every chunk: the decode's fallback takes its address,
	// which would put a head per chunk on the heap.
	var d chunkHead
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
			d = chunkHead{}
			var ok bool
			if valid(e.Seq) {
				d.Turn, d.Step, d.Chunk.Type, ok = sessionlog.ChunkHeadValid(e.Data)
			} else {
				d, ok = chunkHeadFast(e.Data)
			}
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
// sessionlog.ChunkHead, members found as encoding/json finds them. ok is
// false unless all three are there and plain; the caller then decodes
// the data with encoding/json, which says what is wrong.
// count_internal_test.go holds it to json.Unmarshal.
func chunkHeadFast(data []byte) (d chunkHead, ok bool) {
	d.Turn, d.Step, d.Chunk.Type, ok = sessionlog.ChunkHead(data)
	return d, ok
}
