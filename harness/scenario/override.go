package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// OverrideKind selects what a replay override does to one model call.
type OverrideKind string

// The override kinds found in the corpus.
const (
	// OverrideChunks serves Chunks as the call's stream (calls that have no
	// local stream in the log).
	OverrideChunks OverrideKind = "chunks"
	// OverrideThrow serves the optional Chunks, then fails the call with
	// Message and the optional Code (e.g. "AUTH").
	OverrideThrow OverrideKind = "throw"
	// OverrideHang serves the optional Chunks (or the recorded stream), then
	// creates ReadyFile (if set) in the run's cwd and blocks until the call
	// is cancelled.
	OverrideHang OverrideKind = "hang"
)

// Override is one entry of replay.override.json. Entries apply, in order,
// to the model calls that need them.
type Override struct {
	// Kind says what the entry does.
	Kind OverrideKind `json:"kind"`
	// Chunks is the stream to serve (required for OverrideChunks).
	Chunks []Chunk `json:"chunks,omitempty"`
	// Message is the error message of OverrideThrow.
	Message string `json:"message,omitempty"`
	// Code is the optional error code of OverrideThrow.
	Code string `json:"code,omitempty"`
	// ReadyFile is created when an OverrideHang starts hanging; it is
	// relative to the run's cwd.
	ReadyFile string `json:"readyFile,omitempty"`
	// At is the model call (0-based) the entry replaces in the script
	// derived from the log, for the {"patches":[{"at":N,"entry":…}]} form;
	// -1 in the whole-script (array) form.
	At int `json:"-"`
}

func overrideFields(k OverrideKind) (fieldSet, bool) {
	switch k {
	case OverrideChunks:
		return fieldSet{allowed: []string{"kind", "chunks"}, required: []string{"chunks"}}, true
	case OverrideThrow:
		return fieldSet{allowed: []string{"kind", "chunks", "message", "code"}, required: []string{"message"}}, true
	case OverrideHang:
		return fieldSet{allowed: []string{"kind", "chunks", "readyFile"}}, true
	}
	return fieldSet{}, false
}

// ChunkType is the type of a model stream chunk (the "chunk" of an
// assistant/chunk event).
type ChunkType string

// The chunk types of the dsh stream dialect.
const (
	// ChunkBlockStart opens block Index of BlockType.
	ChunkBlockStart ChunkType = "block-start"
	// ChunkTextDelta appends Text to text block Index.
	ChunkTextDelta ChunkType = "text-delta"
	// ChunkReasoningDelta appends Text to reasoning block Index.
	ChunkReasoningDelta ChunkType = "reasoning-delta"
	// ChunkToolCallDelta appends ArgumentsDelta to tool-call block Index.
	ChunkToolCallDelta ChunkType = "tool-call-delta"
	// ChunkBlockEnd closes block Index with its final Block.
	ChunkBlockEnd ChunkType = "block-end"
	// ChunkUsage reports token Usage.
	ChunkUsage ChunkType = "usage"
	// ChunkFinish ends the stream with Reason.
	ChunkFinish ChunkType = "finish"
)

func chunkFields(t ChunkType) (fieldSet, bool) {
	switch t {
	case ChunkBlockStart:
		return fieldSet{allowed: []string{"type", "index", "blockType"}, required: []string{"index", "blockType"}}, true
	case ChunkTextDelta, ChunkReasoningDelta:
		return fieldSet{allowed: []string{"type", "index", "text"}, required: []string{"index", "text"}}, true
	case ChunkToolCallDelta:
		return fieldSet{allowed: []string{"type", "index", "id", "name", "argumentsDelta"}, required: []string{"index"}}, true
	case ChunkBlockEnd:
		return fieldSet{allowed: []string{"type", "index", "block"}, required: []string{"index", "block"}}, true
	case ChunkUsage:
		return fieldSet{allowed: []string{"type", "usage"}, required: []string{"usage"}}, true
	case ChunkFinish:
		return fieldSet{allowed: []string{"type", "reason"}, required: []string{"reason"}}, true
	}
	return fieldSet{}, false
}

// BlockType is the type of a content block in a model stream.
type BlockType string

