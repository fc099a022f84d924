package equiv

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// Verdict is the outcome of a comparison.
type Verdict int

// Verdicts.
const (
	// Equivalent: every check ran and found no difference.
	Equivalent Verdict = iota
	// Partial: no difference was found, but something could not be
	// checked (Report.Unchecked says what).
	Partial
	// Different: at least one difference (Report.Diffs).
	Different
)

// String returns "equivalent", "partial" or "different".
func (v Verdict) String() string {
	switch v {
	case Equivalent:
		return "equivalent"
	case Partial:
		return "partial"
	}
	return "different"
}

// Diff is one difference between the two sides.
type Diff struct {
	// Check is the check that found it ("tool result", "messages", …).
	Check string
	// Where locates it: session, turn/step, call or message, and the seq
	// on each side.
	Where string
	// What names the differing property and both values.
	What string
}

// Report is the outcome of Compare.
type Report struct {
	// Want and Got are the two sides' labels.
	Want, Got string
	// Diffs are the differences found, in check order.
	Diffs []Diff
	// Unchecked says what could not be checked, one sentence each.
	Unchecked []string
}

// Verdict is Different with any Diffs, else Partial with anything
// Unchecked, else Equivalent.
func (r *Report) Verdict() Verdict {
	switch {
	case len(r.Diffs) > 0:
		return Different
	case len(r.Unchecked) > 0:
		return Partial
	}
	return Equivalent
}

// Lines renders every difference as one readable paragraph.
func (r *Report) Lines() []string {
	out := make([]string, 0, len(r.Diffs))
	for _, d := range r.Diffs {
		s := d.Check
		if d.Where != "" {
			s += ", " + d.Where
		}
		out = append(out, s+": "+d.What)
	}
	return out
}

// String renders the report: the differences, then what went unchecked.
func (r *Report) String() string {
	var b strings.Builder
	for _, l := range r.Lines() {
		b.WriteString(l + "\n")
	}
	for _, u := range r.Unchecked {
		b.WriteString("unchecked: " + u + "\n")
	}
	return b.String()
}

// Options tune a comparison.
type Options struct {
	// EnvironmentLines are whole output lines that the expected side's
	// test environment added to bash results and that no agent produces
	// (the notice of a test-only sandbox provider, for example). They are
	// removed from the expected side's bash results before comparing.
	EnvironmentLines []string
}

// maxPerCheck bounds the differences one check reports per session.
const maxPerCheck = 8

// cmp is one session's comparison in progress.
type cmp struct {
	r          *Report
	opt        Options
	prefix     string // "session N: " when there are several
	want, got  *facts
	wlog, glog *Log
	count      map[string]int
}

func (c *cmp) diff(check, where, format string, args ...any) {
	if c.count[check]++; c.count[check] > maxPerCheck {
		if c.count[check] == maxPerCheck+1 {
			c.r.Diffs = append(c.r.Diffs, Diff{Check: check, Where: strings.TrimSuffix(c.prefix, ": "), What: "further differences of this check not shown"})
		}
		return
	}
	c.r.Diffs = append(c.r.Diffs, Diff{Check: check, Where: strings.TrimSuffix(c.prefix+where, ": "), What: fmt.Sprintf(format, args...)})
}

func (c *cmp) unchecked(format string, args ...any) {
	c.r.Unchecked = append(c.r.Unchecked, c.prefix+fmt.Sprintf(format, args...))
}

// seqs names an event on both sides: "recording seq 4, reel seq 5".
func (c *cmp) seqs(w, g int) string {
	return fmt.Sprintf("%s seq %d, %s seq %d", c.r.Want, w, c.r.Got, g)
}

// vs renders both values of a property: "recording X, reel Y".
func (c *cmp) vs(w, g string) string {
	return fmt.Sprintf("%s %s, %s %s", c.r.Want, w, c.r.Got, g)
}

// sessionChecks run on each pair of session logs, in order.
var sessionChecks = []struct {
	name string
	run  func(c *cmp)
}{
	{"tool calls", checkCalls},
	{"tool results", checkResults},
	{"program tool calls", checkDispatches},
	{"hooks", checkHooks},
	{"approvals", checkApprovals},
	{"titles", checkTitles},
	{"messages", checkMessages},
	{"settings", checkSettings},
	{"assistant text", checkTexts},
	{"turn ends", checkEnds},
	{"requests", checkRequests},
}

