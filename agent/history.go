package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// History replays the session's conversation to u in log order, the way a
// live turn reported it: the user's prompts (their images and resource
// links as sent when u is a PromptReplay), thoughts, answer text, tool
// calls (titles, kinds, absolute locations) with their final status,
// output and file diffs, the plans, and hooks' context as thoughts.
// Messages the engine entered for the model (instruction files, reminders,
// compaction summaries) are not retold.
func (s *Session) History(ctx context.Context, u Updates) {
	s.mu.Lock()
	lg := s.log.Log()
	events := lg.Events()
	usage := s.usage
	s.mu.Unlock()
	// The arguments of the todo_write calls, by call id: the plan each
	// showed is retold after its result.
	var todos map[string]json.RawMessage
	// The tools as the live calls were described (looked up once, not per
	// call).
	var set *tools.Set
	anchor := -1 // the last request/context: the step of the next assistant message
	// The resource links of prompts (prompt/links), by message id.
	var links map[string]map[int]sessionlog.PromptLink
	// The turns a rewind took back are not retold (rewind.go).
	rewound := rewoundSpans(events)
	// Plain records are retold from their bytes when u can take them.
	plain, _ := u.(PlainRetell)
	var parts []sessionlog.PlainPart
	var texts [][]byte
	for i := range events {
		e := &events[i]
		if inSpans(rewound, i) {
			continue
		}
		switch e.Type {
		case sessionlog.TypeRequestContext:
			anchor = e.Seq
		case sessionlog.TypeUserMessage:
			// What the user typed, and what hooks added (shown as the
			// live turn showed it); instruction files, reminders and
			// compaction summaries are the engine's messages to the model.
			// The event is decoded once, its source with it. A plain
			// prompt of the user's is retold from its bytes.
			if plain != nil && links == nil && lg.DataValid(e.Seq) {
				var source []byte
				var ok bool
				if parts, source, ok = sessionlog.ValidMessage(e.Data, parts[:0]); ok && userSource(source) {
					markMessage(ctx, u, "user", e.Seq)
					retellPlainPrompt(ctx, u, plain, parts)
					continue
				}
			}
			m, err := sessionlog.DecodeMessage(e.Data)
			if err != nil {
				continue
			}
			var src struct {
				Kind   string `json:"kind"`
				Plugin string `json:"plugin"`
			}
			_ = json.Unmarshal(m.Source, &src)
			if src.Kind == "plugin" && strings.HasPrefix(src.Plugin, "hooks-") {
				for _, p := range m.Content {
					if p.Type == "text" {
						u.Thought(ctx, hookNotice(src.Plugin, p.Text))
					}
				}
				continue
			}
			if src.Kind == sessionlog.SourceRewind {
				for _, p := range m.Content {
					if p.Type == "text" {
						u.Thought(ctx, p.Text+"\n")
					}
				}
				continue
			}
			if src.Kind != "user" {
				continue
			}
			markMessage(ctx, u, "user", e.Seq)
			s.retellPrompt(ctx, u, &m, links[m.ID])
		case sessionlog.TypePromptLinks:
			if id, l, ok := promptLinks(e); ok {
				if links == nil {
					links = map[string]map[int]sessionlog.PromptLink{}
				}
				links[id] = l
			}
		case sessionlog.TypeAssistantMessage:
			markMessage(ctx, u, "assistant", anchor)
			if plain != nil && lg.DataValid(e.Seq) {
				var ok bool
				if parts, _, ok = sessionlog.ValidMessageParts(e.Data, parts[:0]); ok {
					retellPlainAnswer(ctx, u, plain, parts)
					continue
				}
			}
			for _, p := range decodeMessage(lg, e).Message.Content {
				switch p.Type {
				case "reasoning":
					u.Thought(ctx, p.Text)
				case "text":
					u.Text(ctx, p.Text)
				}
			}
		case sessionlog.TypeToolCall:
			decode := sessionlog.DecodeData[sessionlog.ToolCallData]
			if lg.DataValid(e.Seq) {
				decode = sessionlog.DecodeValidData[sessionlog.ToolCallData]
			}
			d, err := decode(e)
			if err != nil {
				continue
			}
			call := ToolCall{ID: d.CallID, Name: d.Name, Arguments: json.RawMessage(d.Arguments)}
			// Described as the live call was: paths resolved against the
			// session's working directory.
			if set == nil {
				set = s.toolsFor(s.Mode())
			}
			call.Title, call.Kind, call.Locations = set.DescribeCall(&tools.Env{Cwd: s.cwd}, d.Name, call.Arguments)
			u.ToolStart(ctx, call)
			if d.Name == "todo_write" {
				if todos == nil {
					todos = map[string]json.RawMessage{}
				}
				todos[d.CallID] = call.Arguments
			} else if todos != nil {
				delete(todos, d.CallID) // a later call of the same id
			}
		case sessionlog.TypeToolResult:
			if plain != nil && lg.DataValid(e.Seq) {
				var ok bool
				var meta []byte
				// A result with a meta (a diff) is retold the decoded way.
				if parts, meta, ok = sessionlog.ValidMessageParts(e.Data, parts[:0]); ok && meta == nil {
					texts = retellPlainResults(ctx, u, plain, parts, texts, todos)
					continue
				}
			}
			d := decodeMessage(lg, e)
			for _, p := range d.Message.Content {
				if p.Type != "tool-result" {
					continue
				}
				var text string
				for _, c := range p.Content {
					text += c.Text
				}
				u.ToolEnd(ctx, p.ToolCallID, tools.Result{Text: text, IsError: p.IsError, Diff: diffOf(d.Meta)})
				// The plan the live turn showed after a todo_write.
				if args, ok := todos[p.ToolCallID]; ok && !p.IsError {
					if a, err := tools.ParseTodoArgs(args); err == nil {
						u.Plan(ctx, a.Todos)
					}
				}
			}
		}
	}
	if use, ok := lastUsage(events, usage, s.contextWindow()); ok {
		use.Spent = s.Spent()
		u.Usage(ctx, use)
	}
}

