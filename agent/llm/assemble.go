package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// ErrNoFinish is returned by [Assembler.Finish] when the stream
// ended without a finish chunk, or its last finish chunk had an empty kind.
var ErrNoFinish = errors.New("llm: the model stream ended without a finish chunk")

// ErrStreamFailure is the cause ([ProviderError.Err]) of the
// [*ProviderError] an [Assembler] returns for a finish chunk of kind
// "error": the failure was reported inside the stream, so the chunk that
// records it is already among the stream's chunks. Test for it with
// errors.Is.
var ErrStreamFailure = errors.New("llm: failure reported by the stream")

// Assembler rebuilds the assistant message of one model call from the
// chunks of its stream: the content blocks, the usage, how the stream
// finished, and the tool calls to run. It is meant to be the one place that
// knows how chunks combine, for the agent loop and the compaction summary
// alike.
//
// Add every chunk in stream order. The rules are the ones the agent loop
// has always built an assistant/message by (so that replaying a recorded
// log rebuilds the recorded messages byte for byte):
//
//   - block-start opens a new block at its index, of its blockType; a later
//     block-start at the same index opens another block (both are kept).
//   - a text-delta, reasoning-delta or tool-call-delta appends to the block
//     most recently opened at its index; when there is none it opens one,
//     of type "text", "reasoning" or "tool-call" after the delta's type.
//     Deltas append whatever the block's type (the text of a text-delta
//     into a tool-call block is kept, but the block's part does not show
//     it). A tool-call-delta's non-empty id and
//     name replace the block's, so the last non-empty ones win (every
//     provider in this module repeats the same id and name on each delta).
//   - block-end replaces the content of the block most recently opened at
//     its index with its block (the last block-end wins); a block-end at an
//     index with no open block is ignored.
//   - a usage chunk sets the usage (the last one wins).
//   - a finish chunk sets the finish reason (the last one wins). Kind
//     "error" with a failure makes Add return a [*ProviderError].
//   - any other chunk, including variants kept raw, changes nothing.
//
// The zero value is ready to use. An Assembler is not safe for concurrent
// use.
type Assembler struct {
	blocks    []*asmBlock
	byIndex   map[int]*asmBlock
	usage     *Usage
	finish    *FinishReason
	replay    json.RawMessage // the last finish chunk's replayState
	err       error
	skipDelta bool
}

// asmBlock is one block being assembled.
type asmBlock struct {
	typ      string // from block-start, or after the first delta's type
	text     strings.Builder
	textLen  int // bytes of text the deltas carried (kept or not)
	id, name string
	args     strings.Builder
	end      *Block // the last block-end's block, copied
	// enc, set by AddEnd for a text or reasoning block-end, is the
	// encoding of end, whose Text is then dropped.
	enc json.RawMessage
}

// SkipDeltaText makes a fresh Assembler not keep the text and arguments
// the deltas carry, for a caller that keeps the chunks anyway and would
// otherwise hold a long answer twice (the stream's block-end repeats it).
// Everything else is assembled as before, and [Assembler.Add] returns the
// same deltas. The blocks, parts, text and tool calls are then right when
// [Assembler.Whole] reports true; otherwise the caller assembles the
// chunks again with an Assembler that keeps the text.
func (a *Assembler) SkipDeltaText() { a.skipDelta = true }

// Whole reports whether every block was closed by a block-end of a known
// type, or of another type kept raw, so that no block's finished form
// depends on the text of its deltas.
func (a *Assembler) Whole() bool {
	for _, b := range a.blocks {
		e := b.end
		if e == nil {
			return false
		}
		switch e.Type {
		case BlockText, BlockReasoning:
			if b.typ == BlockToolCall {
				return false // its tool call is built from its arguments
			}
		case BlockToolCall:
		default:
			if e.Raw == nil {
				return false
			}
			if b.typ == BlockToolCall {
				return false
			}
		}
	}
	return true
}

