package equiv

import (
	"encoding/json"
	"strings"
)

// MessageRule classifies user/messages on the surface — the prompts and
// everything an agent injects as a user message — and says how a class is
// compared. Messages are matched in surface order, class and identity;
// a rule with Presentation set drops its messages from that comparison.
type MessageRule struct {
	// Class names the class in messages and in request shapes.
	Class string
	// Source describes the messages the rule covers (by source).
	Source string
	// Compared says what of each message must agree.
	Compared string
	// Presentation marks a class that is how one system presents
	// something the other presents elsewhere; it is not compared as a
	// message.
	Presentation bool
	match        func(s *source) bool
	identity     func(u *userFact) string
}

// source is the part of a message source the rules read.
type source struct {
	Kind         string `json:"kind"`
	Plugin       string `json:"plugin"`
	Form         string `json:"form"`
	Summary      string `json:"summary"`
	CompactionID string `json:"compactionId"`
	// SenderSessionID is the session a relay or notice comes from (a
	// background child's to its parent, the parent's to a child).
	SenderSessionID string `json:"senderSessionId"`
}

// fixtureCompactionID marks the surface rewrite a test-only plugin of the
// reference suite performs in agent-instructions
// (examples/acp-agent/tests/fixtures/workspace-context-compaction.ts in
// github.com/toninfo/deepseek-harness: after the read of nested/task.txt it
// replaces the instruction baseline with a canned compaction message).
const fixtureCompactionID = "workspace-context-fixture"

// MessageRules is the table of user-message classes, first match wins.
var MessageRules = []MessageRule{
	{
		Class:    "prompt",
		Source:   "`{\"kind\":\"user\"}`: what the client sent",
		Compared: "count, order and text",
		match:    func(s *source) bool { return s.Kind == "user" },
		identity: func(u *userFact) string { return strings.Join(u.Parts, "") },
	},
	{
		Class:    "instructions",
		Source:   "`{\"kind\":\"agent-instructions\"}`: AGENTS.md / CLAUDE.md files injected as a `<system-reminder>`",
		Compared: "count and order of the injections, and per injection the files it names (`Instructions from: P`, `Additional instructions from: P`) with their text, the boilerplate around them left out",
		match:    func(s *source) bool { return s.Kind == "agent-instructions" },
		identity: func(u *userFact) string { return strings.Join(instructionFiles(u.Parts), "\n") },
	},
	{
		Class:    "repeat-reminder",
		Source:   "`{\"kind\":\"plugin\",\"plugin\":\"repeat-tool-reminder\"}`: the reminder after identical repeated tool calls",
		Compared: "count, order and the summary (`tool × N`)",
		match:    func(s *source) bool { return s.Kind == "plugin" && s.Plugin == "repeat-tool-reminder" },
		identity: func(u *userFact) string { return sourceOf(u).Summary },
	},
	{
		Class:        "runtime-context",
		Source:       "`{\"kind\":\"plugin\",\"plugin\":\"@deepseek-ai/dsh-system-prompt\",\"form\":\"snapshot\"}`: the reference's runtime-context message (file policy, approval policy)",
		Compared:     "not as a message: reel states the mode in its system prompt and logs it as `sandbox/mode` and `approval/policy` events; the mode and approval policy the message names are compared with those events instead",
		Presentation: true,
		match: func(s *source) bool {
			return s.Kind == "plugin" && s.Plugin == "@deepseek-ai/dsh-system-prompt" && s.Form == "snapshot"
		},
	},
	{
		Class:        "fixture-compaction",
		Source:       "`{\"kind\":\"plugin\",\"plugin\":\"compact\",\"compactionId\":\"" + fixtureCompactionID + "\"}`: a surface rewrite by a test-only plugin of the reference suite (tests/fixtures/workspace-context-compaction.ts)",
		Compared:     "not at all: the message is dropped, the message it replaced counts as still visible, and the instruction files the reference injects again because of it are not counted twice",
		Presentation: true,
		match: func(s *source) bool {
			return s.Kind == "plugin" && s.Plugin == "compact" && s.CompactionID == fixtureCompactionID
		},
	},
	{
		Class:    "compaction",
		Source:   "`{\"kind\":\"compaction\"}` (reel) or `{\"kind\":\"plugin\",\"plugin\":\"compact\"}` (reference): a compaction summary",
		Compared: "count and order",
		match:    func(s *source) bool { return s.Kind == "compaction" || (s.Kind == "plugin" && s.Plugin == "compact") },
		identity: func(*userFact) string { return "summary" },
	},
	{
		Class:    "subagent-report",
		Source:   "`{\"kind\":\"subagent-report\"}`: a background child's `report`, relayed to its parent (`Background subagent <id> reported:` and the output)",
		Compared: relayCompared,
		match:    func(s *source) bool { return s.Kind == "subagent-report" },
		identity: relayIdentity,
	},
	{
		Class:    "subagent-settled",
		Source:   "`{\"kind\":\"subagent-settled\"}`: the notice a parent gets when a background child settles (`Background subagent <id> finished …`, `Its closing message:` and the child's last text)",
		Compared: relayCompared,
		match:    func(s *source) bool { return s.Kind == "subagent-settled" },
		identity: relayIdentity,
	},
	{
		Class:    "coordinator",
		Source:   "`{\"kind\":\"coordinator\"}`: a parent's `send_message`, relayed to the background child as its next turn's prompt",
		Compared: relayCompared,
		match:    func(s *source) bool { return s.Kind == "coordinator" },
		identity: relayIdentity,
	},
	{
		Class:    "other",
		Source:   "any other source (hooks, skill catalogs, …)",
		Compared: "count, order, source kind (and plugin) and text",
		match:    func(*source) bool { return true },
		identity: func(u *userFact) string {
			s := sourceOf(u)
			return s.Kind + "/" + s.Plugin + ": " + strings.Join(u.Parts, "")
		},
	},
}

