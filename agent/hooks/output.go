package hooks

import (
	"strings"

	"github.com/reel-agent/reel/internal/jsrules"
)

// The decisions an Output may carry: the top-level "decision" gives
// approve or block, hookSpecificOutput.permissionDecision allow, deny or
// ask; exit status 2 is block.
const (
	DecisionApprove = "approve"
	DecisionAllow   = "allow"
	DecisionBlock   = "block"
	DecisionDeny    = "deny"
	DecisionAsk     = "ask"
)

// Output is what one hook command said, decoded from its exit status,
// stdout and stderr. The empty string is an absent field.
type Output struct {
	// ExitCode is the command's exit status, nil when it did not exit
	// (killed, timed out, could not run).
	ExitCode *int
	// Stdout and Stderr are the streams, trimmed of white space.
	Stdout, Stderr string
	// Continue is the JSON "continue" (false asks to halt), nil if absent.
	Continue *bool
	// StopReason is the JSON "stopReason", SystemMessage "systemMessage".
	StopReason, SystemMessage string
	// Decision is one of the Decision constants, or "".
	Decision string
	// Reason explains Decision: stderr on exit 2, else the JSON "reason"
	// or permissionDecisionReason.
	Reason string
	// HookEventName is what hookSpecificOutput claims to answer, kept even
	// when it names another event (whose fields are then dropped).
	HookEventName string
	// AdditionalContext is hookSpecificOutput.additionalContext.
	AdditionalContext string
	// UpdatedInput is hookSpecificOutput.updatedInput (an object) as JSON;
	// nil when absent. It is reported, never honoured.
	UpdatedInput []byte
}

// ParseOutput decodes a hook command's outcome. exitCode is nil when the
// command did not exit. Exit 2 is a block whose reason is stderr; on exit
// 0 a stdout that starts with '{' is read as a JSON object (JSON that
// does not parse, or is not an object, leaves plain stdout); any other
// status is a non-blocking failure. event, when not "", is the firing
// event: a hookSpecificOutput whose hookEventName is missing or differs
// has its event-scoped fields (permissionDecision and its reason,
// additionalContext, updatedInput) dropped. ParseOutput never fails.
func ParseOutput(exitCode *int, stdout, stderr, event string) Output {
	out := Output{ExitCode: exitCode, Stdout: jsrules.Trim(stdout), Stderr: jsrules.Trim(stderr)}
	if exitCode == nil {
		return out
	}
	switch *exitCode {
	case 2:
		out.Decision = DecisionBlock
		out.Reason = out.Stderr
	case 0:
		if strings.HasPrefix(out.Stdout, "{") {
			if v, err := jsrules.Parse([]byte(out.Stdout)); err == nil {
				if o, ok := v.(*jsrules.Object); ok {
					out.applyJSON(o, event)
				}
			}
		}
	}
	return out
}

// applyJSON folds a hook's JSON object into out.
func (out *Output) applyJSON(o *jsrules.Object, event string) {
	if c, ok := o.Get("continue").(bool); ok {
		out.Continue = &c
	}
	if s, ok := o.Get("stopReason").(string); ok {
		out.StopReason = s
	}
	if s, ok := o.Get("systemMessage").(string); ok {
		out.SystemMessage = s
	}
	if s, _ := o.Get("decision").(string); s == DecisionApprove || s == DecisionBlock {
		out.Decision = s
	}
	if s, ok := o.Get("reason").(string); ok {
		out.Reason = s
	}
	hso, ok := o.Get("hookSpecificOutput").(*jsrules.Object)
	if !ok {
		return
	}
	name, _ := hso.Get("hookEventName").(string)
	out.HookEventName = name
	if event != "" && name != event {
		return
	}
	if s, _ := hso.Get("permissionDecision").(string); s == DecisionAllow || s == DecisionDeny || s == DecisionAsk {
		out.Decision = s
	}
	if s, ok := hso.Get("permissionDecisionReason").(string); ok {
		out.Reason = s
	}
	if s, ok := hso.Get("additionalContext").(string); ok {
		out.AdditionalContext = s
	}
	if u, ok := hso.Get("updatedInput").(*jsrules.Object); ok {
		out.UpdatedInput = jsrules.Append(nil, u)
	}
}

// resultDecision is the decision hook/result records for out: its
// decision, else "stop" for continue:false, else "pass".
func (out *Output) resultDecision() string {
	switch {
	case out.Decision != "":
		return out.Decision
	case out.Continue != nil && !*out.Continue:
		return "stop"
	}
	return "pass"
}

// The merged decisions, strictest first.
const (
	MergedDeny  = "deny"
	MergedAsk   = "ask"
	MergedAllow = "allow"
	MergedNone  = "none"
)

// Merged is the outcome of every hook that ran at one point.
type Merged struct {
	// Decision is the strictest decision of the hooks: deny (or block) >
	// ask > allow (or approve) > none.
	Decision string
	// Reason joins, with a blank line, the non-empty reasons of the hooks
	// whose decision won (deny or ask only).
	Reason string
	// Stop reports that a hook said continue:false; StopReason is the
	// first such hook's stopReason.
	Stop       bool
	StopReason string
	// Contexts and SystemMessages are the hooks' non-empty
	// additionalContext and systemMessage, in hook order.
	Contexts, SystemMessages []string
}

func rank(decision string) int {
	switch decision {
	case DecisionDeny, DecisionBlock:
		return 3
	case DecisionAsk:
		return 2
	case DecisionAllow, DecisionApprove:
		return 1
	}
	return 0
}

// Merge folds outs, in hook order, into one outcome.
func Merge(outs []Output) Merged {
	var m Merged
	top := 0
	reasons := map[int][]string{}
	for _, o := range outs {
		r := rank(o.Decision)
		top = max(top, r)
		if r >= 2 && o.Reason != "" {
			reasons[r] = append(reasons[r], o.Reason)
		}
		if o.Continue != nil && !*o.Continue && !m.Stop {
			m.Stop, m.StopReason = true, o.StopReason
		}
		if o.AdditionalContext != "" {
			m.Contexts = append(m.Contexts, o.AdditionalContext)
		}
		if o.SystemMessage != "" {
			m.SystemMessages = append(m.SystemMessages, o.SystemMessage)
		}
	}
	m.Decision = [...]string{MergedNone, MergedAllow, MergedAsk, MergedDeny}[top]
	m.Reason = strings.Join(reasons[top], "\n\n")
	return m
}

// summarize is the stderrSummary of hook/result: stderr trimmed and, when
// longer than limit UTF-16 code units (JavaScript's length), cut to its
// first limit units with "…" appended. A cut that would split a surrogate
// pair ends before the pair (JavaScript would keep a lone surrogate,
// which a Go string cannot hold).
func summarize(stderr string, limit int) string {
	t := jsrules.Trim(stderr)
	if jsrules.UTF16Len(t) <= limit {
		return t
	}
	head, _ := jsrules.UTF16Prefix(t, limit)
	return head + "…"
}