// AddEnd applies the block-end chunk c as [Assembler.Add] does, where enc
// is the encoding of c.Block as the chunk's JSON carries it (for instance
// the block member of the logged chunk, shared). When c finishes a text or
// reasoning block, the Assembler then keeps enc instead of the block's
// text: [Assembler.Blocks] gives that block with Raw set to enc (the bytes
// its typed form encodes to), [Assembler.Parts] gives enc itself, and
// [Assembler.Text] decodes it. A caller that keeps the chunk anyway so
// holds a long answer once, not once more as a string. Any other chunk, or
// an enc that does not begin and end as the encoding of a text or
// reasoning block does, is applied as by Add; enc is not checked further.
func (a *Assembler) AddEnd(c Chunk, enc json.RawMessage) (Delta, error) {
	d, err := a.Add(c)
	if err != nil || c.Type != ChunkBlockEnd || c.Block == nil || c.Block.Raw != nil {
		return d, err
	}
	b := a.byIndex[c.Index]
	if b == nil || b.end == nil || (b.end.Type != BlockText && b.end.Type != BlockReasoning) {
		return d, err
	}
	head := sessionlog.AppendString(append(make([]byte, 0, 32), `{"type":`...), b.end.Type)
	head = append(head, `,"text":"`...)
	if !bytes.HasPrefix(enc, head) || !bytes.HasSuffix(enc, []byte(`"}`)) {
		return d, err
	}
	b.end.Text, b.enc = "", enc
	return d, err
}

// Delta is what one chunk adds to what a user interface shows as the
// response streams: the text of a text-delta (Type "text") or of a
// reasoning-delta (Type "reasoning"), at the chunk's Index, and the text
// of a text or reasoning block-end whose block had no delta (it arrived
// whole). Every other chunk gives the zero Delta (Type ""). Text may be
// empty; a text or reasoning delta is reported even then.
type Delta struct {
	Type  string
	Index int
	Text  string
}

// ToolCall is a tool call the model made: a block opened as a tool call.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Add applies one chunk (see [Assembler] for the rules) and returns what it
// adds to the visible output. For a finish chunk of kind "error" with a
// failure it returns a [*ProviderError] with the failure's Code and Message,
// Status 0 and Err [ErrStreamFailure]. After an error, Add ignores its
// chunk and returns the same error again.
func (a *Assembler) Add(c Chunk) (Delta, error) {
	if a.err != nil {
		return Delta{}, a.err
	}
	switch c.Type {
	case ChunkBlockStart:
		a.open(c.Index, c.BlockType)
	case ChunkTextDelta, ChunkReasoningDelta:
		typ := BlockText
		if c.Type == ChunkReasoningDelta {
			typ = BlockReasoning
		}
		b := a.at(c.Index, typ)
		b.textLen += len(c.Text)
		if !a.skipDelta {
			b.text.WriteString(c.Text)
		}
		return Delta{Type: typ, Index: c.Index, Text: c.Text}, nil
	case ChunkToolCallDelta:
		b := a.at(c.Index, BlockToolCall)
		if c.ID != "" {
			b.id = c.ID
		}
		if c.Name != "" {
			b.name = c.Name
		}
		if !a.skipDelta {
			b.args.WriteString(c.ArgumentsDelta)
		}
	case ChunkBlockEnd:
		if b := a.byIndex[c.Index]; b != nil && c.Block != nil {
			end := *c.Block
			end.Raw = bytes.Clone(c.Block.Raw)
			streamed := b.textLen > 0 || b.end != nil
			b.end, b.enc = &end, nil
			// What the deltas built is not read again once a block-end of
			// a known type stands for the block: let it go (a long answer
			// is otherwise held twice, here and in the block-end).
			switch end.Type {
			case BlockText, BlockReasoning:
				b.text = strings.Builder{}
			case BlockToolCall:
				b.text, b.args = strings.Builder{}, strings.Builder{}
			}
			// A text block that arrives whole, with no delta before its
			// end, is shown as it ends (the reference shows it too).
			if !streamed && end.Text != "" && end.Type == b.typ && (b.typ == BlockText || b.typ == BlockReasoning) {
				return Delta{Type: b.typ, Index: c.Index, Text: end.Text}, nil
			}
		}
	case ChunkUsage:
		if c.Usage != nil {
			u := *c.Usage
			u.CacheReadTokens = cloneInt(u.CacheReadTokens)
			u.ReasoningTokens = cloneInt(u.ReasoningTokens)
			a.usage = &u
		}
	case ChunkFinish:
		if c.Reason != nil {
			r := FinishReason{Kind: c.Reason.Kind}
			if f := c.Reason.Failure; f != nil {
				r.Failure = &Failure{Message: f.Message, Code: f.Code}
			}
			a.finish = &r
			a.replay = bytes.Clone(c.ReplayState)
			if r.Kind == FinishError && r.Failure != nil {
				a.err = &ProviderError{Code: r.Failure.Code, Message: r.Failure.Message, Err: ErrStreamFailure}
				return Delta{}, a.err
			}
		}
	}
	return Delta{}, nil
}

func cloneInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// open starts a block of type typ at index i.
func (a *Assembler) open(i int, typ string) *asmBlock {
	if a.byIndex == nil {
		a.byIndex = map[int]*asmBlock{}
	}
	b := &asmBlock{typ: typ}
	a.byIndex[i] = b
	a.blocks = append(a.blocks, b)
	return b
}

// at returns the block open at index i, opening one of type typ if none is.
func (a *Assembler) at(i int, typ string) *asmBlock {
	if b := a.byIndex[i]; b != nil {
		return b
	}
	return a.open(i, typ)
}

// block returns the finished form of b: its block-end's block when that has
// a known type or a raw form, otherwise the block built from its deltas (a
// block opened with a type this package does not know is a text block).
func (b *asmBlock) block() Block {
	if e := b.end; e != nil {
		switch e.Type {
		case BlockText, BlockReasoning:
			if b.enc != nil {
				return Block{Type: e.Type, Raw: b.enc}
			}
			return Block{Type: e.Type, Text: e.Text}
		case BlockToolCall:
			return Block{Type: BlockToolCall, ID: e.ID, Name: e.Name, Arguments: e.Arguments}
		}
		if e.Raw != nil {
			return Block{Type: e.Type, Raw: bytes.Clone(e.Raw)}
		}
	}
	switch b.typ {
	case BlockToolCall:
		return Block{Type: BlockToolCall, ID: b.id, Name: b.name, Arguments: b.args.String()}
	case BlockReasoning:
		return Block{Type: BlockReasoning, Text: b.text.String()}
	}
	return Block{Type: BlockText, Text: b.text.String()}
}

// finalType is the type of b's finished form (see block).
func (b *asmBlock) finalType() string {
	if e := b.end; e != nil {
		switch e.Type {
		case BlockText, BlockReasoning, BlockToolCall:
			return e.Type
		}
		if e.Raw != nil {
			return e.Type
		}
	}
	if b.typ == BlockToolCall || b.typ == BlockReasoning {
		return b.typ
	}
	return BlockText
}

// keptMask is the one keep/drop decision over the blocks, the recording
// system's: a response cut at the token limit (finish "max-tokens") drops
// its tool-call blocks, which may be truncated and are never run; nil
// when every block is kept.
func (a *Assembler) keptMask() []bool {
	if a.finish == nil || a.finish.Kind != FinishMaxTokens {
		return nil
	}
	mask := make([]bool, len(a.blocks))
	dropped := false
	for i, b := range a.blocks {
		mask[i] = b.finalType() != BlockToolCall
		dropped = dropped || !mask[i]
	}
	if !dropped {
		return nil
	}
	return mask
}

// kept returns the blocks [Assembler.Blocks] gives, in order.
func (a *Assembler) kept() []*asmBlock {
	mask := a.keptMask()
	if mask == nil {
		return a.blocks
	}
	var out []*asmBlock
	for i, b := range a.blocks {
		if mask[i] {
			out = append(out, b)
		}
	}
	return out
}

