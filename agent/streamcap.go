package agent

import (
	"fmt"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// DefaultMaxResponseBytes is the default cap on one model response (its
// text, reasoning and tool-call arguments together): 8 MiB, about thirty
// times what a 64k-token output limit lets a real model write, so that only
// a broken or hostile endpoint reaches it.
const DefaultMaxResponseBytes = 8 << 20

// responseCapPlugin names the notice a cut response leaves the model.
const responseCapPlugin = "response-cap"

// maxResponseBytes is the engine's cap on one model response.
func (e *Engine) maxResponseBytes() int {
	if e.cfg.MaxResponseBytes > 0 {
		return e.cfg.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// responseBudget counts the bytes one model response has streamed: the text
// of text and reasoning deltas, the id, name and arguments of tool-call
// deltas (each delta repeats its id and name, and the log keeps each
// delta), a raw chunk whole, and what a block-end's block holds beyond the
// deltas already counted at its index (a block that arrives whole counts
// whole; a block rebuilt from its deltas adds nothing). It is linear in
// what it reads.
type responseBudget struct {
	limit   int
	used    int
	byIndex map[int]int
}

func newResponseBudget(limit int) *responseBudget {
	return &responseBudget{limit: limit, byIndex: map[int]int{}}
}

// admit counts c and reports whether the response still fits the cap.
// A chunk that does not fit is not counted.
func (b *responseBudget) admit(c llm.Chunk) bool {
	n := 0
	switch {
	case c.Raw != nil:
		n = len(c.Raw)
	case c.Type == llm.ChunkTextDelta || c.Type == llm.ChunkReasoningDelta:
		n = len(c.Text)
	case c.Type == llm.ChunkToolCallDelta:
		n = len(c.ID) + len(c.Name) + len(c.ArgumentsDelta)
	case c.Type == llm.ChunkBlockEnd && c.Block != nil:
		whole := len(c.Block.Text) + len(c.Block.ID) + len(c.Block.Name) + len(c.Block.Arguments) + len(c.Block.Raw)
		n = max(whole-b.byIndex[c.Index], 0)
	}
	if n > b.limit-b.used {
		return false
	}
	b.used += n
	if c.Raw == nil {
		b.byIndex[c.Index] += n
	}
	return true
}

// cutNote is what the model is told at its next step, and the user at
// once, about a response cut at limit bytes.
func cutNote(limit int) string {
	return fmt.Sprintf("[reel] The previous model response was cut off: it exceeded %d bytes (reel acp --max-response-bytes), "+
		"so reel stopped the stream and kept what had arrived. No tool call of that response was run. "+
		"Continue in smaller pieces.", limit)
}

// cutNotice is the user message that tells the model its last response was
// cut.
func (s *Session) cutNotice(limit int) sessionlog.UserMessage {
	return sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(cutNote(limit))},
		Source:  pluginSource(responseCapPlugin, "notice", fmt.Sprintf("response cut at %d bytes", limit)),
		ID:      s.eng.newID(),
	}
}

// A block's deltas are logged one by one until it has streamed
// coalesceAfter bytes; after that, consecutive deltas of the block are
// logged merged, coalesceBytes or more at a time. A long answer then costs
// the log (and the memory that holds it) a few events per 16 KiB instead
// of one per delta, while answers of ordinary length keep the stream's own
// chunks. The rule is idempotent, so replaying a log rebuilds it: a merged
// chunk is at least coalesceBytes and is logged alone again, and a shorter
// one ended where another chunk followed, as it does in the replay.
const (
	coalesceAfter = 64 << 10
	coalesceBytes = 16 << 10
)

// deltaMerger merges the late deltas of long blocks (see coalesceAfter).
type deltaMerger struct {
	streamed map[int]int // bytes of delta payload seen per block index
	held     llm.Chunk   // the merged delta not yet logged, when holding
	payload  []byte
	holding  bool
}

func newDeltaMerger() *deltaMerger { return &deltaMerger{streamed: map[int]int{}} }

// deltaPayload returns the text or arguments a delta carries; ok is false
// for every other chunk.
func deltaPayload(c llm.Chunk) (string, bool) {
	if c.Raw != nil {
		return "", false
	}
	switch c.Type {
	case llm.ChunkTextDelta, llm.ChunkReasoningDelta:
		return c.Text, true
	case llm.ChunkToolCallDelta:
		return c.ArgumentsDelta, true
	}
	return "", false
}

// add takes the next chunk of the stream and returns the chunks to log now,
// in order: a held merge that c does not continue, and c itself unless it
// is merged (and then held until it is long enough or something else
// follows).
func (m *deltaMerger) add(c llm.Chunk) []llm.Chunk {
	var out []llm.Chunk
	p, delta := deltaPayload(c)
	eligible := delta && m.streamed[c.Index] >= coalesceAfter
	if delta {
		m.streamed[c.Index] += len(p)
	}
	if m.holding && !(eligible && c.Type == m.held.Type && c.Index == m.held.Index && c.ID == m.held.ID && c.Name == m.held.Name) {
		out = append(out, m.take())
	}
	if !eligible {
		return append(out, c)
	}
	if !m.holding {
		m.held, m.holding = c, true
		m.payload = m.payload[:0]
	}
	m.payload = append(m.payload, p...)
	if len(m.payload) >= coalesceBytes {
		out = append(out, m.take())
	}
	return out
}

// take returns the held merge and stops holding.
func (m *deltaMerger) take() llm.Chunk {
	c := m.held
	if c.Type == llm.ChunkToolCallDelta {
		c.ArgumentsDelta = string(m.payload)
	} else {
		c.Text = string(m.payload)
	}
	m.held, m.holding = llm.Chunk{}, false
	return c
}

// flush returns the held merge, if any.
func (m *deltaMerger) flush() []llm.Chunk {
	if !m.holding {
		return nil
	}
	return []llm.Chunk{m.take()}
}
