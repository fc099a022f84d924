package equiv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// hookFact is one hook invocation (hook/invoked) and its outcome
// (hook/result), paired by handler id within the turn. Where it lies is
// the turn and the step it is in or follows (0: before the turn's first
// step, where UserPromptSubmit runs).
type hookFact struct {
	Seq, Turn, Step int
	Point, Dialect  string
	Matcher         string
	HandlerID       string
	// Result is nil while no hook/result answers the invocation.
	Result *sessionlog.HookResultData
	// ResultSeq is the seq of Result.
	ResultSeq int
}

// addHook records a hook event; a result that answers no open invocation
// of its turn is an error of the log.
func (f *facts) addHook(e *sessionlog.Event, turn, step int, p *pather) error {
	if e.Type == sessionlog.TypeHookInvoked {
		d, err := sessionlog.DecodeData[sessionlog.HookInvokedData](e)
		if err != nil {
			return err
		}
		f.hooks = append(f.hooks, &hookFact{Seq: e.Seq, Turn: turn, Step: step, Point: d.Point, Dialect: d.Dialect, Matcher: d.Matcher, HandlerID: d.HandlerID})
		return nil
	}
	d, err := sessionlog.DecodeData[sessionlog.HookResultData](e)
	if err != nil {
		return err
	}
	for _, h := range f.hooks {
		if h.Result == nil && h.HandlerID == d.HandlerID && h.Point == d.Point && h.Turn == d.Turn {
			d.StderrSummary = p.apply(d.StderrSummary)
			h.Result, h.ResultSeq = &d, e.Seq
			return nil
		}
	}
	return fmt.Errorf("seq %d: hook/result %s (%s, turn %d) answers no hook/invoked", e.Seq, d.HandlerID, d.Point, d.Turn)
}

// hookWhere names an invocation: "hook 2 PostToolUse (turn 1 step 1; recording seq 79, reel seq 40)".
func (c *cmp) hookWhere(i int, w, g *hookFact) string {
	return fmt.Sprintf("hook %d %s (turn %d step %d; %s)", i+1, w.Point, w.Turn, w.Step, c.seqs(w.Seq, g.Seq))
}

// checkHooks compares the hook invocations: the same ones in the same
// order and place (turn, step, point, dialect, matcher), each answered,
// with the same outcome (decision, exit code, stderr summary). Handler
// ids (a process-wide counter) and durations are not compared.
func checkHooks(c *cmp) {
	w, g := c.want.hooks, c.got.hooks
	if len(w) != len(g) {
		c.diff("hooks", "", "%s invokes %d hook(s) %s, %s %d %s", c.r.Want, len(w), hookList(w), c.r.Got, len(g), hookList(g))
	}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		where := c.hookWhere(i, a, b)
		switch {
		case a.Point != b.Point || a.Dialect != b.Dialect:
			c.diff("hooks", where, "hook: %s", c.vs(a.Dialect+" "+a.Point, b.Dialect+" "+b.Point))
			continue
		case a.Turn != b.Turn || a.Step != b.Step:
			c.diff("hooks", where, "place: %s", c.vs(fmt.Sprintf("turn %d step %d", a.Turn, a.Step), fmt.Sprintf("turn %d step %d", b.Turn, b.Step)))
		case a.Matcher != b.Matcher:
			c.diff("hooks", where, "matcher: %s", c.vs(strconv.Quote(a.Matcher), strconv.Quote(b.Matcher)))
		}
		switch {
		case a.Result == nil && b.Result == nil:
			continue
		case b.Result == nil:
			c.diff("hooks", where, "%s has no hook/result for the invocation", c.r.Got)
			continue
		case a.Result == nil:
			c.diff("hooks", where, "%s has no hook/result for the invocation, %s has one (seq %d)", c.r.Want, c.r.Got, b.ResultSeq)
			continue
		}
		ar, br := a.Result, b.Result
		if ar.Decision != br.Decision {
			c.diff("hooks", where, "decision: %s", c.vs(ar.Decision, br.Decision))
		}
		if exitText(ar.ExitCode) != exitText(br.ExitCode) {
			c.diff("hooks", where, "exit code: %s", c.vs(exitText(ar.ExitCode), exitText(br.ExitCode)))
		}
		if ar.StderrSummary != br.StderrSummary {
			c.diff("hooks", where, "stderr: %s", c.vs(strconv.Quote(ar.StderrSummary), strconv.Quote(br.StderrSummary)))
		}
	}
}

func exitText(code *int) string {
	if code == nil {
		return "none"
	}
	return strconv.Itoa(*code)
}

// hookList renders invocations compactly: [PreToolUse:block Stop:pass].
func hookList(hs []*hookFact) string {
	out := make([]string, len(hs))
	for i, h := range hs {
		d := "unanswered"
		if h.Result != nil {
			d = h.Result.Decision
		}
		out[i] = h.Point + ":" + d
	}
	return "[" + strings.Join(out, " ") + "]"
}