// userSource reports whether a message's source (as it stands in its
// data) is {"kind":"user"}, as History reads it: the kind member, in no
// other case and given once, the plain string "user".
func userSource(source []byte) bool {
	var kind [1]json.RawMessage
	return len(source) > 0 && source[0] == '{' && sessionlog.ObjectMembers(source, []string{"kind"}, kind[:]) && string(kind[0]) == `"user"`
}

// retellPlainPrompt retells the text parts of the user's prompt read by
// sessionlog.ValidMessage (no links, no images: retellPrompt's text
// parts).
func retellPlainPrompt(ctx context.Context, u Updates, plain PlainRetell, parts []sessionlog.PlainPart) {
	for _, p := range parts {
		if p.In < 0 && p.Type == "text" && !plain.RetellText(ctx, RetellUser, p.Text) {
			u.UserText(ctx, sessionlog.Unquote(p.Text))
		}
	}
}

// retellPlainAnswer retells the reasoning and text parts of an
// assistant/message read by sessionlog.ValidMessageParts, as History
// retells the decoded message's.
func retellPlainAnswer(ctx context.Context, u Updates, plain PlainRetell, parts []sessionlog.PlainPart) {
	for _, p := range parts {
		if p.In >= 0 {
			continue
		}
		switch p.Type {
		case "reasoning":
			if !plain.RetellText(ctx, RetellThought, p.Text) {
				u.Thought(ctx, sessionlog.Unquote(p.Text))
			}
		case "text":
			if !plain.RetellText(ctx, RetellAnswer, p.Text) {
				u.Text(ctx, sessionlog.Unquote(p.Text))
			}
		}
	}
}

// retellPlainResults retells the tool results of a tool/result read by
// sessionlog.ValidMessageParts (without a meta: no diff), as History
// retells the decoded message's, with the plan of a todo_write (todos);
// texts is room for a result's texts, returned for the next.
func retellPlainResults(ctx context.Context, u Updates, plain PlainRetell, parts []sessionlog.PlainPart, texts [][]byte, todos map[string]json.RawMessage) [][]byte {
	for k, p := range parts {
		if p.In >= 0 || p.Type != "tool-result" {
			continue
		}
		// A result's output is its content's texts, joined.
		texts = texts[:0]
		for _, c := range parts[k+1:] {
			if c.In == k {
				texts = append(texts, c.Text)
			}
		}
		if !plain.RetellToolEnd(ctx, p.ToolCallID, texts, p.IsError) {
			var text string
			for _, t := range texts {
				text += sessionlog.Unquote(t)
			}
			u.ToolEnd(ctx, sessionlog.Unquote(p.ToolCallID), tools.Result{Text: text, IsError: p.IsError})
		}
		if todos == nil || p.IsError {
			continue
		}
		if args, ok := todos[sessionlog.Unquote(p.ToolCallID)]; ok {
			if a, err := tools.ParseTodoArgs(args); err == nil {
				u.Plan(ctx, a.Todos)
			}
		}
	}
	return texts
}