// The block types of the dsh stream dialect.
const (
	// BlockText is assistant text.
	BlockText BlockType = "text"
	// BlockReasoning is reasoning (thinking) text.
	BlockReasoning BlockType = "reasoning"
	// BlockToolCall is a tool call.
	BlockToolCall BlockType = "tool-call"
)

func blockFields(t BlockType) (fieldSet, bool) {
	switch t {
	case BlockText, BlockReasoning:
		return fieldSet{allowed: []string{"type", "text"}, required: []string{"text"}}, true
	case BlockToolCall:
		return fieldSet{allowed: []string{"type", "id", "name", "arguments"}, required: []string{"id", "name", "arguments"}}, true
	}
	return fieldSet{}, false
}

// Chunk is one chunk of a scripted model stream. Which fields are set
// depends on Type; Raw keeps the chunk exactly as written so a replay
// provider can serve it byte for byte.
type Chunk struct {
	// Type selects the meaningful fields.
	Type ChunkType `json:"type"`
	// Index is the block index (all but usage and finish).
	Index int `json:"index"`
	// BlockType is the type of the block a block-start opens.
	BlockType BlockType `json:"blockType,omitempty"`
	// Text is the delta of text-delta and reasoning-delta.
	Text string `json:"text,omitempty"`
	// ID is the tool call id of a tool-call-delta.
	ID string `json:"id,omitempty"`
	// Name is the tool name of a tool-call-delta.
	Name string `json:"name,omitempty"`
	// ArgumentsDelta is the argument text of a tool-call-delta.
	ArgumentsDelta string `json:"argumentsDelta,omitempty"`
	// Block is the finished block of a block-end.
	Block *Block `json:"block,omitempty"`
	// Usage is the token usage of a usage chunk.
	Usage *Usage `json:"usage,omitempty"`
	// Reason is the finish reason of a finish chunk.
	Reason *FinishReason `json:"reason,omitempty"`
	// Raw is the chunk's JSON as it appears in the file.
	Raw json.RawMessage `json:"-"`
}

// Block is a finished stream block.
type Block struct {
	// Type is the block type.
	Type BlockType `json:"type"`
	// Text is the text of a text or reasoning block.
	Text string `json:"text,omitempty"`
	// ID is the tool call id.
	ID string `json:"id,omitempty"`
	// Name is the tool name.
	Name string `json:"name,omitempty"`
	// Arguments is the tool call's argument JSON text.
	Arguments string `json:"arguments,omitempty"`
}

// Usage is the token usage reported by a usage chunk.
type Usage struct {
	// InputTokens counts prompt tokens.
	InputTokens int `json:"inputTokens"`
	// OutputTokens counts completion tokens.
	OutputTokens int `json:"outputTokens"`
	// CacheReadTokens counts prompt tokens served from cache (optional).
	CacheReadTokens int `json:"cacheReadTokens,omitempty"`
	// ReasoningTokens counts reasoning tokens (optional).
	ReasoningTokens int `json:"reasoningTokens,omitempty"`
}

// FinishReason ends a stream.
type FinishReason struct {
	// Kind is e.g. "stop", "tool-calls", "error".
	Kind string `json:"kind"`
	// Failure details an error finish (optional).
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is the error detail of a finish reason.
type Failure struct {
	// Code is an optional machine-readable code.
	Code string `json:"code,omitempty"`
	// Message is the human-readable error.
	Message string `json:"message"`
}

// ParseOverride parses replay.override.json content strictly. file is used
// only in error messages. Every error is an *Error.
func ParseOverride(file string, data []byte) ([]Override, error) {
	d := decoder{file: file}
	if err := d.syntax(data); err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return d.patches(data)
	}
	elems, err := d.array("", data)
	if err != nil {
		return nil, err
	}
	return d.entries("", elems, -1)
}

