package terminal

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// truncatedMarker ends a result that was cut.
const truncatedMarker = "\n[output truncated]"

// head is the longest prefix of s of at most n bytes that ends at a
// character boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail is the longest suffix of s of at most n bytes that starts at a
// character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// bound cuts a whole result to max bytes: its head and the truncation
// marker.
func bound(text string, max int) string {
	if len(text) <= max {
		return text
	}
	if len(truncatedMarker) >= max {
		return tail(truncatedMarker, max)
	}
	return head(text, max-len(truncatedMarker)) + truncatedMarker
}

// boundWithSuffix is content and its metadata suffix within max bytes:
// whole when it fits (with the marker when the output was already cut),
// else the content's tail before the suffix and the marker.
func boundWithSuffix(content, suffix string, cut bool, max int) string {
	marker := ""
	if cut {
		marker = truncatedMarker
	}
	if whole := content + suffix + marker; len(whole) <= max {
		return whole
	}
	fixed := suffix + truncatedMarker
	if len(fixed) >= max {
		return tail(fixed, max)
	}
	return tail(content, max-len(fixed)) + fixed
}

// renderOpen is terminal_open's result: "started terminal session ID
// (NAME) [type: TYPE]" and the startup output.
func renderOpen(t *Terminal, motd string, max int) string {
	label := t.ID
	if t.Name != "" {
		label += " (" + t.Name + ")"
	}
	prefix := fmt.Sprintf("started terminal session %s [type: %s]\n", label, t.Type)
	if motd == "" {
		motd = "(no startup output)"
	}
	if whole := prefix + motd; len(whole) <= max {
		return whole
	}
	fixed := prefix + truncatedMarker
	if len(fixed) >= max {
		return head(fixed, max)
	}
	return prefix + tail(motd, max-len(fixed)) + truncatedMarker
}

// renderSend is terminal_send's result: the output, then the wait reason
// and the shell's status.
func renderSend(r SendResult, max int) string {
	out := r.Viewport
	if out == "" {
		out = "(no new output)"
	}
	return boundWithSuffix(out, fmt.Sprintf("\n[wait: %s]\n[session: %s]", r.WaitReason, r.Status), r.Truncated, max)
}

// renderRead is terminal_read's result: the page, then its place.
func renderRead(r ReadResult, max int) string {
	out := r.Text
	if out == "" {
		out = "(no retained output)"
	}
	return boundWithSuffix(out, fmt.Sprintf("\n[lines: %d-%d of %d]", r.LineBegin, r.LineEnd, r.TotalLines), r.Truncated, max)
}

// renderList is terminal_list's result: a line per terminal.
func renderList(ts []*Terminal, max int) string {
	if len(ts) == 0 {
		return "(no terminal sessions)"
	}
	lines := make([]string, 0, len(ts))
	for _, t := range ts {
		name := ""
		if t.Name != "" {
			name = " (" + t.Name + ")"
		}
		lines = append(lines, fmt.Sprintf("%s%s [%s] %s pid=%d", t.ID, name, t.Type, t.Status(), t.PID()))
	}
	return boundWithSuffix(strings.Join(lines, "\n"), "", false, max)
}