// usageMark is what track saw of a session's events for lastUsage: it saw
// events[:to] (in order), and of those the last that may hold a usage
// (mayHoldUsage) is last (-1: none). lastUsage then reads from there back,
// not every assistant message after it.
type usageMark struct {
	to   int
	last int
}

// see notes e, the next event of the log (a gap leaves the mark where it
// was: lastUsage reads what follows it).
func (m *usageMark) see(e *sessionlog.Event) {
	if m.to == 0 {
		m.last = -1
	}
	if e.Seq != m.to {
		return
	}
	m.to++
	if mayHoldUsage(e) {
		m.last = e.Seq
	}
}

// mayHoldUsage says whether e is an assistant/message with a usage member
// (or a text that merely mentions one): lastUsage decodes those.
func mayHoldUsage(e *sessionlog.Event) bool {
	return e.Type == sessionlog.TypeAssistantMessage && bytes.Contains(e.Data, []byte(`"usage"`))
}

// lastUsage is the use of a window of that size after the last model call
// of events that reported one; mark says which of the events may (see
// usageMark).
func lastUsage(events []sessionlog.Event, mark usageMark, window int) (ContextUsage, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if i < mark.to && i > mark.last {
			// Seen by track: none between here and the mark's last holds
			// a usage.
			if i = mark.last; i < 0 {
				break
			}
		}
		// A message without a usage member is skipped undecoded (a text
		// that merely mentions one is decoded and skipped).
		if !mayHoldUsage(&events[i]) {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.AssistantMessageData](&events[i])
		if err != nil || len(d.Usage) == 0 {
			continue
		}
		var u llm.Usage
		if json.Unmarshal(d.Usage, &u) != nil {
			continue
		}
		return contextUsage(&u, window), true
	}
	return ContextUsage{}, false
}

// messageData is the data of an assistant/message or tool/result as the
// history reads it.
type messageData struct {
	Message sessionlog.Message `json:"message"`
	Meta    json.RawMessage    `json:"meta"`
}

// decodeMessage decodes the message (and meta) of an assistant/message or
// tool/result of lg in one pass; zero for data that does not decode.
//
// It is json.Unmarshal into messageData (sessionlog.DecodeMessageData;
// DecodeValidMessageData when lg's decoder checked the data already).
func decodeMessage(lg *sessionlog.Log, e *sessionlog.Event) messageData {
	decode := sessionlog.DecodeMessageData
	if lg.DataValid(e.Seq) {
		decode = sessionlog.DecodeValidMessageData
	}
	m, meta, err := decode(e.Data)
	if err != nil {
		return messageData{}
	}
	return messageData{Message: m, Meta: meta}
}

// maxDiffMeta bounds the texts of the diffs a tool/result's meta keeps for
// a loaded session to show again; a larger change keeps none (its call
// and result still show what was done).
const maxDiffMeta = 64 << 10

// diffMeta is the tool/result meta of a file change, {"diffs":[{"path",
// "oldText"?,"newText"}]} (the reference's member; oldText absent for a
// new file), nil for no change or one too large to keep.
func diffMeta(d *tools.Diff) json.RawMessage {
	if d == nil {
		return nil
	}
	size := len(d.NewText)
	if d.OldText != nil {
		size += len(*d.OldText)
	}
	if size > maxDiffMeta {
		return nil
	}
	b := append([]byte(nil), `{"diffs":[{"path":`...)
	b = sessionlog.AppendString(b, d.Path)
	if d.OldText != nil {
		b = append(b, `,"oldText":`...)
		b = sessionlog.AppendString(b, *d.OldText)
	}
	b = append(b, `,"newText":`...)
	b = sessionlog.AppendString(b, d.NewText)
	return append(b, "}]}"...)
}

// diffOf reads back the first diff of a tool/result's meta written by
// diffMeta (nil for none, or for the reference's relative paths, which a
// client cannot place).
func diffOf(meta json.RawMessage) *tools.Diff {
	if len(meta) == 0 {
		return nil
	}
	var m struct {
		Diffs []struct {
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText *string `json:"newText"`
		} `json:"diffs"`
	}
	if json.Unmarshal(meta, &m) != nil || len(m.Diffs) == 0 {
		return nil
	}
	f := m.Diffs[0]
	if f.NewText == nil || !filepath.IsAbs(f.Path) {
		return nil
	}
	return &tools.Diff{Path: f.Path, OldText: f.OldText, NewText: *f.NewText}
}

// parsed is the message an event projects (zero when it has none).
func parsed(e *sessionlog.Event) sessionlog.Message {
	raw, err := sessionlog.ProjectMessage(e)
	if err != nil {
		return sessionlog.Message{}
	}
	m, _ := sessionlog.ParseMessage(raw)
	return m
}
