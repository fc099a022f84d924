package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// Entry kinds.
const (
	KindChunks = "chunks"
	KindThrow  = "throw"
	KindHang   = "hang"
	// KindIncomplete is a derived call that ended without a finish chunk
	// (the live stream threw or was cancelled). Serving it fails loudly;
	// replay.override.json must patch it.
	KindIncomplete = "incomplete"
)

// Entry is one scripted model call.
type Entry struct {
	Kind string
	// Chunks are streamed in order (for throw: before the failure).
	Chunks []llm.Chunk
	// Message and Code describe a throw.
	Message, Code string
	// ReadyFile, for hang, is created (relative to the session cwd) once
	// every chunk was served and the stream hangs, so a client can wait for
	// it before cancelling.
	ReadyFile string
	// Where names the call's origin for error messages ("turn 2 step 1").
	Where string
	// chunksGiven records whether an override entry named its chunks.
	chunksGiven bool
}

// inherit gives a hang entry that named no chunks the recorded chunks of
// the call at the same position (a finish chunk, if any, is not served).
func inherit(e Entry, derived []Entry, i int) Entry {
	if e.Kind != KindHang || e.chunksGiven || i >= len(derived) {
		return e
	}
	for _, c := range derived[i].Chunks {
		if c.Type != llm.ChunkFinish {
			e.Chunks = append(e.Chunks, c)
		}
	}
	return e
}

