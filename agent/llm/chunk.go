package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Chunk types: the values of [Chunk.Type] that this package recognises.
const (
	ChunkBlockStart     = "block-start"
	ChunkTextDelta      = "text-delta"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// Block types: the values of [Chunk.BlockType] and [Block.Type].
const (
	BlockText      = "text"
	BlockReasoning = "reasoning"
	BlockToolCall  = "tool-call"
)

// Finish reason kinds: the values of [FinishReason.Kind], the recording
// system's vocabulary. A provider's other reasons (a content filter, an
// overloaded server) are "error" finishes whose failure names them.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool-calls"
	FinishMaxTokens = "max-tokens"
	// FinishAborted ends a stream the caller aborted; it carries a failure.
	FinishAborted = "aborted"
	FinishError   = "error"
)

// Chunk is one element of a model stream. Which fields are meaningful
// depends on Type (see the package documentation for the JSON shapes):
//
//   - block-start: Index, BlockType
//   - text-delta, reasoning-delta: Index, Text
//   - tool-call-delta: Index, ID, Name (omitted from JSON when empty), ArgumentsDelta
//   - block-end: Index, Block
//   - usage: Usage
//   - finish: Reason, and ReplayState when the stream carried one
//
// When Raw is non-nil the chunk is a variant this package does not know;
// MarshalJSON writes Raw unchanged and the other fields are ignored.
type Chunk struct {
	Type           string
	Index          int
	BlockType      string
	Text           string
	ID             string
	Name           string
	ArgumentsDelta string
	Block          *Block
	Usage          *Usage
	Reason         *FinishReason
	// ReplayState is a finish chunk's "replayState": the recording
	// system's provider envelope ({"response":…,"blocks":[…]}), a JSON
	// object kept verbatim (nil: none). See [Assembler.ReplayState].
	ReplayState json.RawMessage
	Raw         json.RawMessage
}

// Block is the completed content of a block, carried by a block-end chunk.
// Text and reasoning blocks use Text; tool-call blocks use ID, Name and
// Arguments. A block of a type this package does not know is kept verbatim
// in Raw.
type Block struct {
	Type      string
	Text      string
	ID        string
	Name      string
	Arguments string
	Raw       json.RawMessage
}

// Usage is the token accounting of one model call. InputTokens excludes
// tokens served from the provider's prompt cache, which are counted in
// CacheReadTokens. The optional fields are nil when the provider did not
// report them, and are then absent from the JSON form.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	CacheReadTokens *int64
	ReasoningTokens *int64
}

