package equiv

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// facts is what the checks read of one session log: the tool calls with
// their results, the user messages that went on the surface, the assistant
// text of every step, the turn ends, and the request of every step.
type facts struct {
	calls []*callFact
	// dispatches are the tool calls run_code programs made
	// (tool/code-dispatch records), each with its result.
	dispatches []*callFact
	users      []*userFact
	texts      []stepText
	ends       []turnEnd
	steps      []*stepRequest
	hooks      []*hookFact
	// approvals are the approval/asked questions and their outcomes
	// (approvals.go).
	approvals []*approvalFact
	// titles and titleRequests are the session/title and
	// session/title-llm-request records (titles.go).
	titles        []*titleFact
	titleRequests []*titleRequestFact
	// bySeq finds the user message and the tool result an event seq holds.
	userAt   map[int]*userFact
	resultAt map[int]*callFact
	// unmatched are tool results whose call the log does not hold.
	unmatched []int
}

// callFact is one tool/call and, when the log has it, its tool/result.
type callFact struct {
	Seq, Turn, Step int
	ID, Name, Args  string
	Result          *resultFact
}

// resultFact is the model-facing outcome of one tool call.
type resultFact struct {
	Seq     int
	IsError bool
	// Text is the result's text parts, joined, with run paths replaced.
	Text string
	// Meta is the tool/result's data.meta, when present (the reference
	// keeps structured facts there).
	Meta json.RawMessage
}

// userFact is a user/message that went on the surface.
type userFact struct {
	Seq, Turn, Step int
	// Source is the message's source, raw.
	Source json.RawMessage
	// Parts are the text parts, run paths replaced.
	Parts []string
	// Replaces are the seqs a replace surface op shadowed.
	Replaces []int
	// rule is the message rule that classifies it (set by classify).
	rule *MessageRule
	// identity is what the comparison sees of it; "" with drop set when
	// it is not compared as a message.
	identity string
	drop     bool
	// seed marks a message a fork child copied from its parent: it is in
	// the child's requests but is the parent's fact, not the child's.
	seed bool
}

// stepText is the assistant text of one step.
type stepText struct {
	Seq, Turn, Step int
	Text            string
}

// turnEnd is how a turn ended.
type turnEnd struct {
	Seq, Turn int
	Kind      string
}

// stepRequest is the request one step sent, from sessionlog's
// reconstruction, with the surface seq of each message.
type stepRequest struct {
	Turn, Step, Seq int
	Header          json.RawMessage
	Messages        []json.RawMessage
	Seqs            []int
}

// extract reads the facts of one log. Run paths in result and message
// text are replaced by placeholders (see newPather).
func extract(l *Log, temp []string) (*facts, error) {
	p := newPather(l.Header.Cwd, temp)
	f := &facts{userAt: map[int]*userFact{}, resultAt: map[int]*callFact{}}
	asked := map[string]*approvalFact{}
	turn, step := 0, 0
	inTurn := false
	tr := &titleReader{prompts: map[int]string{}}
	open := map[string][]*callFact{} // call id → calls without a result yet
	// A fork child's first events are its parent's, copied (its header's
	// seedLength): they set the turn and hold messages its requests
	// carry, but their calls, texts, titles and turn ends are the
	// parent's facts, compared in the parent's log.
	own := seedEnd(l)
	for i := range l.Events {
		e := &l.Events[i]
		if i < own && e.Type != sessionlog.TypeTurnStart && e.Type != sessionlog.TypeStepStart && e.Type != sessionlog.TypeUserMessage && e.Type != sessionlog.TypeTurnEnd {
			continue
		}
		switch e.Type {
		case sessionlog.TypeTurnStart:
			d, err := sessionlog.DecodeData[sessionlog.TurnData](e)
			if err != nil {
				return nil, err
			}
			turn, step, inTurn = d.Turn, 0, true
		case sessionlog.TypeStepStart:
			d, err := sessionlog.DecodeData[sessionlog.StepData](e)
			if err != nil {
				return nil, err
			}
			turn, step = d.Turn, d.Step
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				return nil, err
			}
			c := &callFact{Seq: e.Seq, Turn: turn, Step: step, ID: d.CallID, Name: d.Name, Args: d.Arguments}
			f.calls = append(f.calls, c)
			open[d.CallID] = append(open[d.CallID], c)
		case "tool/code-dispatch":
			c, err := decodeDispatch(e, p, turn, step)
			if err != nil {
				return nil, err
			}
			f.dispatches = append(f.dispatches, c)
		case sessionlog.TypeToolResult:
			r, callID, err := decodeResult(e, p)
			if err != nil {
				return nil, err
			}
			cs := open[callID]
			if len(cs) == 0 {
				f.unmatched = append(f.unmatched, e.Seq)
				continue
			}
			cs[0].Result = r
			f.resultAt[e.Seq] = cs[0]
			open[callID] = cs[1:]
		case sessionlog.TypeUserMessage:
			if e.SurfaceOp == nil {
				continue
			}
			m, err := sessionlog.ParseMessage(e.Data)
			if err != nil {
				return nil, fmt.Errorf("%s: seq %d: %w", l.Name, e.Seq, err)
			}
			if i >= own {
				tr.notePrompt(e, m.Source)
			}
			u := &userFact{Seq: e.Seq, Turn: turn, Step: step, Source: m.Source, seed: i < own}
			for _, part := range m.Content {
				if part.Type == "text" {
					u.Parts = append(u.Parts, p.apply(part.Text))
				} else if img, ok := imageFact(part); ok {
					u.Parts = append(u.Parts, img)
				}
			}
			if e.SurfaceOp.Replace {
				u.Replaces = append(u.Replaces, e.SourceEventSeqs...)
			}
			f.users = append(f.users, u)
			f.userAt[e.Seq] = u
		case sessionlog.TypeAssistantMessage:
			d, err := sessionlog.DecodeData[sessionlog.MessageData](e)
			if err != nil {
				return nil, err
			}
			m, err := sessionlog.ParseMessage(d.Message)
			if err != nil {
				return nil, fmt.Errorf("%s: seq %d: %w", l.Name, e.Seq, err)
			}
			f.texts = append(f.texts, stepText{Seq: e.Seq, Turn: d.Turn, Step: d.Step, Text: m.Text()})
		case sessionlog.TypeSessionTitle, sessionlog.TypeTitleLLMRequest:
			place := fmt.Sprintf("after turn %d", turn)
			if inTurn {
				place = fmt.Sprintf("turn %d step %d", turn, step)
			}
			if err := f.addTitle(tr, e, place); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Name, err)
			}
		case sessionlog.TypeHookInvoked, sessionlog.TypeHookResult:
			if err := f.addHook(e, turn, step, p); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Name, err)
			}
		case sessionlog.TypeApprovalAsked, sessionlog.TypeApprovalDecided:
			if err := f.addApproval(e, turn, asked); err != nil {
				return nil, fmt.Errorf("%s: %w", l.Name, err)
			}
		case sessionlog.TypeTurnEnd:
			d, err := sessionlog.DecodeData[sessionlog.TurnEndData](e)
			if err != nil {
				return nil, err
			}
			if i >= own {
				f.ends = append(f.ends, turnEnd{Seq: e.Seq, Turn: d.Turn, Kind: d.Reason.Kind})
			}
			inTurn = false
		}
	}
	steps, err := requests(l)
	if err != nil {
		return nil, err
	}
	for _, r := range steps {
		// The seed's requests were the parent's.
		if own == 0 || own < len(l.Events) && r.Seq >= l.Events[own].Seq {
			f.steps = append(f.steps, r)
		}
	}
	classify(f)
	return f, nil
}

