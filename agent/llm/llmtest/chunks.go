package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reel-agent/reel/agent/llm"
)

// CheckChunks reports whether chunks are one complete, well-formed model
// response in the stream order the llm package documents. It returns nil,
// or an error naming the first chunk (by position, from 0) that breaks a
// rule:
//
//   - every chunk encodes ([llm.Chunk.AppendJSON]); a recognised chunk's
//     encoding decodes and encodes again to the same bytes, and a chunk kept
//     raw is valid JSON;
//   - block-start indices are 0, 1, 2, … in order of appearance, each with
//     a blockType;
//   - a delta goes into an open block (started and not yet ended) of its
//     type: text-delta into "text", reasoning-delta into "reasoning",
//     tool-call-delta into "tool-call";
//   - block-end closes an open block, with a block of the block's type,
//     and block-ends come in increasing index order;
//   - no block is open at a usage or finish chunk, and no block starts
//     after the usage chunk; there is at most one usage chunk;
//   - there is exactly one finish chunk, with a kind, and it is the last.
//
// Chunks kept raw (variants the llm package does not know) may come
// anywhere before the finish chunk.
func CheckChunks(chunks []llm.Chunk) error {
	var o order
	for i, c := range chunks {
		if err := o.add(c); err != nil {
			return fmt.Errorf("llmtest: chunk %d: %w", i, err)
		}
	}
	if err := o.done(); err != nil {
		return fmt.Errorf("llmtest: after %d chunks: %w", len(chunks), err)
	}
	return nil
}

// order checks stream order one chunk at a time; the zero value is ready.
type order struct {
	blocks   []orderBlock // by index
	lastEnd  int          // index of the last block-end, plus one
	usage    bool
	finished bool
}

type orderBlock struct {
	typ   string
	ended bool
}

// errNoFinish reports a response that has not finished.
var errNoFinish = errors.New("no finish chunk")

func (o *order) add(c llm.Chunk) error {
	enc, err := c.AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("%s chunk does not encode: %w", c.Type, err)
	}
	if o.finished {
		return fmt.Errorf("%s chunk after the finish chunk", c.Type)
	}
	if !c.Known() {
		if !json.Valid(enc) {
			return fmt.Errorf("raw %s chunk is not valid JSON: %s", c.Type, abbreviate(enc))
		}
		return nil
	}
	var d llm.Chunk
	if err := d.UnmarshalJSON(enc); err != nil {
		return fmt.Errorf("the encoding %s does not decode: %w", abbreviate(enc), err)
	}
	if again, err := d.AppendJSON(nil); err != nil || !bytes.Equal(again, enc) {
		return fmt.Errorf("the encoding %s does not round trip (%s, %v)", abbreviate(enc), abbreviate(again), err)
	}
	switch c.Type {
	case llm.ChunkBlockStart:
		if o.usage {
			return fmt.Errorf("block-start %d after the usage chunk", c.Index)
		}
		if c.Index != len(o.blocks) {
			return fmt.Errorf("block-start index %d, want %d (indices go in order of appearance)", c.Index, len(o.blocks))
		}
		if c.BlockType == "" {
			return fmt.Errorf("block-start %d without blockType", c.Index)
		}
		o.blocks = append(o.blocks, orderBlock{typ: c.BlockType})
	case llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta:
		b, err := o.open(c)
		if err != nil {
			return err
		}
		want := map[string]string{
			llm.ChunkTextDelta: llm.BlockText, llm.ChunkReasoningDelta: llm.BlockReasoning, llm.ChunkToolCallDelta: llm.BlockToolCall,
		}[c.Type]
		if b.typ != want {
			return fmt.Errorf("%s into the %s block %d", c.Type, b.typ, c.Index)
		}
	case llm.ChunkBlockEnd:
		b, err := o.open(c)
		if err != nil {
			return err
		}
		if c.Block.Type != b.typ {
			return fmt.Errorf("block-end with a %s block closes the %s block %d", c.Block.Type, b.typ, c.Index)
		}
		if c.Index < o.lastEnd {
			return fmt.Errorf("block-end %d after block-end %d (block-ends go in index order)", c.Index, o.lastEnd-1)
		}
		b.ended, o.lastEnd = true, c.Index+1
	case llm.ChunkUsage:
		if o.usage {
			return fmt.Errorf("a second usage chunk")
		}
		if i := o.openIndex(); i >= 0 {
			return fmt.Errorf("usage chunk while block %d is open", i)
		}
		o.usage = true
	case llm.ChunkFinish:
		if i := o.openIndex(); i >= 0 {
			return fmt.Errorf("finish chunk while block %d is open", i)
		}
		if c.Reason.Kind == "" {
			return fmt.Errorf("finish chunk without kind")
		}
		o.finished = true
	}
	return nil
}

// open returns the open block c addresses.
func (o *order) open(c llm.Chunk) (*orderBlock, error) {
	if c.Index >= len(o.blocks) {
		return nil, fmt.Errorf("%s for block %d, which has not started", c.Type, c.Index)
	}
	b := &o.blocks[c.Index]
	if b.ended {
		return nil, fmt.Errorf("%s for block %d, which has ended", c.Type, c.Index)
	}
	return b, nil
}

// openIndex is the index of the first open block, or -1.
func (o *order) openIndex() int {
	for i, b := range o.blocks {
		if !b.ended {
			return i
		}
	}
	return -1
}

func (o *order) done() error {
	if !o.finished {
		return errNoFinish
	}
	return nil
}

func abbreviate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