// relayCompared is what is compared of the messages between a parent and
// its background children.
const relayCompared = "count, order, the turn and step it enters at, the sender (`senderSessionId`) and the text, a boundary between text blocks counting as a line break"

// relayIdentity is a relay's or notice's sender and text, its blocks
// joined as lines: one system may send as separate blocks what the other
// sends as lines of one.
func relayIdentity(u *userFact) string {
	return "from " + sourceOf(u).SenderSessionID + ": " + strings.Join(u.Parts, "\n")
}

// sourceOf decodes a message's source.
func sourceOf(u *userFact) *source {
	s := &source{}
	_ = json.Unmarshal(u.Source, s)
	return s
}

var (
	instrFrom = &pattern{expr: `(?m)^(?:Additional instructions|Instructions) from: (.+)$`}
	instrPara = &pattern{expr: "(?m)^These instructions apply to work under `[^`\n]*`\\.[^\n]*$"}
)

// instructionFiles lists the files an instructions message injects, as
// "P: text", in order.
func instructionFiles(parts []string) []string {
	var out []string
	for _, part := range parts {
		idx := instrFrom.get().FindAllStringSubmatchIndex(part, -1)
		for k, m := range idx {
			name := part[m[2]:m[3]]
			end := len(part)
			if k+1 < len(idx) {
				end = idx[k+1][0]
			}
			body := part[m[1]:end]
			body = strings.ReplaceAll(body, "</system-reminder>", "")
			body = strings.ReplaceAll(body, "<system-reminder>", "")
			body = instrPara.get().ReplaceAllString(body, "")
			out = append(out, name+": "+strings.Join(strings.Fields(body), " "))
		}
	}
	return out
}

// classify sets each user message's rule and identity. Messages of a
// presentation class are dropped. After a fixture compaction, the files
// of the instructions it shadowed are taken out of the next instructions
// messages that inject them again (and a message left empty is dropped).
func classify(f *facts) {
	reinjected := map[string]bool{}
	for _, u := range f.users {
		s := sourceOf(u)
		for i := range MessageRules {
			if MessageRules[i].match(s) {
				u.rule = &MessageRules[i]
				break
			}
		}
		if u.rule.Class == "fixture-compaction" {
			for _, seq := range u.Replaces {
				if v := f.userAt[seq]; v != nil && v.rule != nil && v.rule.Class == "instructions" {
					for _, file := range instructionFiles(v.Parts) {
						reinjected[file] = true
					}
				}
			}
		}
		if u.rule.Presentation {
			u.drop = true
			continue
		}
		if u.rule.Class == "instructions" && len(reinjected) > 0 {
			var kept []string
			for _, file := range instructionFiles(u.Parts) {
				if reinjected[file] {
					delete(reinjected, file)
					continue
				}
				kept = append(kept, file)
			}
			if len(kept) == 0 {
				u.drop = true
				continue
			}
			u.identity = strings.Join(kept, "\n")
			continue
		}
		u.identity = u.rule.identity(u)
	}
}

var (
	policyMode  = &pattern{expr: `Current DSH file policy: ([a-z-]+)`}
	approvalOff = &pattern{expr: `Approval prompts are disabled`}
)

// settings lists the sandbox modes and approval policies in force as a
// log states them, in order, consecutive repeats folded: from sandbox/mode
// and approval/policy events when the log has them (reel), else from the
// runtime-context messages (the reference).
func settings(f *facts, l *Log) (modes, approvals []string) {
	add := func(list *[]string, v string) {
		if v != "" && (len(*list) == 0 || (*list)[len(*list)-1] != v) {
			*list = append(*list, v)
		}
	}
	for i := range l.Events {
		e := &l.Events[i]
		var d struct {
			Mode   string `json:"mode"`
			Policy string `json:"policy"`
		}
		switch e.Type {
		case "sandbox/mode":
			_ = json.Unmarshal(e.Data, &d)
			add(&modes, d.Mode)
		case "approval/policy":
			_ = json.Unmarshal(e.Data, &d)
			add(&approvals, approvalName(d.Policy))
		}
	}
	fromModes, fromApprovals := len(modes) == 0, len(approvals) == 0
	for _, u := range f.users {
		if u.rule == nil || u.rule.Class != "runtime-context" {
			continue
		}
		text := strings.Join(u.Parts, "\n")
		if m := policyMode.get().FindStringSubmatch(text); m != nil && fromModes {
			add(&modes, m[1])
		}
		if !fromApprovals {
			continue
		}
		switch {
		case approvalOff.get().MatchString(text):
			add(&approvals, "never")
		case strings.Contains(text, "Approval policy: ask"):
			add(&approvals, "on-request")
		}
	}
	return modes, approvals
}

// approvalName maps approval policy names of both systems onto one
// vocabulary.
func approvalName(p string) string {
	switch p {
	case "ask", "on-request":
		return "on-request"
	}
	return p
}
