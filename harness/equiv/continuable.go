package equiv

import (
	"encoding/json"
	"strings"
)

// The results of the tools that steer background (continuable) children:
// send_message, list_agents, report and interrupt_agent. Both systems word
// them alike (docs/subagents-reference.md, section 2.9); ids are the
// children's session ids, which a replay pins to the recorded ones.

var (
	queuedFor      = &pattern{expr: `^message queued as the next turn for subagent (\S+)$`}
	reportAccepted = &pattern{expr: `^report accepted by the agent that started you as message \S+$`}
	interruptFor   = &pattern{expr: `^interrupt requested for agent (\S+)$`}
	// agentLine is one list_agents entry: "<id> [<status>] — <label>", or
	// with the descendants scope "<id> [<status>] parent=<p> depth=<n> —
	// <label>", or "<id> [diagnostic: …]" for a child whose log cannot be
	// read.
	agentLine = &pattern{expr: `^\S+ \[[a-z]+(?:: [a-z]+)?\](?: .*)?$`}
)

// sendMessageEssence reduces a send_message result to the child it queued
// a turn for (the message itself is the call's argument, compared with
// every call's arguments).
func sendMessageEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := queuedFor.get().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{"queued a turn for " + m[1]}}, true
}

// listAgentsEssence reduces a list_agents result to its lines, in order
// (both list by the child's creation): id, status and label.
func listAgentsEssence(text string, _ json.RawMessage) (Essence, bool) {
	body := strings.TrimRight(text, " \t\n")
	if body == "(no subagents)" {
		return Essence{Facts: []string{"no subagents"}}, true
	}
	if body == "" {
		return Essence{}, false
	}
	var e Essence
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimRight(l, " \t")
		if !agentLine.get().MatchString(l) {
			return Essence{}, false
		}
		e.Items = append(e.Items, l)
	}
	return e, true
}

// reportEssence reduces a report result to its acceptance: the message id
// it names is the id of the parent's new message, opaque.
func reportEssence(text string, _ json.RawMessage) (Essence, bool) {
	if !reportAccepted.get().MatchString(strings.TrimSpace(text)) {
		return Essence{}, false
	}
	return Essence{Facts: []string{"report accepted"}}, true
}

// interruptEssence reduces an interrupt_agent result to the agent it
// names.
func interruptEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := interruptFor.get().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{"interrupt requested for " + m[1]}}, true
}