// patches parses the {"patches":[{"at":N,"entry":{…}}]} form.
func (d decoder) patches(data []byte) ([]Override, error) {
	members, err := d.object("", data)
	if err != nil {
		return nil, err
	}
	top := []string{"patches"}
	if err := d.check("", members, top, fieldSet{allowed: top, required: top}, "override"); err != nil {
		return nil, err
	}
	raw, _ := lookup(members, "patches")
	elems, err := d.array("patches", raw)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errorf("patches", ErrBadValue, "must not be empty")
	}
	var out []Override
	seen := map[int]bool{}
	for i, e := range elems {
		f := index("patches", i)
		pm, err := d.object(f, e)
		if err != nil {
			return nil, err
		}
		keys := []string{"at", "entry"}
		if err := d.check(f, pm, keys, fieldSet{allowed: keys, required: keys}, "patch"); err != nil {
			return nil, err
		}
		atRaw, _ := lookup(pm, "at")
		var at int
		if err := json.Unmarshal(atRaw, &at); err != nil || at < 0 {
			return nil, d.errorf(dot(f, "at"), ErrBadValue, "must be a non-negative integer")
		}
		if seen[at] {
			return nil, d.errorf(dot(f, "at"), ErrBadValue, "duplicate index %d", at)
		}
		seen[at] = true
		entry, _ := lookup(pm, "entry")
		o, err := d.entries(dot(f, "entry"), []json.RawMessage{entry}, at)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	return out, nil
}

