package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/internal/strictjson"
	"github.com/reel-agent/reel/sessionlog"
)

// Entry kinds.
const (
	// KindChunks serves Chunks as the call's stream.
	KindChunks = "chunks"
	// KindThrow serves Chunks, then fails the call with Message and Code.
	KindThrow = "throw"
	// KindHang serves Chunks, creates ReadyFile and blocks until the call is
	// cancelled.
	KindHang = "hang"
	// KindIncomplete is a derived call that ended without a finish chunk
	// (the live stream threw or was cancelled). Serving it fails loudly;
	// replay.override.json must patch it.
	KindIncomplete = "incomplete"
)

// Entry is one scripted model call.
type Entry struct {
	// Kind is one of the Kind constants.
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
	// Want is the request the recording sent at this call (match.go), nil
	// when the recording cannot provide it (a compaction summary, a call
	// an override scripts).
	Want *Want
	// chunksGiven records whether an override entry named its chunks.
	chunksGiven bool
}

// Inherits reports whether the entry is a hang that names no chunks: it
// serves the recorded chunks of the call it stands for (see Override.Apply).
func (e Entry) Inherits() bool { return e.Kind == KindHang && !e.chunksGiven }

// inherit gives a hang entry that named no chunks the recorded chunks of
// the call at the same position (a finish chunk, if any, is not served).
func inherit(e Entry, derived []Entry, i int) Entry {
	if !e.Inherits() || i >= len(derived) {
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

// Override is a parsed replay.override.json.
type Override struct {
	// Replace is true for the whole-script (array) form: Script replaces the
	// derived script. It is false for the patches form.
	Replace bool
	// Script holds the entries of the whole-script form, in order.
	Script []Entry
	// Patches holds the patches of the patches form, in document order.
	Patches []Patch
}

// Patch replaces (or, at the derived script's length, appends) one call.
type Patch struct {
	// At is the 0-based index of the call in the derived script.
	At int
	// Entry is the call's replacement.
	Entry Entry
	at    strictjson.Value // the "at" member, for errors found by Apply
}

// Entries returns every entry the override scripts, in document order.
func (o *Override) Entries() []Entry {
	if o.Replace {
		return o.Script
	}
	out := make([]Entry, 0, len(o.Patches))
	for _, p := range o.Patches {
		out = append(out, p.Entry)
	}
	return out
}

// entryFields is, for each entry kind, the members it accepts and requires.
var entryFields = map[string]strictjson.Fields{
	KindChunks: {Allowed: []string{"kind", "chunks"}, Required: []string{"chunks"}},
	KindThrow:  {Allowed: []string{"kind", "message", "code", "chunks"}, Required: []string{"message"}},
	KindHang:   {Allowed: []string{"kind", "readyFile", "chunks"}},
}

// entryUniverse lists every member an entry may have.
var entryUniverse = []string{"kind", "chunks", "message", "code", "readyFile"}

// readyBase is what a hang's readyFile is relative to (in messages).
const readyBase = "session's cwd"

// ParseOverride parses an override document (replay.override.json), which
// scripts the model calls a log cannot: a call that threw, one that hung
// until cancelled, or one that has no local stream. ParseOverride is the
// format's only parser: reel acp --replay-override (through Load and
// ApplyOverride) and the snapshot harness's scenario loader both call it, so
// both accept and refuse exactly the same documents with the same messages.
//
// The format, decided against the reference implementation
// (deepseek-harness packages/test-support/llm-replay/src/index.ts,
// readOverrideDoc and readReplayEntry) and reel's fixtures and corpus:
//
//   - the document is an array of entries (the whole script; [] is a script
//     with no calls) or {"patches":[{"at":N,"entry":ENTRY}, …]}, which
//     replaces call N of the derived script (N == its length appends);
//     "patches": [] changes nothing. at is an integer >= 0, unique.
//   - {"kind":"chunks","chunks":[CHUNK, …]}: chunks is required and ends
//     with a finish chunk (a call without one is a thrown or hung stream:
//     script it as throw or hang).
//   - {"kind":"throw","message":"…","code":"…","chunks":[…]}: message is
//     required and non-empty; code and chunks are optional, code non-empty
//     when given.
//   - {"kind":"hang","readyFile":"…","chunks":[…]}: both optional; without
//     chunks the recorded chunks of the call it stands for are served first
//     (finish excluded). readyFile is a non-empty path relative to the
//     session's cwd that does not climb out of it.
//   - CHUNK is a stream chunk of the session log's dialect, decoded by
//     llm.Chunk (its only parser: a tool-call-delta needs its id, each type
//     has exactly its members), and of a type (and block type) reel knows.
//   - no member outside these, and no key named twice anywhere.
//
// Every refusal is a *strictjson.Error naming the file, the JSON path (such
// as "patches[0].entry.chunks[2]"), the line and column, and what is wrong.
//
// file is used in error messages only.
func ParseOverride(file string, data []byte) (*Override, error) {
	root, err := strictjson.Parse(file, data)
	if err != nil {
		return nil, err
	}
	switch root.Kind() {
	case "array":
		elems, err := root.Array()
		if err != nil {
			return nil, err
		}
		o := &Override{Replace: true, Script: make([]Entry, 0, len(elems))}
		for _, v := range elems {
			e, err := parseEntry(v)
			if err != nil {
				return nil, err
			}
			o.Script = append(o.Script, e)
		}
		return o, nil
	case "object":
		return parsePatches(root)
	}
	return nil, root.Errorf(strictjson.ErrBadValue, `must be an array of entries or {"patches":[…]}, got %s`, root.Kind())
}

// parsePatches parses the {"patches":[{"at":N,"entry":{…}}, …]} form.
func parsePatches(root strictjson.Value) (*Override, error) {
	doc, err := root.Object()
	if err != nil {
		return nil, err
	}
	top := strictjson.Fields{Allowed: []string{"patches"}, Required: []string{"patches"}}
	if err := doc.Check(top.Allowed, top, "an override object"); err != nil {
		return nil, err
	}
	list, _ := doc.Get("patches")
	elems, err := list.Array()
	if err != nil {
		return nil, err
	}
	o := &Override{}
	seen := map[int]bool{}
	for _, v := range elems {
		pm, err := v.Object()
		if err != nil {
			return nil, err
		}
		keys := strictjson.Fields{Allowed: []string{"at", "entry"}, Required: []string{"at", "entry"}}
		if err := pm.Check(keys.Allowed, keys, "a patch"); err != nil {
			return nil, err
		}
		atV, _ := pm.Get("at")
		at, err := atV.Int(0)
		if err != nil {
			return nil, err
		}
		if seen[at] {
			return nil, atV.Errorf(strictjson.ErrBadValue, "duplicate index %d", at)
		}
		seen[at] = true
		ev, _ := pm.Get("entry")
		e, err := parseEntry(ev)
		if err != nil {
			return nil, err
		}
		o.Patches = append(o.Patches, Patch{At: at, Entry: e, at: atV})
	}
	return o, nil
}

// parseEntry parses one override entry.
func parseEntry(v strictjson.Value) (Entry, error) {
	obj, err := v.Object()
	if err != nil {
		return Entry{}, err
	}
	kv, err := obj.Require("kind")
	if err != nil {
		return Entry{}, err
	}
	kind, err := kv.NonEmpty()
	if err != nil {
		return Entry{}, err
	}
	fs, ok := entryFields[kind]
	if !ok {
		return Entry{}, kv.Errorf(strictjson.ErrBadValue, "unknown kind %q: want chunks, throw or hang", kind)
	}
	if err := obj.Check(entryUniverse, fs, fmt.Sprintf("a %s entry", kind)); err != nil {
		return Entry{}, err
	}
	where := v.Path()
	if where == "" {
		where = "the document"
	}
	e := Entry{Kind: kind, Where: v.File() + ": " + where}
	for _, m := range obj.Members {
		switch m.Key {
		case "chunks":
			e.chunksGiven = true
			e.Chunks, err = parseChunks(m.Value)
		case "message":
			e.Message, err = m.Value.NonEmpty()
		case "code":
			e.Code, err = m.Value.NonEmpty()
		case "readyFile":
			e.ReadyFile, err = m.Value.LocalPath(readyBase)
		}
		if err != nil {
			return Entry{}, err
		}
	}
	if kind == KindChunks {
		if n := len(e.Chunks); n == 0 || e.Chunks[n-1].Type != llm.ChunkFinish {
			chunks, _ := obj.Get("chunks")
			return Entry{}, chunks.Errorf(strictjson.ErrBadValue, "a chunks entry must end with a finish chunk (script a thrown or hung call as throw or hang)")
		}
	}
	return e, nil
}

// knownBlockTypes are the block types an override chunk may name.
var knownBlockTypes = []string{llm.BlockText, llm.BlockReasoning, llm.BlockToolCall}

// parseChunks decodes a chunks array through llm.Chunk, refusing duplicate
// keys and the chunk and block types llm.Chunk keeps verbatim as unknown.
func parseChunks(v strictjson.Value) ([]llm.Chunk, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	var out []llm.Chunk // nil for "chunks": [], as chunksGiven tells them apart
	for _, cv := range elems {
		obj, err := cv.Object()
		if err != nil {
			return nil, err
		}
		if err := cv.NoDuplicates(); err != nil {
			return nil, err
		}
		var c llm.Chunk
		if err := c.UnmarshalJSON(cv.Raw()); err != nil {
			return nil, cv.Errorf(errors.Join(strictjson.ErrBadValue, err), "%s", strings.TrimPrefix(err.Error(), "llm: decode "))
		}
		if !c.Known() {
			t, _ := obj.Get("type")
			return nil, t.Errorf(strictjson.ErrBadValue, "unknown chunk type %q", c.Type)
		}
		if c.Type == llm.ChunkBlockStart && !slices.Contains(knownBlockTypes, c.BlockType) {
			t, _ := obj.Get("blockType")
			return nil, t.Errorf(strictjson.ErrBadValue, "unknown block type %q: want text, reasoning or tool-call", c.BlockType)
		}
		if c.Block != nil && c.Block.Raw != nil {
			b, _ := obj.Get("block")
			bo, _ := b.Object()
			t, _ := bo.Get("type")
			return nil, t.Errorf(strictjson.ErrBadValue, "unknown block type %q: want text, reasoning or tool-call", c.Block.Type)
		}
		out = append(out, c)
	}
	return out, nil
}

// Apply applies the override to the derived script: the whole-script form
// replaces it, the patches form replaces (or appends) the named calls. A
// hang entry without "chunks" serves the recorded chunks of the call at its
// position, then hangs (how a cancelled stream is replayed); "chunks": []
// hangs before any output. A patch beyond the derived script's length is a
// *strictjson.Error at its "at".
func (o *Override) Apply(derived []Entry) ([]Entry, error) {
	if o.Replace {
		out := make([]Entry, 0, len(o.Script))
		for i, e := range o.Script {
			out = append(out, inherit(e, derived, i))
		}
		return out, nil
	}
	out := append([]Entry(nil), derived...)
	for i, p := range o.Patches {
		if p.At > len(derived) {
			err := p.at.Errorf(strictjson.ErrBadValue, "at must be 0…%d (the derived script has %d calls; == length appends), got %d", len(derived), len(derived), p.At)
			if err.Path == "" { // a Patch built by hand
				err.Path = fmt.Sprintf("patches[%d].at", i)
			}
			return nil, err
		}
		e := inherit(p.Entry, derived, p.At)
		if e.Want == nil && p.At < len(derived) {
			e.Want = derived[p.At].Want // a patched answer answers the same request
		}
		if p.At == len(out) {
			out = append(out, e)
		} else {
			out[p.At] = e
		}
	}
	return out, nil
}

// ApplyOverride parses an override document (ParseOverride) and applies it
// to the derived script (Override.Apply). file is used in error messages.
func ApplyOverride(derived []Entry, raw []byte, file string) ([]Entry, error) {
	o, err := ParseOverride(file, raw)
	if err != nil {
		return nil, err
	}
	return o.Apply(derived)
}

// Load derives the script of the log at logPath and applies overridePath
// when it is non-empty.
func Load(events []sessionlog.Event, overridePath string) ([]Entry, error) {
	derived, derr := Derive(events)
	return loadOver(derived, derr, overridePath)
}

// LoadWithWants is Load whose entries also carry the request the
// recording sent (Wants, AttachWants), for a Provider with a Matcher; it
// returns the recorded requests too, for Provider.WithWants. h is the
// log's header.
func LoadWithWants(h sessionlog.Header, events []sessionlog.Event, overridePath string) ([]Entry, map[string]*Want, error) {
	derived, derr := Derive(events)
	var wants map[string]*Want
	if derr == nil {
		var err error
		if wants, err = Wants(h, events); err != nil {
			return nil, nil, err
		}
		AttachWants(derived, wants)
	}
	script, err := loadOver(derived, derr, overridePath)
	return script, wants, err
}

// loadOver applies the override at overridePath, if any, to derived.
func loadOver(derived []Entry, derr error, overridePath string) ([]Entry, error) {
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