// Compare checks whether got is equivalent to want: the same tool calls
// with the same outcomes and essential content (ToolRules), the same user
// and injected messages (MessageRules), the same sandbox settings,
// assistant text per step and turn ends, requests of the same history
// shape at every step, and on the wire the same answers (stop reasons and
// error codes) with the same agent text before each, and the same
// permission requests.
func Compare(want, got *Side, opt Options) *Report {
	r := &Report{Want: want.Label, Got: got.Label}
	if len(want.Logs) != len(got.Logs) {
		r.Diffs = append(r.Diffs, Diff{Check: "sessions", What: sessionCounts(want, got)})
	}
	var wantAll, gotAll []*facts
	for i := 0; i < min(len(want.Logs), len(got.Logs)); i++ {
		c := &cmp{r: r, opt: opt, wlog: want.Logs[i], glog: got.Logs[i], count: map[string]int{}}
		if len(want.Logs) > 1 || len(got.Logs) > 1 {
			c.prefix = sessionPrefix(want.Logs, i)
		}
		checkLineage(c, want, got, i)
		wf, err := extract(c.wlog, want.Temp)
		if err != nil {
			c.unchecked("%s cannot be read: %v", c.wlog.Name, err)
			continue
		}
		gf, err := extract(c.glog, got.Temp)
		if err != nil {
			c.diff("log", "", "%s cannot be read: %v", c.glog.Name, err)
			continue
		}
		c.want, c.got = wf, gf
		wantAll, gotAll = append(wantAll, wf), append(gotAll, gf)
		for _, ch := range sessionChecks {
			ch.run(c)
		}
	}
	compareWire(r, want, got, wantAll, gotAll)
	return r
}

// where names a call: "call 2 read (turn 1 step 2; recording seq 20, reel seq 18)".
func (c *cmp) callWhere(i int, w, g *callFact) string {
	return fmt.Sprintf("call %d %s (turn %d step %d; %s)", i+1, w.Name, w.Turn, w.Step, c.seqs(w.Seq, g.Seq))
}

func checkCalls(c *cmp) { compareCalls(c, "tool calls", "", c.want.calls, c.got.calls) }

// checkDispatches compares the tool calls of run_code programs, in order,
// as checkCalls and checkResults compare the model's calls: the tool, the
// arguments, the call id, the outcome and the essential content.
func checkDispatches(c *cmp) {
	compareCalls(c, "program tool calls", "program ", c.want.dispatches, c.got.dispatches)
	compareResults(c, "program tool result", "program ", c.want.dispatches, c.got.dispatches)
}

// compareCalls compares two lists of calls under check; label prefixes
// "call N".
func compareCalls(c *cmp, check, label string, w, g []*callFact) {
	if len(w) != len(g) {
		c.diff(check, "", "%s makes %d %stool call(s) %s, %s %d %s", c.r.Want, len(w), label, callList(w), c.r.Got, len(g), callList(g))
	}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		where := label + c.callWhere(i, a, b)
		switch {
		case a.Name != b.Name:
			c.diff(check, where, "tool: %s", c.vs(a.Name, b.Name))
		case !sameJSON(a.Args, b.Args):
			c.diff(check, where, "arguments: %s", c.vs(a.Args, b.Args))
		case a.ID != b.ID:
			c.diff(check, where, "call id: %s", c.vs(a.ID, b.ID))
		}
	}
}

// callList renders calls compactly: [read bash].
func callList(cs []*callFact) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return "[" + strings.Join(names, " ") + "]"
}

// sameJSON reports whether two JSON texts hold the same value (both
// unparseable: the same bytes).
func sameJSON(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xa) == string(yb)
}

func checkResults(c *cmp) {
	compareResults(c, "tool result", "", c.want.calls, c.got.calls)
	for _, seq := range c.got.unmatched {
		c.diff("tool result", fmt.Sprintf("%s seq %d", c.r.Got, seq), "a result answers no tool call of the log")
	}
}

