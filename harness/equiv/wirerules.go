package equiv

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// UpdateRule says how one session/update kind on the agent's wire is
// compared with the recording. The reference's transport is
// automation-only: its stdout.expected.jsonl carries agent_message_chunk
// frames and answers but no tool-call, thought, plan, title or usage
// updates, so most kinds are compared with what the recording's
// top-level session log says the agent did.
type UpdateRule struct {
	// Kind is the sessionUpdate discriminator.
	Kind string
	// Expected is where the expectation comes from.
	Expected string
	// Compared is what is compared, and how (exactly, normalized, by
	// presence, count or order).
	Compared string
	// Left names what is left out, each by the rule that leaves it out
	// ("presentation", "timing", "times", "reel's vocabulary").
	Left string
	// check runs the rule; nil for a kind compared by another wire check.
	check func(*wireCheck)
}

// UpdateRules are the rules of every session/update kind of the ACP
// schema; a kind on reel's wire with no rule is reported unchecked, and a
// test keeps the table complete against the SDK's union.
var UpdateRules = []UpdateRule{
	{Kind: "agent_message_chunk", Expected: "the recording's wire",
		Compared: "exactly: the text streamed before each answer, and after the last, joined (the wire text check)",
		Left:     "presentation: how the text is cut into chunks (the reference sends one chunk per committed block, reel streams deltas)"},
	{Kind: "agent_thought_chunk", Expected: "the recording's log: the reasoning parts of the top-level session's assistant messages, in order",
		Compared: "exactly and in order: the recorded reasoning, joined, must be reel's thought text once reel's own notices are taken out",
		Left:     "presentation: how the text is cut into chunks, and reel's notices — whole chunks ending a line that continue no reasoning (a hook's message, a model retry, a refused image; the reference shows none on its wire, and the hook and retry they report are compared in the log)", check: checkThoughts},
	{Kind: "user_message_chunk", Expected: "the recording's wire",
		Compared: "exactly: all user text, joined (the reference replays a history on session/load only; the corpus has none, so none is expected)",
		Left:     "presentation: how the text is cut into chunks", check: checkUserChunks},
	{Kind: "tool_call", Expected: "the recording's log: the top-level session's tool/call events, in order",
		Compared: "count and order; exactly: toolCallId, rawInput (as JSON) against the call's arguments; the first location against the call's `file_path` or `path` argument resolved against the working directory; by presence: a title; a kind that is one of ACP's tool kinds",
		Left:     "reel's vocabulary: the title's words and which kind reel gives a tool (the reference's log records neither)", check: checkToolCalls},
	{Kind: "tool_call_update", Expected: "the recording's log: each call's tool/result; reel's log for the result text",
		Compared: "the status sequence of each call (its tool_call's and updates' statuses, repeats collapsed): `pending`, then only `in_progress`, then `completed` when the recorded result succeeded, `failed` when it failed, and nothing after; a call the recording left without a result may not end `completed`; exactly: the final update's text content against the model-facing result reel's log records (which the tool table compares with the recording); for a successful `write` or `edit` a diff whose path is the call's resolved path (and for `write`, whose newText is the `content` argument); no update for a call the log does not hold",
		Left:     "timing (the streamed-output rule): `in_progress` updates carrying the output so far, whose number and cut depend on timing; state: a diff's oldText (the file before the call, which the recording does not hold; whether a write created or replaced the file is compared by the tool table)", check: checkToolUpdates},
	{Kind: "plan", Expected: "the recording's log: the arguments of every successful `todo_write` call, in order",
		Compared: "count and order; exactly: each entry's content and status, and its priority when the arguments give one",
		Left:     "reel's vocabulary: the priority reel fills in when the arguments give none", check: checkPlans},
	{Kind: "current_mode_update", Expected: "the recording's log: the top-level session's sandbox/mode changes after its first turn began (a mode set before is the session's initial mode)",
		Compared: "count, order and exactly: each currentModeId against the mode changed to", check: checkModes},
	{Kind: "config_option_update", Expected: "the recording's wire (no log event records configuration options)",
		Compared: "count", Left: "the options themselves (neither side's corpus run offers any)", check: checkConfigOptions},
	{Kind: "session_info_update", Expected: "the recording's log: the top-level session's session/title records, in order",
		Compared: "count, order and exactly: each title",
		Left:     "times: updatedAt (by presence only)", check: checkSessionInfo},
	{Kind: "available_commands_update", Expected: "the answers on the wire that open a session (a result naming a sessionId)",
		Compared: "count: one per session opened, naming that session; by presence: each command's name and description",
		Left:     "reel's vocabulary: the command names (the reference's log records none)", check: checkCommands},
	{Kind: "usage_update", Expected: "the recording's log: the usage of every top-level assistant message that has one, in order",
		Compared: "count, order and exactly: `used` against the recorded call's input + output + cache-read tokens; by presence: `size`",
		Left:     "reel's vocabulary: `size`, the context window of reel's model, and cost (reel knows no prices)", check: checkUsage},
}

