package equiv

import (
	"encoding/json"
	"strings"
)

var (
	jobStatusLine  = &pattern{expr: `^\[status: ([a-z]+)(?:, ([^\]]*))?\]$`}
	jobKillAsked   = &pattern{expr: `^requested cancellation of job (\S+)$`}
	jobKillAlready = &pattern{expr: `^job (\S+) had already finished (\[status: [^\]]*\])$`}
)

// jobOutputEssence reduces a job_output result: its status line (last
// line) as a fact, the sandbox's verdict line as a fact (a runner that
// failed, or a denial), a spawn failure as a fact (each runtime words the
// operating system's error its own way: Node's `Error: spawn PATH ENOENT`,
// Go's `fork/exec PATH: no such file or directory`), and the other lines
// (stdout, the `[stderr]` section) in order.
func jobOutputEssence(text string, _ json.RawMessage) (Essence, bool) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	m := jobStatusLine.get().FindStringSubmatch(last)
	if m == nil {
		return Essence{}, false
	}
	e := Essence{Facts: []string{"status " + m[1]}}
	if m[2] != "" {
		e.Facts = append(e.Facts, m[2])
	}
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "spawn failed: "):
			e.Facts = append(e.Facts, "spawn failed")
		case strings.HasPrefix(l, "[sandbox: the sandbox runner itself failed under "):
			e.Facts = append(e.Facts, "sandbox runner failed")
		case strings.HasPrefix(l, "[sandbox: ") || strings.HasPrefix(l, "[sandbox denied: "):
			e.Facts = append(e.Facts, "sandbox denied")
		case l == "(no output)":
		default:
			e.Items = append(e.Items, strings.TrimRight(l, " \t\r"))
		}
	}
	return e, true
}

// jobKillEssence reduces a job_kill result to the job and what became of
// the request: cancellation requested, or the job had already finished
// (with its status line).
func jobKillEssence(text string, _ json.RawMessage) (Essence, bool) {
	t := strings.TrimSpace(text)
	if m := jobKillAsked.get().FindStringSubmatch(t); m != nil {
		return Essence{Facts: []string{"cancellation requested", "job " + m[1]}}, true
	}
	if m := jobKillAlready.get().FindStringSubmatch(t); m != nil {
		return Essence{Facts: []string{"already finished", "job " + m[1], m[2]}}, true
	}
	return Essence{}, false
}

var eventReadHead = &pattern{expr: "^Session (\\S+) — (.*)\nTarget event seq (\\d+):\n```json\n\\{\n  \"type\": \"([^\"]+)\""}

// eventReadEssence reduces a session_event_read result to its title (the
// caller's session id is each system's own) and the seq it read. The
// event at that seq is not compared: the two systems lay a session's log
// out differently (the reference's runtime-context message, reel's
// sandbox/mode and approval/policy events), so one seq names different
// events, of different sizes (spilled or not).
func eventReadEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := eventReadHead.get().FindStringSubmatch(text)
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{"title " + m[2], "seq " + m[3]}}, true
}