// compareResults compares the results of two lists of calls under check;
// label prefixes "call N".
func compareResults(c *cmp, check, label string, w, g []*callFact) {
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		if a.Name != b.Name {
			continue // reported by checkCalls
		}
		where := label + c.callWhere(i, a, b)
		switch {
		case a.Result == nil && b.Result == nil:
			continue
		case a.Result == nil:
			c.diff(check, where, "%s has no result for the call, %s has one (seq %d)", c.r.Want, c.r.Got, b.Result.Seq)
			continue
		case b.Result == nil:
			c.diff(check, where, "%s has no result for the call", c.r.Got)
			continue
		}
		where = label + fmt.Sprintf("call %d %s (turn %d step %d; %s)", i+1, a.Name, a.Turn, a.Step, c.seqs(a.Result.Seq, b.Result.Seq))
		if a.Result.IsError != b.Result.IsError {
			c.diff(check, where, "isError: %s\n  %s: %s\n  %s: %s", c.vs(strconv.FormatBool(a.Result.IsError), strconv.FormatBool(b.Result.IsError)),
				c.r.Want, clip(oneLine(a.Result.Text), 240), c.r.Got, clip(oneLine(b.Result.Text), 240))
			continue
		}
		if a.Result.IsError {
			continue // both failed; the wording of failures is not compared
		}
		rule := toolRule(a.Name)
		if rule == nil {
			c.unchecked(label+"call %d %s: no rule in the tool table compares its content; only its outcome was compared", i+1, a.Name)
			continue
		}
		wantText := a.Result.Text
		if a.Name == "bash" {
			wantText = dropLines(wantText, c.opt.EnvironmentLines)
		}
		we, ok := rule.essence(wantText, a.Result.Meta)
		if !ok {
			c.unchecked(label+"call %d %s (%s seq %d): the result is in no presentation the tool table knows, so its content was not compared: %q", i+1, a.Name, c.r.Want, a.Result.Seq, clip(a.Result.Text, 160))
			continue
		}
		ge, ok := rule.essence(b.Result.Text, b.Result.Meta)
		if !ok {
			c.diff(check, where, "the %s result is in no presentation of a %s result the tool table knows\n  %s: %s\n  %s: %q",
				c.r.Got, a.Name, c.r.Want, we, c.r.Got, clip(b.Result.Text, 240))
			continue
		}
		if !we.equal(ge) {
			c.diff(check, where, "essential content differs at %s\n  %s: %s\n  %s: %s",
				firstDifference(we, ge), c.r.Want, we, c.r.Got, ge)
		}
	}
}