// updateRule finds the rule of a kind, nil for none.
func updateRule(kind string) *UpdateRule {
	for i := range UpdateRules {
		if UpdateRules[i].Kind == kind {
			return &UpdateRules[i]
		}
	}
	return nil
}

// wireFacts is what the update rules read of one side's top-level
// session logs.
type wireFacts struct {
	calls    []*callFact
	titles   []string
	thoughts strings.Builder
	usage    []int64
	modes    []string
	// paths replaces the first top-level log's run paths (wire text
	// that was not normalized before the comparison).
	paths *pather
}

// readWireFacts reads the top-level logs of a side (children's updates
// are not sent on the parent's wire).
func readWireFacts(s *Side) (*wireFacts, error) {
	wf := &wireFacts{paths: newPather("", s.Temp)}
	for n, l := range s.Logs {
		if _, child := l.Header.Child(); child {
			continue
		}
		if n == 0 {
			wf.paths = newPather(l.Header.Cwd, s.Temp)
		}
		f, err := extract(l, s.Temp)
		if err != nil {
			return nil, err
		}
		wf.calls = append(wf.calls, f.calls...)
		for _, t := range f.titles {
			wf.titles = append(wf.titles, t.Title)
		}
		turned := false
		for i := range l.Events {
			e := &l.Events[i]
			switch e.Type {
			case sessionlog.TypeTurnStart:
				turned = true
			case sessionlog.TypeSandboxMode:
				if m, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil && turned {
					wf.modes = append(wf.modes, m.Mode)
				}
			case sessionlog.TypeAssistantMessage:
				var d struct {
					Message struct {
						Content []struct {
							Type string `json:"type"`
							Text string `json:"text"`
						} `json:"content"`
					} `json:"message"`
					Usage *struct {
						InputTokens     int64  `json:"inputTokens"`
						OutputTokens    int64  `json:"outputTokens"`
						CacheReadTokens *int64 `json:"cacheReadTokens"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(e.Data, &d); err != nil {
					return nil, fmt.Errorf("%s: seq %d: %w", l.Name, e.Seq, err)
				}
				for _, p := range d.Message.Content {
					if p.Type == "reasoning" {
						wf.thoughts.WriteString(p.Text)
					}
				}
				if u := d.Usage; u != nil {
					used := u.InputTokens + u.OutputTokens
					if u.CacheReadTokens != nil {
						used += *u.CacheReadTokens
					}
					wf.usage = append(wf.usage, used)
				}
			}
		}
	}
	return wf, nil
}

// wireCheck is one comparison of the session/update frames in progress.
type wireCheck struct {
	r *Report
	// ww and gw are the two wires.
	ww, gw *Wire
	// exp is the recording's facts, act reel's.
	exp, act *wireFacts
	count    map[string]int
}

func (c *wireCheck) diff(check, where, format string, args ...any) {
	if c.count[check]++; c.count[check] > maxPerCheck {
		if c.count[check] == maxPerCheck+1 {
			c.r.Diffs = append(c.r.Diffs, Diff{Check: check, What: "further differences of this check not shown"})
		}
		return
	}
	c.r.Diffs = append(c.r.Diffs, Diff{Check: check, Where: where, What: fmt.Sprintf(format, args...)})
}

func (c *wireCheck) vs(a, b string) string {
	return fmt.Sprintf("%s %s, %s %s", c.r.Want, a, c.r.Got, b)
}

// of returns a wire's updates of one kind.
func of(w *Wire, kind string) []Update {
	var out []Update
	for _, u := range w.Updates {
		if u.Kind == kind {
			out = append(out, u)
		}
	}
	return out
}

// automationOnlyNote says why an automation-only wire under test leaves
// the session updates unchecked.
const automationOnlyNote = "is the reference's automation-only transport, which sends no tool-call, thought, plan, title, command or usage updates, so they were not compared"

// compareUpdates runs the update rules over the two wires (both present).
func compareUpdates(r *Report, want, got *Side, ww, gw *Wire) {
	if got.AutomationOnly {
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the wire's session updates: %s's transcript %s", got.Label, automationOnlyNote))
		return
	}
	exp, err := readWireFacts(want)
	if err != nil {
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the wire's session updates: %s's logs cannot be read: %v", want.Label, err))
		return
	}
	act, err := readWireFacts(got)
	if err != nil {
		r.Diffs = append(r.Diffs, Diff{Check: "wire updates", What: fmt.Sprintf("%s's logs cannot be read: %v", got.Label, err)})
		return
	}
	c := &wireCheck{r: r, ww: ww, gw: gw, exp: exp, act: act, count: map[string]int{}}
	seen := map[string]bool{}
	for _, u := range gw.Updates {
		if updateRule(u.Kind) == nil && !seen[u.Kind] {
			seen[u.Kind] = true
			r.Unchecked = append(r.Unchecked, fmt.Sprintf("the wire: %s sends %q updates (first at line %d), which no update rule compares", got.Label, u.Kind, u.Line))
		}
	}
	for _, rule := range UpdateRules {
		if rule.check == nil {
			continue
		}
		rule.check(c)
	}
}

// lineOf names a frame of reel's wire.
func (c *wireCheck) lineOf(u Update) string {
	return fmt.Sprintf("%s line %d", c.r.Got, u.Line)
}

func checkThoughts(c *wireCheck) {
	rest := c.exp.thoughts.String()
	for _, u := range of(c.gw, "agent_thought_chunk") {
		t := chunkText(u.Raw)
		switch {
		case t == "":
		case strings.HasPrefix(rest, t):
			rest = rest[len(t):]
		case strings.HasSuffix(t, "\n"):
			// A notice of reel's own (a hook's message, a retry, a
			// refused image): one whole chunk ending a line. It is left
			// out; recorded reasoning it displaced still shows missing.
		default:
			done := len(c.exp.thoughts.String()) - len(rest)
			c.diff("wire thoughts", c.lineOf(u), "agent_thought_chunk %q continues none of the recorded reasoning (after %d of its bytes; next: %q) and is no notice", clip(t, 120), done, clip(rest, 120))
			return
		}
	}
	if rest != "" {
		done := len(c.exp.thoughts.String()) - len(rest)
		c.diff("wire thoughts", "", "%s's wire leaves the recorded reasoning out after %d byte(s): %q missing", c.r.Got, done, clip(rest, 200))
	}
}

func checkUserChunks(c *wireCheck) {
	join := func(w *Wire) string {
		var b strings.Builder
		for _, u := range of(w, "user_message_chunk") {
			b.WriteString(chunkText(u.Raw))
		}
		return b.String()
	}
	if w, g := join(c.ww), join(c.gw); w != g {
		c.diff("wire user text", "", "user_message_chunk text: %s", c.vs(strconv.Quote(clip(w, 200)), strconv.Quote(clip(g, 200))))
	}
}

// chunkText is a content-chunk update's text ("" for another block).
func chunkText(raw json.RawMessage) string {
	var u struct {
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &u) != nil || u.Content.Type != "text" {
		return ""
	}
	return u.Content.Text
}

// toolKinds are ACP's tool kinds.
var toolKinds = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}

// toolFrame is the part of a tool_call or tool_call_update the rules read.
type toolFrame struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title"`
	Kind       *string         `json:"kind"`
	Status     *string         `json:"status"`
	RawInput   json.RawMessage `json:"rawInput"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
	Content []struct {
		Type    string `json:"type"`
		Path    string `json:"path"`
		NewText string `json:"newText"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"content"`
}

func decodeToolFrame(raw json.RawMessage) toolFrame {
	var t toolFrame
	_ = json.Unmarshal(raw, &t)
	return t
}

// pathArg is a call's `file_path` or `path` argument resolved against the
// working directory ({{cwd}}), "" when it has none.
func pathArg(args string) string {
	var a struct {
		FilePath *string `json:"file_path"`
		Path     *string `json:"path"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	p := a.FilePath
	if p == nil {
		p = a.Path
	}
	if p == nil || *p == "" {
		return ""
	}
	if strings.HasPrefix(*p, "/") || strings.HasPrefix(*p, "{{") {
		return path.Clean(*p)
	}
	return path.Join(cwdToken, *p)
}

func checkToolCalls(c *wireCheck) {
	want, got := c.exp.calls, of(c.gw, "tool_call")
	if len(want) != len(got) {
		ids := make([]string, len(got))
		for i, u := range got {
			ids[i] = decodeToolFrame(u.Raw).ToolCallID
		}
		c.diff("wire tool calls", "", "%s's log makes %d tool call(s) %s, %s's wire announces %d %v", c.r.Want, len(want), callList(want), c.r.Got, len(got), ids)
	}
	for i := 0; i < min(len(want), len(got)); i++ {
		a, t := want[i], decodeToolFrame(got[i].Raw)
		where := fmt.Sprintf("tool_call %d %s (turn %d step %d; %s seq %d, %s)", i+1, a.Name, a.Turn, a.Step, c.r.Want, a.Seq, c.lineOf(got[i]))
		switch {
		case t.ToolCallID != a.ID:
			c.diff("wire tool calls", where, "toolCallId: %s", c.vs(a.ID, t.ToolCallID))
			continue
		case json.Valid([]byte(a.Args)) && !sameJSON(a.Args, string(t.RawInput)):
			c.diff("wire tool calls", where, "rawInput: %s", c.vs(clip(a.Args, 200), clip(string(t.RawInput), 200)))
		case t.Title == nil || *t.Title == "":
			c.diff("wire tool calls", where, "%s's tool_call has no title", c.r.Got)
		case t.Kind == nil || !slices.Contains(toolKinds, *t.Kind):
			k := "none"
			if t.Kind != nil {
				k = strconv.Quote(*t.Kind)
			}
			c.diff("wire tool calls", where, "kind %s is none of ACP's tool kinds %v", k, toolKinds)
		}
		if p := pathArg(a.Args); p != "" {
			switch {
			case len(t.Locations) == 0:
				c.diff("wire tool calls", where, "no location; the call names %s", p)
			case t.Locations[0].Path != p:
				c.diff("wire tool calls", where, "location: want %s (the call's path resolved), %s %s", p, c.r.Got, t.Locations[0].Path)
			}
		}
	}
}

// terminal reports whether a tool-call status ends the call.
func terminal(s string) bool { return s == "completed" || s == "failed" }

func checkToolUpdates(c *wireCheck) {
	type track struct {
		statuses []string
		last     *Update // the update that set the last terminal status
		lines    []int
	}
	tracks := map[string]*track{}
	var order []string
	for _, u := range c.gw.Updates {
		if u.Kind != "tool_call" && u.Kind != "tool_call_update" {
			continue
		}
		t := decodeToolFrame(u.Raw)
		tr := tracks[t.ToolCallID]
		if tr == nil {
			tr = &track{}
			tracks[t.ToolCallID] = tr
			order = append(order, t.ToolCallID)
		}
		tr.lines = append(tr.lines, u.Line)
		if t.Status == nil {
			continue
		}
		// The streamed-output rule: repeated in_progress updates (the
		// output so far) collapse into one.
		if n := len(tr.statuses); n == 0 || tr.statuses[n-1] != *t.Status {
			tr.statuses = append(tr.statuses, *t.Status)
		}
		if terminal(*t.Status) {
			tr.last = &u
		}
	}
	known := map[string]bool{}
	reelResult := map[string]*resultFact{}
	for _, a := range c.act.calls {
		if a.Result != nil {
			reelResult[a.ID] = a.Result
		}
	}
	for i, a := range c.exp.calls {
		known[a.ID] = true
		tr := tracks[a.ID]
		where := fmt.Sprintf("call %d %s %s (turn %d step %d; %s seq %d)", i+1, a.Name, a.ID, a.Turn, a.Step, c.r.Want, a.Seq)
		if tr == nil {
			continue // checkToolCalls reports the missing tool_call
		}
		where = fmt.Sprintf("%s, %s lines %v", where, c.r.Got, tr.lines)
		want := "completed"
		switch {
		case a.Result == nil:
			want = "no completed"
		case a.Result.IsError:
			want = "failed"
		}
		if msg := statusProblem(tr.statuses, want); msg != "" {
			c.diff("wire tool status", where, "status sequence %v: %s (the recorded result: %s)", tr.statuses, msg, want)
			continue
		}
		if tr.last == nil {
			continue
		}
		t := decodeToolFrame(tr.last.Raw)
		var text strings.Builder
		var diffs []int
		for j, b := range t.Content {
			switch b.Type {
			case "content":
				if b.Content.Type == "text" {
					text.WriteString(b.Content.Text)
				}
			case "diff":
				diffs = append(diffs, j)
			}
		}
		if r := reelResult[a.ID]; r != nil && !strings.HasPrefix(r.Text, "[image") && c.act.paths.apply(text.String()) != r.Text {
			c.diff("wire tool content", where, "the final update's text is not the result %s's log records (seq %d)\n  log:  %q\n  wire: %q", c.r.Got, r.Seq, clip(r.Text, 300), clip(c.act.paths.apply(text.String()), 300))
		}
		if a.Result == nil || a.Result.IsError || (a.Name != "write" && a.Name != "edit") {
			continue
		}
		p := pathArg(a.Args)
		var match *int
		for _, j := range diffs {
			if t.Content[j].Path == p {
				match = &j
				break
			}
		}
		switch {
		case match == nil:
			c.diff("wire tool diff", where, "the successful %s of %s sends no diff of that path (%d diff block(s))", a.Name, p, len(diffs))
		case a.Name == "write":
			var args struct {
				Content *string `json:"content"`
			}
			if json.Unmarshal([]byte(a.Args), &args) == nil && args.Content != nil && t.Content[*match].NewText != *args.Content {
				c.diff("wire tool diff", where, "newText is not the content written: want %q, %s %q", clip(*args.Content, 200), c.r.Got, clip(t.Content[*match].NewText, 200))
			}
		}
	}
	for _, id := range order {
		if !known[id] {
			c.diff("wire tool status", fmt.Sprintf("%s lines %v", c.r.Got, tracks[id].lines), "updates for tool call %s, which %s's log does not hold", id, c.r.Want)
		}
	}
}

// statusProblem checks a collapsed status sequence against the recorded
// outcome ("completed", "failed", or "no completed" for a call with no
// result); "" when it fits.
func statusProblem(seq []string, want string) string {
	if len(seq) == 0 || seq[0] != "pending" {
		return "it does not start pending"
	}
	for i, s := range seq[1:] {
		switch {
		case s == "in_progress" || s == "pending":
			continue
		case !terminal(s):
			return fmt.Sprintf("unknown status %q", s)
		case i+2 != len(seq):
			return fmt.Sprintf("a status follows %s", s)
		}
	}
	last := seq[len(seq)-1]
	switch want {
	case "no completed":
		if last == "completed" {
			return "it completes a call the recording left without a result"
		}
	default:
		if last != want {
			return fmt.Sprintf("it ends %s, want %s", last, want)
		}
	}
	return ""
}

// planEntry is one entry of a plan as the rule compares it.
type planEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

func checkPlans(c *wireCheck) {
	var want [][]planEntry
	for _, a := range c.exp.calls {
		if a.Name != "todo_write" || a.Result == nil || a.Result.IsError {
			continue
		}
		var args struct {
			Todos []planEntry `json:"todos"`
		}
		if json.Unmarshal([]byte(a.Args), &args) != nil {
			continue
		}
		want = append(want, args.Todos)
	}
	got := of(c.gw, "plan")
	if len(want) != len(got) {
		c.diff("wire plans", "", "%s's log writes %d todo list(s), %s's wire sends %d plan(s)", c.r.Want, len(want), c.r.Got, len(got))
	}
	for i := 0; i < min(len(want), len(got)); i++ {
		var p struct {
			Entries []planEntry `json:"entries"`
		}
		_ = json.Unmarshal(got[i].Raw, &p)
		where := fmt.Sprintf("plan %d (%s)", i+1, c.lineOf(got[i]))
		render := func(es []planEntry) string {
			parts := make([]string, len(es))
			for j, e := range es {
				parts[j] = e.Status + " " + strconv.Quote(e.Content)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		same := len(want[i]) == len(p.Entries)
		for j := 0; same && j < len(p.Entries); j++ {
			a, b := want[i][j], p.Entries[j]
			same = a.Content == b.Content && a.Status == b.Status && (a.Priority == "" || a.Priority == b.Priority)
		}
		if !same {
			c.diff("wire plans", where, "entries: %s", c.vs(render(want[i]), render(p.Entries)))
		}
	}
}

func checkModes(c *wireCheck) {
	var got []string
	for _, u := range of(c.gw, "current_mode_update") {
		var m struct {
			CurrentModeID string `json:"currentModeId"`
		}
		_ = json.Unmarshal(u.Raw, &m)
		got = append(got, m.CurrentModeID)
	}
	if !slices.Equal(c.exp.modes, got) {
		c.diff("wire modes", "", "mode changes: %s", c.vs(fmt.Sprint(c.exp.modes), fmt.Sprint(got)))
	}
}

func checkConfigOptions(c *wireCheck) {
	if w, g := len(of(c.ww, "config_option_update")), len(of(c.gw, "config_option_update")); w != g {
		c.diff("wire config options", "", "config_option_update frames: %s", c.vs(strconv.Itoa(w), strconv.Itoa(g)))
	}
}

func checkSessionInfo(c *wireCheck) {
	var got []string
	for _, u := range of(c.gw, "session_info_update") {
		var s struct {
			Title     *string `json:"title"`
			UpdatedAt *string `json:"updatedAt"`
		}
		_ = json.Unmarshal(u.Raw, &s)
		if s.UpdatedAt == nil || *s.UpdatedAt == "" {
			c.diff("wire titles", c.lineOf(u), "session_info_update without updatedAt")
		}
		if s.Title != nil {
			got = append(got, *s.Title)
		}
	}
	if !slices.Equal(c.exp.titles, got) {
		c.diff("wire titles", "", "session_info_update titles: %s", c.vs(fmt.Sprintf("%q", c.exp.titles), fmt.Sprintf("%q", got)))
	}
}

func checkCommands(c *wireCheck) {
	got := of(c.gw, "available_commands_update")
	per := map[string]int{}
	for _, u := range got {
		per[u.Session]++
		var a struct {
			AvailableCommands []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"availableCommands"`
		}
		_ = json.Unmarshal(u.Raw, &a)
		for _, cmd := range a.AvailableCommands {
			if cmd.Name == "" || cmd.Description == "" {
				c.diff("wire commands", c.lineOf(u), "a command without a name or description: %+v", cmd)
			}
		}
	}
	for _, id := range c.gw.Opened {
		if per[id] != 1 {
			c.diff("wire commands", "", "session %s: %d available_commands_update frame(s), want 1", id, per[id])
		}
		delete(per, id)
	}
	for id, n := range per {
		c.diff("wire commands", "", "%d available_commands_update frame(s) for session %s, which no answer opened", n, id)
	}
}

func checkUsage(c *wireCheck) {
	var got []int64
	for _, u := range of(c.gw, "usage_update") {
		var s struct {
			Used int64 `json:"used"`
			Size int64 `json:"size"`
		}
		_ = json.Unmarshal(u.Raw, &s)
		if s.Size <= 0 {
			c.diff("wire usage", c.lineOf(u), "usage_update without a size")
		}
		got = append(got, s.Used)
	}
	if !slices.Equal(c.exp.usage, got) {
		c.diff("wire usage", "", "usage_update used: %s", c.vs(fmt.Sprint(c.exp.usage), fmt.Sprint(got)))
	}
}

// UpdateRulesMarkdown renders UpdateRules as the table docs/scenarios.md
// carries (a test keeps the two in step).
func UpdateRulesMarkdown() string {
	var b strings.Builder
	cell := func(s string) string {
		if s == "" {
			return "—"
		}
		return strings.ReplaceAll(s, "|", `\|`)
	}
	b.WriteString("| session/update kind | expected from | compared | left out, by rule |\n|---|---|---|---|\n")
	for _, r := range UpdateRules {
		b.WriteString("| `" + r.Kind + "` | " + cell(r.Expected) + " | " + cell(r.Compared) + " | " + cell(r.Left) + " |\n")
	}
	b.WriteString("| any other kind | — | nothing: the scenario is reported partial | — |\n")
	return b.String()
}