// ReplayState returns the replayState of the last finish chunk, with its
// per-block entries pruned in step with [Assembler.Blocks] as the
// recording system prunes them: nil when there was none, or when its
// "blocks" has not one entry per block seen; unchanged when it has no
// "blocks" or nothing was dropped; otherwise {"response":…,"blocks":[…]}
// with the entries of the kept blocks only.
func (a *Assembler) ReplayState() json.RawMessage {
	if a.replay == nil {
		return nil
	}
	obj, err := decodeObject(a.replay)
	if err != nil {
		return nil
	}
	rawBlocks, ok := obj["blocks"]
	if !ok {
		return bytes.Clone(a.replay)
	}
	var entries []json.RawMessage
	if json.Unmarshal(rawBlocks, &entries) != nil || len(entries) != len(a.blocks) {
		return nil
	}
	mask := a.keptMask()
	if mask == nil {
		return bytes.Clone(a.replay)
	}
	b := []byte{'{'}
	if resp, ok := obj["response"]; ok {
		b = append(append(b, `"response":`...), resp...)
		b = append(b, ',')
	}
	b = append(b, `"blocks":[`...)
	n := 0
	for i, e := range entries {
		if !mask[i] {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
		n++
	}
	return append(b, ']', '}')
}

// Blocks returns the finished blocks in the order they were opened. Each is
// a text, reasoning or tool-call block, or a block of another type kept
// verbatim in Raw (from a block-end); Raw is nil for the known types,
// except a text or reasoning block finished by [Assembler.AddEnd], which
// gives the encoding it keeps instead of its Text. A response finished at
// the token limit has no tool-call blocks (see keptMask); Parts, Text and
// ToolCalls follow the same decision.
func (a *Assembler) Blocks() []Block {
	kept := a.kept()
	out := make([]Block, len(kept))
	for i, b := range kept {
		out[i] = b.block()
	}
	return out
}

// Parts returns the content parts of the assistant message, one per block
// of [Assembler.Blocks], each in its canonical dsh form:
//
//	{"type":"text","text":…}
//	{"type":"reasoning","text":…}
//	{"type":"tool-call","id":…,"name":…,"arguments":…}
//
// or, for a block of another type, the bytes of its block-end's block
// unchanged. Strings are written by [sessionlog.AppendString].
func (a *Assembler) Parts() []json.RawMessage {
	kept := a.kept()
	out := make([]json.RawMessage, len(kept))
	for i, b := range kept {
		blk := b.block()
		out[i], _ = blk.appendJSON(nil) // a finished block always encodes
	}
	return out
}

// Content returns the JSON array of [Assembler.Parts]: the "content" member
// of the assistant message ("[]" when there are no blocks).
func (a *Assembler) Content() json.RawMessage {
	b := []byte{'['}
	for i, p := range a.Parts() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, ']')
}

// Text returns the text of the text blocks of [Assembler.Blocks],
// concatenated in order. Reasoning is not included.
func (a *Assembler) Text() string {
	var sb strings.Builder
	for _, b := range a.kept() {
		blk := b.block()
		if blk.Type != BlockText {
			continue
		}
		if blk.Raw != nil {
			var d struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(blk.Raw, &d) // AddEnd's enc is a text block's encoding
			blk.Text = d.Text
		}
		sb.WriteString(blk.Text)
	}
	return sb.String()
}

// ToolCalls returns the tool calls to run, in block order: the blocks opened
// as tool calls (by a block-start of blockType "tool-call" or by a
// tool-call-delta). A block-end of type "tool-call" supplies the ID, Name and
// Arguments; otherwise they are those of the deltas.
func (a *Assembler) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, b := range a.kept() {
		if b.typ != BlockToolCall {
			continue
		}
		if e := b.end; e != nil && e.Type == BlockToolCall {
			out = append(out, ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments})
			continue
		}
		out = append(out, ToolCall{ID: b.id, Name: b.name, Arguments: b.args.String()})
	}
	return out
}

// Usage returns the usage of the last usage chunk, or nil when there was
// none. [Usage.AppendJSON] gives its canonical encoding, the "usage" member
// of the assistant/message.
func (a *Assembler) Usage() *Usage {
	if a.usage == nil {
		return nil
	}
	u := *a.usage
	u.CacheReadTokens = cloneInt(u.CacheReadTokens)
	u.ReasoningTokens = cloneInt(u.ReasoningTokens)
	return &u
}

// Finish reports how the stream finished; call it once the stream has
// returned io.EOF. It returns the reason of the last finish chunk and:
//
//   - nil when that reason has a kind other than "error", or is "error"
//     without a failure (which the agent treats as an ordinary end);
//   - the [*ProviderError] that [Assembler.Add] returned, for kind "error"
//     with a failure;
//   - [ErrNoFinish] when there was no finish chunk or the last one's kind
//     is empty (the reason is then the zero value).
func (a *Assembler) Finish() (FinishReason, error) {
	if a.finish == nil {
		return FinishReason{}, ErrNoFinish
	}
	r := *a.finish
	if r.Failure != nil {
		f := *r.Failure
		r.Failure = &f
	}
	if a.err != nil {
		return r, a.err
	}
	if r.Kind == "" {
		return r, ErrNoFinish
	}
	return r, nil
}