// entries parses override entries; at is recorded on each (-1: array form).
func (d decoder) entries(field string, elems []json.RawMessage, at int) ([]Override, error) {
	if len(elems) == 0 {
		return nil, d.errorf(field, ErrBadValue, "an override file must have at least one entry")
	}
	out := make([]Override, 0, len(elems))
	universe := []string{"kind", "chunks", "message", "code", "readyFile"}
	for i, e := range elems {
		f := index(field, i)
		if at >= 0 {
			f = field
		}
		members, err := d.object(f, e)
		if err != nil {
			return nil, err
		}
		kindRaw, ok := lookup(members, "kind")
		if !ok {
			return nil, d.errorf(f, ErrMissingField, "missing field %q", "kind")
		}
		kind, err := d.nonEmpty(dot(f, "kind"), kindRaw)
		if err != nil {
			return nil, err
		}
		fs, ok := overrideFields(OverrideKind(kind))
		if !ok {
			return nil, d.errorf(dot(f, "kind"), ErrBadValue, "unknown override kind %q (want chunks, throw or hang)", kind)
		}
		if err := d.check(f, members, universe, fs, fmt.Sprintf("override kind %q", kind)); err != nil {
			return nil, err
		}
		o := Override{Kind: OverrideKind(kind), At: at}
		for _, m := range members {
			mf := dot(f, m.key)
			switch m.key {
			case "chunks":
				o.Chunks, err = d.chunks(mf, m.val, o.Kind == OverrideChunks)
			case "message":
				o.Message, err = d.nonEmpty(mf, m.val)
			case "code":
				o.Code, err = d.nonEmpty(mf, m.val)
			case "readyFile":
				o.ReadyFile, err = d.localPath(mf, m.val, "run's cwd")
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func (d decoder) chunks(field string, raw json.RawMessage, nonEmpty bool) ([]Chunk, error) {
	elems, err := d.array(field, raw)
	if err != nil {
		return nil, err
	}
	if nonEmpty && len(elems) == 0 {
		return nil, d.errorf(field, ErrBadValue, "must not be empty")
	}
	var out []Chunk
	universe := []string{"type", "index", "blockType", "text", "id", "name", "argumentsDelta", "block", "usage", "reason"}
	for i, e := range elems {
		f := index(field, i)
		members, err := d.object(f, e)
		if err != nil {
			return nil, err
		}
		typRaw, ok := lookup(members, "type")
		if !ok {
			return nil, d.errorf(f, ErrMissingField, "missing field %q", "type")
		}
		typ, err := d.nonEmpty(dot(f, "type"), typRaw)
		if err != nil {
			return nil, err
		}
		fs, ok := chunkFields(ChunkType(typ))
		if !ok {
			return nil, d.errorf(dot(f, "type"), ErrBadValue, "unknown chunk type %q", typ)
		}
		if err := d.check(f, members, universe, fs, fmt.Sprintf("chunk type %q", typ)); err != nil {
			return nil, err
		}
		c := Chunk{Type: ChunkType(typ), Raw: append(json.RawMessage(nil), e...)}
		for _, m := range members {
			mf := dot(f, m.key)
			switch m.key {
			case "index":
				c.Index, err = d.integer(mf, m.val, 0)
			case "blockType":
				var bt string
				if bt, err = d.nonEmpty(mf, m.val); err == nil {
					if _, ok := blockFields(BlockType(bt)); !ok {
						err = d.errorf(mf, ErrBadValue, "unknown block type %q", bt)
					}
				}
				c.BlockType = BlockType(bt)
			case "text":
				c.Text, err = d.str(mf, m.val)
			case "id":
				c.ID, err = d.nonEmpty(mf, m.val)
			case "name":
				c.Name, err = d.nonEmpty(mf, m.val)
			case "argumentsDelta":
				c.ArgumentsDelta, err = d.str(mf, m.val)
			case "block":
				c.Block, err = d.block(mf, m.val)
			case "usage":
				c.Usage, err = d.usage(mf, m.val)
			case "reason":
				c.Reason, err = d.reason(mf, m.val)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (d decoder) block(field string, raw json.RawMessage) (*Block, error) {
	members, err := d.object(field, raw)
	if err != nil {
		return nil, err
	}
	typRaw, ok := lookup(members, "type")
	if !ok {
		return nil, d.errorf(field, ErrMissingField, "missing field %q", "type")
	}
	typ, err := d.nonEmpty(dot(field, "type"), typRaw)
	if err != nil {
		return nil, err
	}
	fs, ok := blockFields(BlockType(typ))
	if !ok {
		return nil, d.errorf(dot(field, "type"), ErrBadValue, "unknown block type %q", typ)
	}
	if err := d.check(field, members, []string{"type", "text", "id", "name", "arguments"}, fs, fmt.Sprintf("block type %q", typ)); err != nil {
		return nil, err
	}
	b := &Block{Type: BlockType(typ)}
	for _, m := range members {
		mf := dot(field, m.key)
		switch m.key {
		case "text":
			b.Text, err = d.str(mf, m.val)
		case "id":
			b.ID, err = d.nonEmpty(mf, m.val)
		case "name":
			b.Name, err = d.nonEmpty(mf, m.val)
		case "arguments":
			b.Arguments, err = d.str(mf, m.val)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (d decoder) usage(field string, raw json.RawMessage) (*Usage, error) {
	members, err := d.object(field, raw)
	if err != nil {
		return nil, err
	}
	fs := fieldSet{
		allowed:  []string{"inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"},
		required: []string{"inputTokens", "outputTokens"},
	}
	if err := d.check(field, members, fs.allowed, fs, "usage"); err != nil {
		return nil, err
	}
	u := &Usage{}
	for _, m := range members {
		n, err := d.integer(dot(field, m.key), m.val, 0)
		if err != nil {
			return nil, err
		}
		switch m.key {
		case "inputTokens":
			u.InputTokens = n
		case "outputTokens":
			u.OutputTokens = n
		case "cacheReadTokens":
			u.CacheReadTokens = n
		case "reasoningTokens":
			u.ReasoningTokens = n
		}
	}
	return u, nil
}

func (d decoder) reason(field string, raw json.RawMessage) (*FinishReason, error) {
	members, err := d.object(field, raw)
	if err != nil {
		return nil, err
	}
	fs := fieldSet{allowed: []string{"kind", "failure"}, required: []string{"kind"}}
	if err := d.check(field, members, fs.allowed, fs, "a finish reason"); err != nil {
		return nil, err
	}
	r := &FinishReason{}
	for _, m := range members {
		mf := dot(field, m.key)
		switch m.key {
		case "kind":
			r.Kind, err = d.nonEmpty(mf, m.val)
		case "failure":
			r.Failure, err = d.failure(mf, m.val)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (d decoder) failure(field string, raw json.RawMessage) (*Failure, error) {
	members, err := d.object(field, raw)
	if err != nil {
		return nil, err
	}
	fs := fieldSet{allowed: []string{"code", "message"}, required: []string{"message"}}
	if err := d.check(field, members, fs.allowed, fs, "a failure"); err != nil {
		return nil, err
	}
	f := &Failure{}
	for _, m := range members {
		mf := dot(field, m.key)
		switch m.key {
		case "code":
			f.Code, err = d.nonEmpty(mf, m.val)
		case "message":
			f.Message, err = d.nonEmpty(mf, m.val)
		}
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}
