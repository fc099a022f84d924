package sessionlogtest

import (
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Call is a tool call the Builder puts in an assistant message.
type Call struct {
	ID, Name, Arguments string
}

// Builder makes valid events in the data shapes of the dsh corpus, with
// contiguous seqs and strictly increasing times. Every method appends one
// event (or, for Assistant, a run of chunks and the message) and returns the
// seq of the event it is named after. A Builder is not safe for concurrent
// use.
type Builder struct {
	next   int
	time   int64
	turn   int
	step   int
	events []sessionlog.Event
}

// NewBuilder returns a builder whose first event has seq next.
func NewBuilder(next int) *Builder {
	return &Builder{next: next, time: 1_783_352_050_000 + int64(next)}
}

// Next is the seq the next event will have.
func (b *Builder) Next() int { return b.next }

// Take returns the events built since the last Take.
func (b *Builder) Take() []sessionlog.Event {
	out := b.events
	b.events = nil
	return out
}

func (b *Builder) add(typ string, data []byte, src []int, op *sessionlog.SurfaceOp) int {
	seq := b.next
	b.events = append(b.events, sessionlog.Event{Type: typ, Seq: seq, Time: b.time, Data: data, SourceEventSeqs: src, SurfaceOp: op})
	b.next++
	b.time++
	return seq
}

func (b *Builder) turnStep(data []byte) []byte {
	data = append(data, `{"turn":`...)
	data = strconv.AppendInt(data, int64(b.turn), 10)
	data = append(data, `,"step":`...)
	return strconv.AppendInt(data, int64(b.step), 10)
}

// TurnStart opens turn number turn.
func (b *Builder) TurnStart(turn int) int {
	b.turn, b.step = turn, 0
	return b.add(sessionlog.TypeTurnStart, []byte(`{"turn":`+strconv.Itoa(turn)+`}`), nil, nil)
}

// StepStart opens step number step of the current turn.
func (b *Builder) StepStart(step int) int {
	b.step = step
	return b.add(sessionlog.TypeStepStart, append(b.turnStep(nil), '}'), nil, nil)
}

// StepEnd closes the current step.
func (b *Builder) StepEnd() int {
	return b.add(sessionlog.TypeStepEnd, append(b.turnStep(nil), '}'), nil, nil)
}

// TurnEnd closes the current turn with a reason kind (sessionlog.EndCompleted, …).
func (b *Builder) TurnEnd(kind string) int {
	d := `{"turn":` + strconv.Itoa(b.turn) + `,"reason":{"kind":` + string(sessionlog.AppendString(nil, kind)) + `}}`
	return b.add(sessionlog.TypeTurnEnd, []byte(d), nil, nil)
}

// User appends a user/message with surfaceOp append.
func (b *Builder) User(text string) int {
	d := []byte(`{"content":[{"type":"text","text":`)
	d = sessionlog.AppendString(d, text)
	d = append(d, `}],"source":{"kind":"user"},"role":"user","id":"user-`...)
	d = strconv.AppendInt(d, int64(b.next), 10)
	d = append(d, `"}`...)
	return b.add(sessionlog.TypeUserMessage, d, nil, sessionlog.AppendOp())
}

// Header appends a full request/header snapshot with the given reason.
func (b *Builder) Header(reason string) int {
	h := sessionlog.RequestHeader{
		Config: []byte(`{"provider":"deepseek-official","model":"deepseek-v4-flash"}`),
		System: "You are a test agent.",
		Tools:  []byte(`[{"name":"bash","parameters":{"type":"object"}}]`),
	}
	return b.add(sessionlog.TypeRequestHeader, sessionlog.HeaderData(h, reason), nil, nil)
}

// Chunk appends one assistant/chunk text delta of block index.
func (b *Builder) Chunk(index int, text string) int {
	d := b.turnStep(nil)
	d = append(d, `,"chunk":{"type":"text-delta","index":`...)
	d = strconv.AppendInt(d, int64(index), 10)
	d = append(d, `,"text":`...)
	d = sessionlog.AppendString(d, text)
	d = append(d, `}}`...)
	return b.add(sessionlog.TypeAssistantChunk, d, nil, nil)
}

// Assistant streams text as one text delta per word, then appends the
// assistant/message (text and tool-call parts) citing those chunks.
func (b *Builder) Assistant(text string, calls ...Call) int {
	src := []int{}
	for i, w := range strings.SplitAfter(text, " ") {
		if w != "" || i == 0 {
			src = append(src, b.Chunk(0, w))
		}
	}
	d := b.turnStep(nil)
	d = append(d, `,"message":{"role":"assistant","content":[{"type":"text","text":`...)
	d = sessionlog.AppendString(d, text)
	d = append(d, '}')
	for _, c := range calls {
		d = append(d, `,{"type":"tool-call","id":`...)
		d = sessionlog.AppendString(d, c.ID)
		d = append(d, `,"name":`...)
		d = sessionlog.AppendString(d, c.Name)
		d = append(d, `,"arguments":`...)
		d = sessionlog.AppendString(d, c.Arguments)
		d = append(d, '}')
	}
	d = append(d, `],"source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},"id":"assistant-`...)
	d = strconv.AppendInt(d, int64(b.next), 10)
	d = append(d, `"},"usage":{"inputTokens":100,"outputTokens":10}}`...)
	return b.add(sessionlog.TypeAssistantMessage, d, src, sessionlog.AppendOp())
}

// ToolCall appends the tool/call record of c.
func (b *Builder) ToolCall(c Call) int {
	d := b.turnStep(nil)
	d = append(d, `,"callId":`...)
	d = sessionlog.AppendString(d, c.ID)
	d = append(d, `,"name":`...)
	d = sessionlog.AppendString(d, c.Name)
	d = append(d, `,"arguments":`...)
	d = sessionlog.AppendString(d, c.Arguments)
	d = append(d, '}')
	return b.add(sessionlog.TypeToolCall, d, nil, nil)
}

// ToolResult appends the tool/result of c, citing its tool/call seq.
func (b *Builder) ToolResult(callSeq int, c Call, output string) int {
	d := b.turnStep(nil)
	d = append(d, `,"message":{"source":{"kind":"tool","callId":`...)
	d = sessionlog.AppendString(d, c.ID)
	d = append(d, `},"content":[{"type":"tool-result","toolCallId":`...)
	d = sessionlog.AppendString(d, c.ID)
	d = append(d, `,"content":[{"type":"text","text":`...)
	d = sessionlog.AppendString(d, output)
	d = append(d, `}],"isError":false}],"role":"user","id":"result-`...)
	d = strconv.AppendInt(d, int64(b.next), 10)
	d = append(d, `"}}`...)
	return b.add(sessionlog.TypeToolResult, d, []int{callSeq}, sessionlog.AppendOp())
}

// Turn appends a complete turn: step 1 asks for a bash call and gets its
// result, step 2 answers. header is the request/header reason of step 1, or
// "" for none.
func (b *Builder) Turn(turn int, prompt, header string) {
	b.TurnStart(turn)
	b.StepStart(1)
	b.User(prompt)
	if header != "" {
		b.Header(header)
	}
	call := Call{ID: "call-" + strconv.Itoa(b.next), Name: "bash", Arguments: `{"command":"echo hi"}`}
	b.Assistant("I will run the command now.", call)
	cs := b.ToolCall(call)
	b.ToolResult(cs, call, "hi\n")
	b.StepEnd()
	b.StepStart(2)
	b.Assistant("The command printed hi and I am done.")
	b.StepEnd()
	b.TurnEnd(sessionlog.EndCompleted)
}

// NextTurn returns the number the next turn of events should have: one more
// than the last turn/start's.
func NextTurn(events []sessionlog.Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == sessionlog.TypeTurnStart {
			d, err := sessionlog.DecodeData[sessionlog.TurnData](&events[i])
			if err == nil {
				return d.Turn + 1
			}
		}
	}
	return 1
}

// Generate returns a valid log of n events: whole turns of Builder.Turn,
// the last one cut at n (so it may end mid-turn).
func Generate(n int) []sessionlog.Event {
	b := NewBuilder(0)
	for turn := 1; b.Next() < n; turn++ {
		reason := ""
		if turn == 1 {
			reason = sessionlog.ReasonInitial
		}
		b.Turn(turn, "please run the command and report", reason)
	}
	return b.Take()[:n]
}