// dropLines removes every line of s that equals one of lines.
func dropLines(s string, lines []string) string {
	if len(lines) == 0 {
		return s
	}
	parts := strings.Split(s, "\n")
	kept := parts[:0]
	for _, p := range parts {
		if !slices.Contains(lines, p) {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}

// oneLine shows line breaks as ⏎ for one-line messages.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "⏎") }

// visible returns the user messages compared as messages.
func visible(f *facts) []*userFact {
	var out []*userFact
	for _, u := range f.users {
		if !u.drop && !u.seed {
			out = append(out, u)
		}
	}
	return out
}

// classCounts summarizes messages by class: "1 prompt, 2 instructions".
func classCounts(us []*userFact) string {
	var order []string
	n := map[string]int{}
	for _, u := range us {
		if n[u.rule.Class] == 0 {
			order = append(order, u.rule.Class)
		}
		n[u.rule.Class]++
	}
	if len(order) == 0 {
		return "none"
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}

func checkMessages(c *cmp) {
	w, g := visible(c.want), visible(c.got)
	if len(w) != len(g) {
		c.diff("messages", "", "%s has %d user message(s) on the surface (%s), %s %d (%s)", c.r.Want, len(w), classCounts(w), c.r.Got, len(g), classCounts(g))
	}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		where := fmt.Sprintf("message %d (turn %d step %d; %s)", i+1, a.Turn, a.Step, c.seqs(a.Seq, b.Seq))
		switch {
		case a.rule.Class != b.rule.Class:
			c.diff("messages", where, "class: %s\n  %s: %q\n  %s: %q", c.vs(a.rule.Class, b.rule.Class), c.r.Want, clip(a.identity, 200), c.r.Got, clip(b.identity, 200))
		case a.identity != b.identity:
			c.diff("messages", where, "%s message differs:\n  %s: %q\n  %s: %q", a.rule.Class, c.r.Want, clip(a.identity, 400), c.r.Got, clip(b.identity, 400))
		case a.Turn != b.Turn || a.Step != b.Step:
			c.diff("messages", where, "%s enters at another step: %s", a.rule.Class, c.vs(fmt.Sprintf("turn %d step %d", a.Turn, a.Step), fmt.Sprintf("turn %d step %d", b.Turn, b.Step)))
		}
	}
}

func checkSettings(c *cmp) {
	wm, wa := settings(c.want, c.wlog)
	gm, ga := settings(c.got, c.glog)
	if len(wm) > 0 && !slices.Equal(wm, gm) {
		c.diff("settings", "", "sandbox mode(s) in force: %s", c.vs(fmt.Sprint(wm), fmt.Sprint(gm)))
	}
	if len(wa) > 0 && !slices.Equal(wa, ga) {
		c.diff("settings", "", "approval policy: %s", c.vs(fmt.Sprint(wa), fmt.Sprint(ga)))
	}
}

// stepKey names a step.
func stepKey(turn, step int) string { return fmt.Sprintf("turn %d step %d", turn, step) }

func checkTexts(c *cmp) {
	type acc struct {
		text string
		seq  int
	}
	collect := func(f *facts) ([]string, map[string]*acc) {
		var order []string
		m := map[string]*acc{}
		for _, t := range f.texts {
			k := stepKey(t.Turn, t.Step)
			if m[k] == nil {
				order = append(order, k)
				m[k] = &acc{seq: t.Seq}
			}
			m[k].text += t.Text
		}
		return order, m
	}
	wo, wm := collect(c.want)
	gorder, gm := collect(c.got)
	for _, k := range wo {
		a, b := wm[k], gm[k]
		switch {
		case b == nil:
			c.diff("assistant text", k, "%s has no assistant message in this step (%s seq %d: %q)", c.r.Got, c.r.Want, a.seq, clip(a.text, 200))
		case a.text != b.text:
			c.diff("assistant text", fmt.Sprintf("%s (%s)", k, c.seqs(a.seq, b.seq)), "%s %q, %s %q", c.r.Want, clip(a.text, 300), c.r.Got, clip(b.text, 300))
		}
	}
	for _, k := range gorder {
		if wm[k] == nil {
			c.diff("assistant text", k, "%s has an assistant message (seq %d: %q) in a step %s does not have", c.r.Got, gm[k].seq, clip(gm[k].text, 200), c.r.Want)
		}
	}
}

func checkEnds(c *cmp) {
	render := func(es []turnEnd) string {
		parts := make([]string, len(es))
		for i, e := range es {
			parts[i] = fmt.Sprintf("turn %d %s", e.Turn, e.Kind)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	w, g := c.want.ends, c.got.ends
	if len(w) != len(g) {
		c.diff("turn ends", "", "%s", c.vs(render(w), render(g)))
		return
	}
	for i := range w {
		if w[i].Turn != g[i].Turn || w[i].Kind != g[i].Kind {
			c.diff("turn ends", fmt.Sprintf("turn %d (%s)", w[i].Turn, c.seqs(w[i].Seq, g[i].Seq)), "reason: %s", c.vs(w[i].Kind, g[i].Kind))
		}
	}
}

// shapeItem is one message of a request as the history-shape check sees
// it.
type shapeItem struct {
	label string
	seq   int
}

// shape renders a request's history: the role and class of each message,
// the tool-call ids an assistant message carries, and the call a result
// answers (its outcome is the tool-result check's). Messages of a
// presentation class are left out; a fixture compaction stands for the
// message it replaced.
func shape(f *facts, l *Log, r *stepRequest) []shapeItem {
	var out []shapeItem
	for i, seq := range r.Seqs {
		e := &l.Events[seq]
		m, err := sessionlog.ParseMessage(r.Messages[i])
		if err != nil {
			out = append(out, shapeItem{"unparseable message", seq})
			continue
		}
		switch e.Type {
		case sessionlog.TypeUserMessage:
			u := f.userAt[seq]
			if u != nil && u.rule != nil && u.rule.Class == "fixture-compaction" {
				// The message it replaced counts as still visible.
				for _, r := range u.Replaces {
					if v := f.userAt[r]; v != nil && !v.drop {
						out = append(out, shapeItem{m.Role + " " + v.rule.Class, seq})
					}
				}
				continue
			}
			if u == nil || u.drop {
				continue
			}
			out = append(out, shapeItem{m.Role + " " + u.rule.Class, seq})
		case sessionlog.TypeAssistantMessage:
			label := m.Role
			if ids := m.ToolCallIDs(); len(ids) > 0 {
				label += " calling " + strings.Join(ids, ", ")
			}
			out = append(out, shapeItem{label, seq})
		case sessionlog.TypeToolResult:
			label := m.Role + " result"
			for _, p := range m.Content {
				if p.Type == "tool-result" {
					label += " for " + p.ToolCallID
				}
			}
			out = append(out, shapeItem{label, seq})
		default:
			out = append(out, shapeItem{m.Role + " " + e.Type, seq})
		}
	}
	return out
}

// headerFacts reads what the request header offers: whether it has a
// system prompt, and the tool names (known is false when the tools are a
// placeholder, as in the corpus's pinned headers).
func headerFacts(raw json.RawMessage) (system bool, tools []string, known bool) {
	var h struct {
		Header struct {
			System json.RawMessage `json:"system"`
			Tools  json.RawMessage `json:"tools"`
		} `json:"header"`
		System json.RawMessage `json:"system"`
		Tools  json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return false, nil, false
	}
	sys, tl := h.System, h.Tools
	if sys == nil && tl == nil {
		sys, tl = h.Header.System, h.Header.Tools
	}
	var s string
	system = json.Unmarshal(sys, &s) == nil && s != ""
	var list []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(tl, &list) == nil {
		for _, t := range list {
			tools = append(tools, t.Name)
		}
		return system, tools, true
	}
	return system, nil, false
}

func checkRequests(c *cmp) {
	keys := func(rs []*stepRequest) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = stepKey(r.Turn, r.Step)
		}
		return out
	}
	w, g := c.want.steps, c.got.steps
	if wk, gk := keys(w), keys(g); !slices.Equal(wk, gk) {
		c.diff("requests", "", "model calls at %s", c.vs(fmt.Sprint(wk), fmt.Sprint(gk)))
	}
	// A history difference shows again in every later request; it is
	// reported once, at the first request that has it.
	seen := map[[2]int]bool{}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		if a.Turn != b.Turn || a.Step != b.Step {
			break
		}
		where := fmt.Sprintf("%s (the request before %s)", stepKey(a.Turn, a.Step), c.seqs(a.Seq, b.Seq))
		ws, gs := shape(c.want, c.wlog, a), shape(c.got, c.glog, b)
		for j := 0; j < max(len(ws), len(gs)); j++ {
			x, y := "(nothing)", "(nothing)"
			xs, ys := -1, -1
			if j < len(ws) {
				x, xs = ws[j].label, ws[j].seq
			}
			if j < len(gs) {
				y, ys = gs[j].label, gs[j].seq
			}
			if x != y {
				if seen[[2]int{xs, ys}] {
					break
				}
				seen[[2]int{xs, ys}] = true
				c.diff("requests", where, "history message %d (%s seq %d, %s seq %d): %s\n  %s history: %s\n  %s history: %s",
					j+1, c.r.Want, xs, c.r.Got, ys, c.vs(strconv.Quote(x), strconv.Quote(y)), c.r.Want, labels(ws), c.r.Got, labels(gs))
				break
			}
		}
		wsys, _, _ := headerFacts(a.Header)
		gsys, gtools, gknown := headerFacts(b.Header)
		if wsys && !gsys {
			c.diff("requests", where, "%s sends a system prompt, %s none", c.r.Want, c.r.Got)
		}
		if gknown {
			for _, call := range c.got.calls {
				if call.Turn == b.Turn && call.Step == b.Step && !slices.Contains(gtools, call.Name) {
					c.diff("requests", where, "the model calls %s, which the %s request does not offer (it offers %v)", call.Name, c.r.Got, gtools)
				}
			}
		}
	}
}

// labels renders a history shape on one line.
func labels(s []shapeItem) string {
	parts := make([]string, len(s))
	for i, it := range s {
		parts[i] = it.label
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

// compareWire runs the wire checks: answers, agent text, permission
// requests, and stray lines.
func compareWire(r *Report, want, got *Side, wf, gf []*facts) {
	if want.Wire == nil || got.Wire == nil {
		side := want.Label
		if want.Wire != nil {
			side = got.Label
		}
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the wire: %s has no stdout transcript, so stop reasons, error codes, agent text on the wire and permission requests were not compared", side))
		return
	}
	ww, gw := ParseWire(want.Wire), ParseWire(got.Wire)
	add := func(check, where, format string, args ...any) {
		r.Diffs = append(r.Diffs, Diff{Check: check, Where: where, What: fmt.Sprintf(format, args...)})
	}
	vs := func(a, b string) string { return fmt.Sprintf("%s %s, %s %s", r.Want, a, r.Got, b) }
	for _, n := range gw.Bad {
		add("wire", fmt.Sprintf("%s stdout line %d", r.Got, n), "not a JSON-RPC 2.0 frame")
	}
	if len(ww.Bad) > 0 {
		r.Unchecked = append(r.Unchecked, fmt.Sprintf("the wire: %s stdout lines %v are not JSON-RPC frames and were skipped", r.Want, ww.Bad))
	}
	outcomes := func(w *Wire) []string {
		out := make([]string, len(w.Answers))
		for i, a := range w.Answers {
			out[i] = a.Outcome
		}
		return out
	}
	if wo, gt := outcomes(ww), outcomes(gw); !slices.Equal(wo, gt) {
		if len(wo) != len(gt) {
			add("wire answers", "", "%s", vs(fmt.Sprint(wo), fmt.Sprint(gt)))
		}
		for i := 0; i < min(len(wo), len(gt)); i++ {
			if wo[i] != gt[i] {
				add("wire answers", fmt.Sprintf("answer %d (%s line %d, %s line %d)", i+1, r.Want, ww.Answers[i].Line, r.Got, gw.Answers[i].Line), "%s", vs(wo[i], gt[i]))
			}
		}
	}
	for i := 0; i < min(len(ww.Answers), len(gw.Answers)); i++ {
		if a, b := ww.Answers[i].Text, gw.Answers[i].Text; a != b {
			add("wire text", fmt.Sprintf("before answer %d (%s line %d, %s line %d)", i+1, r.Want, ww.Answers[i].Line, r.Got, gw.Answers[i].Line), "agent_message_chunk text: %s", vs(strconv.Quote(clip(a, 300)), strconv.Quote(clip(b, 300))))
		}
	}
	if ww.Trailing != gw.Trailing {
		add("wire text", "after the last answer", "agent_message_chunk text: %s", vs(strconv.Quote(clip(ww.Trailing, 300)), strconv.Quote(clip(gw.Trailing, 300))))
	}
	toolOf := func(fs []*facts, id string) string {
		for _, f := range fs {
			for _, c := range f.calls {
				if c.ID == id {
					return c.Name
				}
			}
		}
		return "(unknown call)"
	}
	render := func(p Permission, fs []*facts) string {
		return fmt.Sprintf("%s %s offering %v", toolOf(fs, p.ToolCallID), p.ToolCallID, p.Kinds)
	}
	wp, gp := ww.Permissions, gw.Permissions
	if len(wp) != len(gp) {
		list := func(ps []Permission, fs []*facts) string {
			parts := make([]string, len(ps))
			for i, p := range ps {
				parts[i] = render(p, fs)
			}
			return "[" + strings.Join(parts, "; ") + "]"
		}
		add("permission requests", "", "%s asks %d time(s) %s, %s %d %s", r.Want, len(wp), list(wp, wf), r.Got, len(gp), list(gp, gf))
	}
	for i := 0; i < min(len(wp), len(gp)); i++ {
		if a, b := render(wp[i], wf), render(gp[i], gf); a != b {
			add("permission requests", fmt.Sprintf("request %d (%s line %d, %s line %d)", i+1, r.Want, wp[i].Line, r.Got, gp[i].Line), "%s", vs(a, b))
		}
	}
	compareUpdates(r, want, got, ww, gw)
}
