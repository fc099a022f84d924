package sessionlog

import (
	"strconv"
)

// Recovery codes carried by synthetic tool results.
const (
	// ToolOutcomeUnknown marks a recorded tool/call whose result was never logged.
	ToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
	// ToolNotStarted marks a requested tool call that never reached tool/call.
	ToolNotStarted = "TOOL_NOT_STARTED"
)

type pendingCall struct {
	id     string
	step   int
	cite   int // tool/call seq, else the assistant/message seq
	logged bool
}

// Repair returns the synthetic events that close a crashed tail: an error
// tool/result for every unanswered tool call (citing its tool/call seq, or the
// assistant/message that requested it when no tool/call was logged), a
// missing step/end and a turn/end with reason interrupted. Seqs continue the
// log; times reuse the last event's. A balanced log yields nil. Repair is
// pure: committing the closers is the caller's job.
func Repair(events []Event) []Event {
	openTurn, openStep := -1, -1
	var pending []pendingCall
	// Each turn/start and turn/end resets the whole state: only the tail
	// from the last of them is read, so a clean log costs what its last
	// turn holds, not its length.
	from := 0
	for i := len(events) - 1; i >= 0; i-- {
		if t := events[i].Type; t == TypeTurnStart || t == TypeTurnEnd {
			from = i
			break
		}
	}
	for i := from; i < len(events); i++ {
		e := &events[i]
		switch e.Type {
		case TypeTurnStart:
			d, _ := DecodeData[TurnData](e)
			openTurn, openStep, pending = d.Turn, -1, nil
		case TypeTurnEnd:
			openTurn, openStep, pending = -1, -1, nil
		case TypeStepStart:
			d, _ := DecodeData[StepData](e)
			openStep = d.Step
		case TypeStepEnd:
			openStep, pending = -1, nil
		case TypeAssistantMessage:
			d, _ := DecodeData[MessageData](e)
			m, _ := ParseMessage(d.Message)
			for _, id := range m.ToolCallIDs() {
				pending = append(pending, pendingCall{id: id, step: d.Step, cite: e.Seq})
			}
		case TypeToolCall:
			d, _ := DecodeData[ToolCallData](e)
			found := false
			for k := range pending {
				if pending[k].id == d.CallID {
					pending[k].cite, pending[k].logged, found = e.Seq, true, true
				}
			}
			if !found {
				pending = append(pending, pendingCall{id: d.CallID, step: d.Step, cite: e.Seq, logged: true})
			}
		case TypeToolResult:
			d, _ := DecodeData[MessageData](e)
			m, _ := ParseMessage(d.Message)
			for _, p := range m.Content {
				if p.Type != "tool-result" {
					continue
				}
				for k := range pending {
					if pending[k].id == p.ToolCallID {
						pending = append(pending[:k], pending[k+1:]...)
						break
					}
				}
			}
		}
	}
	if openTurn < 0 || len(events) == 0 {
		return nil
	}
	last := events[len(events)-1]
	seq, t := last.Seq+1, last.Time
	var out []Event
	for _, p := range pending {
		text := "The tool call was interrupted before it started (the session ended). Retry it if it is still needed."
		code := ToolNotStarted
		if p.logged {
			text = "The tool call was interrupted after it was recorded, but its result was never logged, so its outcome is unknown. Retry only if the operation is read-only or idempotent; otherwise check the workspace first or ask the user."
			code = ToolOutcomeUnknown
		}
		out = append(out, Event{
			Type: TypeToolResult, Seq: seq, Time: t,
			Data:            repairResultData(openTurn, p.step, p.id, seq, text, code),
			SourceEventSeqs: []int{p.cite},
			SurfaceOp:       AppendOp(),
		})
		seq++
	}
	if openStep >= 0 {
		out = append(out, Event{Type: TypeStepEnd, Seq: seq, Time: t, Data: stepData(openTurn, openStep)})
		seq++
	}
	b := []byte(`{"turn":`)
	b = strconv.AppendInt(b, int64(openTurn), 10)
	b = append(b, `,"reason":{"kind":"interrupted"}}`...)
	out = append(out, Event{Type: TypeTurnEnd, Seq: seq, Time: t, Data: b})
	return out
}

func stepData(turn, step int) []byte {
	b := []byte(`{"turn":`)
	b = strconv.AppendInt(b, int64(turn), 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(step), 10)
	return append(b, '}')
}

func repairResultData(turn, step int, callID string, seq int, text, code string) []byte {
	b := []byte(`{"turn":`)
	b = strconv.AppendInt(b, int64(turn), 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(step), 10)
	b = append(b, `,"message":{"role":"user","content":[{"type":"tool-result","toolCallId":`...)
	b = AppendString(b, callID)
	b = append(b, `,"content":[{"type":"text","text":`...)
	b = AppendString(b, text)
	b = append(b, `}],"isError":true}],"source":{"kind":"tool","callId":`...)
	b = AppendString(b, callID)
	b = append(b, `},"id":`...)
	b = AppendString(b, "interrupted-tool-result-"+callID+"-"+strconv.Itoa(seq))
	b = append(b, `},"error":{"code":`...)
	b = AppendString(b, code)
	return append(b, `}}`...)
}
