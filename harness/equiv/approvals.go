package equiv

import (
	"fmt"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// approvalFact is one question put to whoever approves the session's tool
// calls (approval/asked) and its outcome (the approval/decided with the
// same id; "" while none answers it), in the turn it was asked in.
type approvalFact struct {
	Seq, Turn    int
	Tool, CallID string
	Outcome      string
	outcomeSeq   int
}

// addApproval records an approval event; an outcome that answers no
// question is an error of the log.
func (f *facts) addApproval(e *sessionlog.Event, turn int, ids map[string]*approvalFact) error {
	if e.Type == sessionlog.TypeApprovalAsked {
		d, err := sessionlog.DecodeData[sessionlog.ApprovalAskedData](e)
		if err != nil {
			return err
		}
		a := &approvalFact{Seq: e.Seq, Turn: turn, Tool: d.ToolName, CallID: d.CallID}
		f.approvals = append(f.approvals, a)
		ids[d.ID] = a
		return nil
	}
	d, err := sessionlog.DecodeData[sessionlog.ApprovalDecidedData](e)
	if err != nil {
		return err
	}
	a, ok := ids[d.ID]
	if !ok || a.Outcome != "" {
		return fmt.Errorf("seq %d: approval/decided %s answers no open approval/asked", e.Seq, d.ID)
	}
	a.Outcome, a.outcomeSeq = d.Outcome, e.Seq
	return nil
}

// checkApprovals compares the approval questions: the same ones in the
// same order, each about the same tool call in the same turn, with the
// same outcome. The question's id (random) and reason (wording) are not
// compared; what the client was shown is the wire's permission check.
func checkApprovals(c *cmp) {
	w, g := c.want.approvals, c.got.approvals
	if len(w) != len(g) {
		c.diff("approvals", "", "%s asks %d approval question(s) %s, %s %d %s", c.r.Want, len(w), approvalList(w), c.r.Got, len(g), approvalList(g))
	}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		where := fmt.Sprintf("approval %d (%s)", i+1, c.seqs(a.Seq, b.Seq))
		switch {
		case a.Tool != b.Tool || a.CallID != b.CallID || a.Turn != b.Turn:
			c.diff("approvals", where, "question: %s", c.vs(fmt.Sprintf("%s %s in turn %d", a.Tool, a.CallID, a.Turn), fmt.Sprintf("%s %s in turn %d", b.Tool, b.CallID, b.Turn)))
		case a.Outcome != b.Outcome:
			c.diff("approvals", where, "outcome: %s", c.vs(orNone(a.Outcome), orNone(b.Outcome)))
		}
	}
}

// approvalList renders questions as [tool:outcome …].
func approvalList(list []*approvalFact) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Tool + ":" + orNone(a.Outcome)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
