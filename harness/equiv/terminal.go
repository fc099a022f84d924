package equiv

import (
	"encoding/json"
	"strings"
)

// The persistent terminal tools (agent/terminal). Each system's shell
// prints its own prompt (the reference's `dsh> `, reel's `reel> `), so a
// line's leading prompt is taken out and a line that was only a prompt is
// no line; the startup output (the prompt alone) is not compared.

var (
	termOpened = &pattern{expr: `^started terminal session (\S+)(?: \((.*)\))? \[type: ([^\]\n]+)\]\n`}
	termSent   = &pattern{expr: `(?s)^(.*)\n\[wait: ([a-z_]+)\]\n\[session: ([^\]\n]+)\](\n\[output truncated\])?$`}
	termPaged  = &pattern{expr: `(?s)^(.*)\n\[lines: (\d+)-(\d+) of (\d+)\](\n\[output truncated\])?$`}
	termSignal = &pattern{expr: `^delivered (SIG[A-Z]+) to foreground process group \d+$`}
	termClosed = &pattern{expr: `^(?:closed terminal session (\S+)|terminal session (\S+) was already closing)$`}
	termListed = &pattern{expr: `^(\S+(?: \(.*\))? \[[^\]]+\] (?:running|exited code=\S+ signal=\S+))(?: pid=\d+)?$`}
)

// shellPrompts are the prompts the two systems' shells print.
func shellPrompts() []string { return []string{"dsh> ", "reel> "} }

// terminalLines are the lines of terminal output with each line's leading
// prompt taken out and prompt-only (and empty) lines left out.
func terminalLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		for _, p := range shellPrompts() {
			if strings.HasPrefix(l, p) || l == strings.TrimSpace(p) {
				l = strings.TrimPrefix(strings.TrimPrefix(l, p), strings.TrimSpace(p))
				break
			}
		}
		if l = strings.TrimRight(l, " \t"); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// terminalOpenEssence: the terminal's id, name and type.
func terminalOpenEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := termOpened.get().FindStringSubmatch(text)
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{"session " + m[1], "name " + m[2], "type " + m[3]}}, true
}

// terminalSendEssence: the wait reason, the shell's status and the output
// lines — from the logged viewport when the result carries one (the
// result's text may show only its tail), else from the text.
func terminalSendEssence(text string, meta json.RawMessage) (Essence, bool) {
	m := termSent.get().FindStringSubmatch(text)
	if m == nil {
		return Essence{}, false
	}
	e := Essence{Facts: []string{"wait " + m[2], "session " + m[3]}}
	out := m[1]
	var mv struct {
		Viewport *string `json:"viewport"`
	}
	if len(meta) > 0 && json.Unmarshal(meta, &mv) == nil && mv.Viewport != nil {
		out = *mv.Viewport
	} else if m[4] != "" {
		return e, true // cut, with nothing whole to compare
	}
	if out == "(no new output)" {
		out = ""
	}
	e.Items = terminalLines(out)
	return e, true
}

// terminalReadEssence: the page's place and its lines.
func terminalReadEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := termPaged.get().FindStringSubmatch(text)
	if m == nil {
		return Essence{}, false
	}
	e := Essence{Facts: []string{"lines " + m[2] + "-" + m[3] + " of " + m[4]}}
	if m[5] != "" {
		e.Facts = append(e.Facts, "truncated")
	}
	if m[1] != "(no retained output)" {
		e.Items = terminalLines(m[1])
	}
	return e, true
}

// terminalSignalEssence: the signal delivered (the process group is each
// run's own).
func terminalSignalEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := termSignal.get().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{"delivered " + m[1]}}, true
}

// terminalCloseEssence: the terminal closed, and whether it was already
// closing.
func terminalCloseEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := termClosed.get().FindStringSubmatch(strings.TrimSpace(text))
	switch {
	case m == nil:
		return Essence{}, false
	case m[1] != "":
		return Essence{Facts: []string{"closed " + m[1]}}, true
	}
	return Essence{Facts: []string{"already closing " + m[2]}}, true
}

// terminalListEssence: a line per terminal without its pid.
func terminalListEssence(text string, _ json.RawMessage) (Essence, bool) {
	body := strings.TrimSpace(text)
	if body == "(no terminal sessions)" {
		return Essence{Facts: []string{"no terminal sessions"}}, true
	}
	var e Essence
	for _, l := range strings.Split(body, "\n") {
		m := termListed.get().FindStringSubmatch(l)
		if m == nil {
			return Essence{}, false
		}
		e.Items = append(e.Items, m[1])
	}
	return e, len(e.Items) > 0
}