// Derive builds the replay script from a log's events. A call that ended
// without a finish chunk becomes a KindIncomplete entry.
func Derive(events []sessionlog.Event) ([]Entry, error) {
	var (
		script []Entry
		cur    []llm.Chunk
		key    string
	)
	closeCall := func() error {
		if len(cur) == 0 {
			return nil
		}
		kind := KindChunks
		if cur[len(cur)-1].Type != llm.ChunkFinish {
			kind = KindIncomplete
		}
		script = append(script, Entry{Kind: kind, Chunks: cur, Where: key})
		cur, key = nil, ""
		return nil
	}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeCompactionSum:
			if err := closeCall(); err != nil {
				return nil, err
			}
			entry, ok, err := summaryEntry(e)
			if err != nil {
				return nil, err
			}
			if ok {
				script = append(script, entry)
			}
		case sessionlog.TypeAssistantChunk:
			d, err := sessionlog.DecodeData[sessionlog.ChunkData](e)
			if err != nil {
				return nil, err
			}
			var c llm.Chunk
			if err := json.Unmarshal(d.Chunk, &c); err != nil {
				return nil, fmt.Errorf("replay: seq %d (assistant/chunk): %w", e.Seq, err)
			}
			k := fmt.Sprintf("turn %d step %d", d.Turn, d.Step)
			if len(cur) > 0 && k != key {
				if err := closeCall(); err != nil {
					return nil, err
				}
			}
			if len(cur) == 0 {
				key = k
			}
			cur = append(cur, c)
			if c.Type == llm.ChunkFinish {
				if err := closeCall(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := closeCall(); err != nil {
		return nil, err
	}
	return script, nil
}

// summaryEntry turns a compaction/summary marked as a local stream call into
// a canonical successful stream of its raw output.
func summaryEntry(e *sessionlog.Event) (Entry, bool, error) {
	var d struct {
		LLMStreamCall bool              `json:"llmStreamCall"`
		RawOutput     []json.RawMessage `json:"rawOutput"`
		Usage         json.RawMessage   `json:"usage"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return Entry{}, false, fmt.Errorf("replay: seq %d (%s): %w", e.Seq, e.Type, err)
	}
	if !d.LLMStreamCall {
		return Entry{}, false, nil
	}
	if d.RawOutput == nil {
		return Entry{}, false, fmt.Errorf("replay: seq %d (%s) marks a local stream call without rawOutput", e.Seq, e.Type)
	}
	var chunks []llm.Chunk
	for i, raw := range d.RawOutput {
		var blk llm.Block
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return Entry{}, false, fmt.Errorf("replay: seq %d (%s): rawOutput[%d]: %w", e.Seq, e.Type, i, err)
		}
		// Decode the block through a block-end chunk to reuse its codec.
		var end llm.Chunk
		wrapped := append(append([]byte(`{"type":"block-end","index":0,"block":`), raw...), '}')
		if err := json.Unmarshal(wrapped, &end); err != nil {
			return Entry{}, false, fmt.Errorf("replay: seq %d (%s): rawOutput[%d]: %w", e.Seq, e.Type, i, err)
		}
		blk = *end.Block
		chunks = append(chunks,
			llm.Chunk{Type: llm.ChunkBlockStart, Index: i, BlockType: probe.Type},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: i, Block: &blk})
	}
	if len(d.Usage) > 0 {
		var u llm.Chunk
		wrapped := append(append([]byte(`{"type":"usage","usage":`), d.Usage...), '}')
		if err := json.Unmarshal(wrapped, &u); err != nil {
			return Entry{}, false, fmt.Errorf("replay: seq %d (%s): usage: %w", e.Seq, e.Type, err)
		}
		chunks = append(chunks, u)
	}
	chunks = append(chunks, llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishStop}})
	return Entry{Kind: KindChunks, Chunks: chunks, Where: fmt.Sprintf("compaction summary at seq %d", e.Seq)}, true, nil
}

// wireEntry is the JSON form of an override entry.
type wireEntry struct {
	Kind      string             `json:"kind"`
	Chunks    *[]json.RawMessage `json:"chunks"`
	Message   *string            `json:"message"`
	Code      *string            `json:"code"`
	ReadyFile *string            `json:"readyFile"`
}

func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func parseEntry(raw json.RawMessage, where string) (Entry, error) {
	var w wireEntry
	if err := decodeStrict(raw, &w); err != nil {
		return Entry{}, fmt.Errorf("%s: %w", where, err)
	}
	e := Entry{Kind: w.Kind, Where: where, chunksGiven: w.Chunks != nil}
	var chunks []json.RawMessage
	if w.Chunks != nil {
		chunks = *w.Chunks
	}
	for i, c := range chunks {
		var ch llm.Chunk
		if err := json.Unmarshal(c, &ch); err != nil {
			return Entry{}, fmt.Errorf("%s: chunks[%d]: %w", where, i, err)
		}
		if !ch.Known() {
			return Entry{}, fmt.Errorf("%s: chunks[%d]: unknown chunk type", where, i)
		}
		e.Chunks = append(e.Chunks, ch)
	}
	switch w.Kind {
	case KindChunks:
		if w.Message != nil || w.Code != nil || w.ReadyFile != nil {
			return Entry{}, fmt.Errorf("%s: a chunks entry takes only \"chunks\"", where)
		}
		if len(e.Chunks) == 0 || e.Chunks[len(e.Chunks)-1].Type != llm.ChunkFinish {
			return Entry{}, fmt.Errorf("%s: a chunks entry must end with a finish chunk", where)
		}
	case KindThrow:
		if w.Message == nil || w.ReadyFile != nil {
			return Entry{}, fmt.Errorf("%s: a throw entry needs \"message\" (and optional \"code\", \"chunks\")", where)
		}
		e.Message = *w.Message
		if w.Code != nil {
			e.Code = *w.Code
		}
	case KindHang:
		if w.Message != nil || w.Code != nil {
			return Entry{}, fmt.Errorf("%s: a hang entry takes only \"chunks\" and \"readyFile\"", where)
		}
		if w.ReadyFile != nil {
			e.ReadyFile = *w.ReadyFile
		}
	default:
		return Entry{}, fmt.Errorf("%s: unknown kind %q (want chunks, throw or hang)", where, w.Kind)
	}
	return e, nil
}

// ApplyOverride reads an override document and applies it to the derived
// script: an array replaces the script, {"patches":[…]} patches positions
// (at == len appends). A hang entry without a "chunks" member serves the
// recorded chunks of the call it stands for, then hangs (how a cancelled
// stream is replayed); "chunks": [] hangs before any output.
func ApplyOverride(derived []Entry, raw []byte, file string) ([]Entry, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var entries []json.RawMessage
		if err := json.Unmarshal(trimmed, &entries); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out := make([]Entry, 0, len(entries))
		for i, r := range entries {
			e, err := parseEntry(r, fmt.Sprintf("%s: entry %d", file, i))
			if err != nil {
				return nil, err
			}
			out = append(out, inherit(e, derived, i))
		}
		return out, nil
	}
	var doc struct {
		Patches []struct {
			At    *int            `json:"at"`
			Entry json.RawMessage `json:"entry"`
		} `json:"patches"`
	}
	if err := decodeStrict(trimmed, &doc); err != nil || doc.Patches == nil {
		return nil, fmt.Errorf("%s: must be an array of entries or {\"patches\":[…]}", file)
	}
	out := append([]Entry(nil), derived...)
	seen := map[int]bool{}
	for i, p := range doc.Patches {
		where := fmt.Sprintf("%s: patch %d", file, i)
		if p.At == nil || *p.At < 0 || *p.At > len(derived) {
			return nil, fmt.Errorf("%s: at must be 0…%d (the derived script has %d calls; == length appends)", where, len(derived), len(derived))
		}
		if seen[*p.At] {
			return nil, fmt.Errorf("%s: duplicate index %d", where, *p.At)
		}
		seen[*p.At] = true
		e, err := parseEntry(p.Entry, where+".entry")
		if err != nil {
			return nil, err
		}
		e = inherit(e, derived, *p.At)
		if *p.At == len(out) {
			out = append(out, e)
		} else {
			out[*p.At] = e
		}
	}
	return out, nil
}

// Load derives the script of the log at logPath and applies overridePath
// when it is non-empty.
func Load(events []sessionlog.Event, overridePath string) ([]Entry, error) {
	derived, derr := Derive(events)
	if overridePath == "" {
		return derived, derr
	}
	raw, err := os.ReadFile(overridePath)
	if err != nil {
		return nil, fmt.Errorf("replay: override: %w", err)
	}
	if derr != nil {
		return nil, derr
	}
	return ApplyOverride(derived, raw, overridePath)
}