// AppendJSON appends the canonical JSON form of u to dst, as it appears in a
// usage chunk and in the "usage" member of an assistant/message:
// {"inputTokens":…,"outputTokens":…,"cacheReadTokens":…,"reasoningTokens":…},
// the last two exactly when they are non-nil.
func (u Usage) AppendJSON(dst []byte) []byte {
	b := append(dst, `{"inputTokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"outputTokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	if u.CacheReadTokens != nil {
		b = append(b, `,"cacheReadTokens":`...)
		b = strconv.AppendInt(b, *u.CacheReadTokens, 10)
	}
	if u.ReasoningTokens != nil {
		b = append(b, `,"reasoningTokens":`...)
		b = strconv.AppendInt(b, *u.ReasoningTokens, 10)
	}
	return append(b, '}')
}

// FinishReason says why a stream ended. Failure is set only for Kind
// "error".
type FinishReason struct {
	Kind    string
	Failure *Failure
}

// Failure describes a failed model call as recorded in a finish chunk. Code
// is one of the ProviderError codes (CodeAuth, …).
type Failure struct {
	Message string
	Code    string
}

// Known reports whether c is a recognised variant (Raw is nil).
func (c Chunk) Known() bool { return c.Raw == nil }

// MarshalJSON encodes c in its canonical dsh form. Note that json.Marshal
// re-escapes HTML characters and U+2028/U+2029 in a Marshaler's output; call
// MarshalJSON directly, or use a json.Encoder with SetEscapeHTML(false), to
// get the exact bytes.
func (c Chunk) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(nil)
}

// AppendJSON appends the canonical JSON form of c to dst.
func (c Chunk) AppendJSON(dst []byte) ([]byte, error) {
	if c.Raw != nil {
		return append(dst, c.Raw...), nil
	}
	if c.Index < 0 {
		return dst, fmt.Errorf("llm: encode %s chunk: negative index %d", c.Type, c.Index)
	}
	b := append(dst, `{"type":`...)
	b = sessionlog.AppendString(b, c.Type)
	switch c.Type {
	case ChunkBlockStart:
		b = appendIndex(b, c.Index)
		b = append(b, `,"blockType":`...)
		b = sessionlog.AppendString(b, c.BlockType)
	case ChunkTextDelta, ChunkReasoningDelta:
		b = appendIndex(b, c.Index)
		b = append(b, `,"text":`...)
		b = sessionlog.AppendString(b, c.Text)
	case ChunkToolCallDelta:
		b = appendIndex(b, c.Index)
		b = append(b, `,"id":`...)
		b = sessionlog.AppendString(b, c.ID)
		if c.Name != "" {
			b = append(b, `,"name":`...)
			b = sessionlog.AppendString(b, c.Name)
		}
		b = append(b, `,"argumentsDelta":`...)
		b = sessionlog.AppendString(b, c.ArgumentsDelta)
	case ChunkBlockEnd:
		if c.Block == nil {
			return dst, fmt.Errorf("llm: encode block-end chunk %d: no block", c.Index)
		}
		b = appendIndex(b, c.Index)
		b = append(b, `,"block":`...)
		var err error
		if b, err = c.Block.appendJSON(b); err != nil {
			return dst, fmt.Errorf("llm: encode block-end chunk %d: %w", c.Index, err)
		}
	case ChunkUsage:
		if c.Usage == nil {
			return dst, fmt.Errorf("llm: encode usage chunk: no usage")
		}
		b = append(b, `,"usage":`...)
		b = c.Usage.AppendJSON(b)
	case ChunkFinish:
		if c.Reason == nil {
			return dst, fmt.Errorf("llm: encode finish chunk: no reason")
		}
		b = append(b, `,"reason":{"kind":`...)
		b = sessionlog.AppendString(b, c.Reason.Kind)
		if f := c.Reason.Failure; f != nil {
			b = append(b, `,"failure":{"message":`...)
			b = sessionlog.AppendString(b, f.Message)
			b = append(b, `,"code":`...)
			b = sessionlog.AppendString(b, f.Code)
			b = append(b, '}')
		}
		b = append(b, '}')
		if c.ReplayState != nil {
			b = append(b, `,"replayState":`...)
			b = append(b, c.ReplayState...)
		}
	default:
		return dst, fmt.Errorf("llm: encode chunk: unknown type %q without raw form", c.Type)
	}
	return append(b, '}'), nil
}

func appendIndex(b []byte, i int) []byte {
	b = append(b, `,"index":`...)
	return strconv.AppendInt(b, int64(i), 10)
}

func (blk *Block) appendJSON(b []byte) ([]byte, error) {
	if blk.Raw != nil {
		return append(b, blk.Raw...), nil
	}
	b = append(b, `{"type":`...)
	b = sessionlog.AppendString(b, blk.Type)
	switch blk.Type {
	case BlockText, BlockReasoning:
		b = append(b, `,"text":`...)
		b = sessionlog.AppendString(b, blk.Text)
	case BlockToolCall:
		b = append(b, `,"id":`...)
		b = sessionlog.AppendString(b, blk.ID)
		b = append(b, `,"name":`...)
		b = sessionlog.AppendString(b, blk.Name)
		b = append(b, `,"arguments":`...)
		b = sessionlog.AppendString(b, blk.Arguments)
	default:
		return b, fmt.Errorf("unknown block type %q without raw form", blk.Type)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON decodes a chunk. Unknown chunk types are kept verbatim in
// Raw; a recognised type with a missing, mistyped or unknown member is an
// error naming the member.
func (c *Chunk) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	obj, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("llm: decode chunk: %w", err)
	}
	var typ string
	if err := obj.str("type", &typ, true); err != nil {
		return fmt.Errorf("llm: decode chunk: %w", err)
	}
	out := Chunk{Type: typ}
	switch typ {
	case ChunkBlockStart:
		err = obj.only("type", "index", "blockType")
		err = first(err, obj.index(&out.Index), obj.str("blockType", &out.BlockType, true))
	case ChunkTextDelta, ChunkReasoningDelta:
		err = obj.only("type", "index", "text")
		err = first(err, obj.index(&out.Index), obj.str("text", &out.Text, true))
	case ChunkToolCallDelta:
		err = obj.only("type", "index", "id", "name", "argumentsDelta")
		err = first(err, obj.index(&out.Index), obj.str("id", &out.ID, true),
			obj.str("name", &out.Name, false), obj.str("argumentsDelta", &out.ArgumentsDelta, true))
	case ChunkBlockEnd:
		err = first(obj.only("type", "index", "block"), obj.index(&out.Index))
		if err == nil {
			out.Block, err = decodeBlock(obj["block"])
		}
	case ChunkUsage:
		err = obj.only("type", "usage")
		if err == nil {
			out.Usage, err = decodeUsage(obj["usage"])
		}
	case ChunkFinish:
		err = obj.only("type", "reason", "replayState")
		if err == nil {
			out.Reason, err = decodeReason(obj["reason"])
		}
		if raw, ok := obj["replayState"]; ok && err == nil {
			out.ReplayState, err = decodeReplayState(raw)
		}
	default:
		out.Raw = bytes.Clone(data)
	}
	if err != nil {
		return fmt.Errorf("llm: decode %s chunk: %w", typ, err)
	}
	*c = out
	return nil
}

func decodeBlock(raw json.RawMessage) (*Block, error) {
	if raw == nil {
		return nil, fmt.Errorf(`missing member "block"`)
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	var blk Block
	if err := obj.str("type", &blk.Type, true); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	switch blk.Type {
	case BlockText, BlockReasoning:
		err = first(obj.only("type", "text"), obj.str("text", &blk.Text, true))
	case BlockToolCall:
		err = first(obj.only("type", "id", "name", "arguments"), obj.str("id", &blk.ID, true),
			obj.str("name", &blk.Name, true), obj.str("arguments", &blk.Arguments, true))
	default:
		blk.Raw = bytes.Clone(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("%s block: %w", blk.Type, err)
	}
	return &blk, nil
}

func decodeUsage(raw json.RawMessage) (*Usage, error) {
	if raw == nil {
		return nil, fmt.Errorf(`missing member "usage"`)
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	var u Usage
	err = first(obj.only("inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"),
		obj.int("inputTokens", &u.InputTokens), obj.int("outputTokens", &u.OutputTokens),
		obj.optInt("cacheReadTokens", &u.CacheReadTokens), obj.optInt("reasoningTokens", &u.ReasoningTokens))
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return &u, nil
}

// MaxReplayStateBytes bounds a finish chunk's replayState: the envelope
// names the response and one small entry per block, never content.
const MaxReplayStateBytes = 64 << 10

// decodeReplayState checks a finish chunk's replayState: a JSON object of
// at most MaxReplayStateBytes whose "blocks", when present, is an array of
// objects. It is kept as written.
func decodeReplayState(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxReplayStateBytes {
		return nil, fmt.Errorf("replayState: %d bytes, more than %d", len(raw), MaxReplayStateBytes)
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("replayState: %w", err)
	}
	if blocks, ok := obj["blocks"]; ok {
		var entries []json.RawMessage
		if err := json.Unmarshal(blocks, &entries); err != nil || entries == nil {
			return nil, fmt.Errorf(`replayState: "blocks" is not an array`)
		}
		for i, e := range entries {
			if _, err := decodeObject(bytes.TrimSpace(e)); err != nil {
				return nil, fmt.Errorf(`replayState: blocks[%d]: %w`, i, err)
			}
		}
	}
	return bytes.Clone(raw), nil
}

func decodeReason(raw json.RawMessage) (*FinishReason, error) {
	if raw == nil {
		return nil, fmt.Errorf(`missing member "reason"`)
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return nil, fmt.Errorf("reason: %w", err)
	}
	var r FinishReason
	if err := first(obj.only("kind", "failure"), obj.str("kind", &r.Kind, true)); err != nil {
		return nil, fmt.Errorf("reason: %w", err)
	}
	if fr, ok := obj["failure"]; ok {
		fobj, err := decodeObject(fr)
		if err != nil {
			return nil, fmt.Errorf("reason: failure: %w", err)
		}
		var f Failure
		err = first(fobj.only("message", "code"), fobj.str("message", &f.Message, true), fobj.str("code", &f.Code, true))
		if err != nil {
			return nil, fmt.Errorf("reason: failure: %w", err)
		}
		r.Failure = &f
	}
	return &r, nil
}

// object is a decoded JSON object whose members are still raw.
type object map[string]json.RawMessage

func decodeObject(data []byte) (object, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var obj object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// only refuses members other than the allowed ones, naming the first in
// sorted order so the error is deterministic.
func (o object) only(allowed ...string) error {
	var extra []string
	for k := range o {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return fmt.Errorf("unknown member %q", extra[0])
}

func (o object) str(key string, dst *string, required bool) error {
	raw, ok := o[key]
	if !ok {
		if required {
			return fmt.Errorf("missing member %q", key)
		}
		return nil
	}
	if len(raw) == 0 || raw[0] != '"' {
		return fmt.Errorf("member %q: want a string, got %s", key, abbreviate(raw))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("member %q: %w", key, err)
	}
	return nil
}

func (o object) int(key string, dst *int64) error {
	raw, ok := o[key]
	if !ok {
		return fmt.Errorf("missing member %q", key)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return fmt.Errorf("member %q: want an integer, got %s", key, abbreviate(raw))
	}
	*dst = n
	return nil
}

func (o object) optInt(key string, dst **int64) error {
	if _, ok := o[key]; !ok {
		return nil
	}
	var n int64
	if err := o.int(key, &n); err != nil {
		return err
	}
	*dst = &n
	return nil
}

func (o object) index(dst *int) error {
	var n int64
	if err := o.int("index", &n); err != nil {
		return err
	}
	if n < 0 || n > 1<<31-1 {
		return fmt.Errorf("member %q: out of range: %d", "index", n)
	}
	*dst = int(n)
	return nil
}

// first returns the first non-nil error.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func abbreviate(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