// decodeDispatch reads a tool/code-dispatch record: one tool call a
// run_code program made, with its result.
func decodeDispatch(e *sessionlog.Event, p *pather, turn, step int) (*callFact, error) {
	d, err := sessionlog.DecodeData[struct {
		SubCallID string          `json:"subCallId"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		IsError   bool            `json:"isError"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}](e)
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	for _, c := range d.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	return &callFact{Seq: e.Seq, Turn: turn, Step: step, ID: d.SubCallID, Name: d.Name, Args: string(d.Arguments),
		Result: &resultFact{Seq: e.Seq, IsError: d.IsError, Text: p.apply(text.String())}}, nil
}

// decodeResult reads a tool/result: its outcome and the call it answers.
func decodeResult(e *sessionlog.Event, p *pather) (*resultFact, string, error) {
	d, err := sessionlog.DecodeData[struct {
		Message sessionlog.Message `json:"message"`
		Meta    json.RawMessage    `json:"meta"`
	}](e)
	if err != nil {
		return nil, "", err
	}
	r := &resultFact{Seq: e.Seq, Meta: d.Meta}
	callID := ""
	var text strings.Builder
	for _, part := range d.Message.Content {
		if part.Type != "tool-result" {
			continue
		}
		callID, r.IsError = part.ToolCallID, part.IsError
		for _, c := range part.Content {
			if c.Type == "text" {
				text.WriteString(c.Text)
			} else if img, ok := imageFact(c); ok {
				text.WriteString(img)
			}
		}
	}
	if callID == "" {
		// A result message without a tool-result part names its call in
		// its source.
		var src struct {
			CallID string `json:"callId"`
		}
		_ = json.Unmarshal(d.Message.Source, &src)
		callID = src.CallID
	}
	r.Text = p.apply(text.String())
	return r, callID, nil
}

// requests rebuilds the request of every step with sessionlog's
// reconstruction and pairs each message with the surface seq it came
// from, so the checks can name events.
func requests(l *Log) ([]*stepRequest, error) {
	all, err := sessionlog.ReconstructAll(l.Header, l.Events)
	if err != nil {
		return nil, fmt.Errorf("%s: reconstruct the requests: %w", l.Name, err)
	}
	out := make([]*stepRequest, 0, len(all))
	live := sessionlog.New(l.Header)
	k := 0
	for i := range l.Events {
		e := &l.Events[i]
		for k < len(all) && all[k].Seq == e.Seq {
			r := all[k]
			seqs := append([]int(nil), live.Surface().Seqs()...)
			if len(seqs) != len(r.Request.Messages) {
				return nil, fmt.Errorf("%s: turn %d step %d: %d surface events but %d reconstructed messages", l.Name, r.Turn, r.Step, len(seqs), len(r.Request.Messages))
			}
			out = append(out, &stepRequest{Turn: r.Turn, Step: r.Step, Seq: r.Seq, Header: r.Request.Header, Messages: r.Request.Messages, Seqs: seqs})
			k++
		}
		if err := live.Append(*e); err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
	}
	return out, nil
}
