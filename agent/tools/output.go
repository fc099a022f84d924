package tools

import "github.com/reel-agent/reel/sessionlog"

// Output collects the text of a tool's result within bounded memory, the
// way bash collects a command's output: a text within Env.MaxInlineBytes
// is the result whole; a longer one is saved whole to a spill file (named
// after the tool) and shown as its head and tail with the reference's
// notice, "(Omitted N bytes. Full formatted result stored at: PATH. …)".
// Memory stays within a few times the inline cap however much is written.
type Output struct{ c collector }

// NewOutput returns an Output for a result of tool.
func (e *Env) NewOutput(tool string) *Output {
	return &Output{c: collector{env: e, limit: e.maxInline(), prefix: tool}}
}

// Write takes the next bytes of the text. It never fails.
func (o *Output) Write(p []byte) (int, error) { return o.c.Write(p) }

// WriteString takes the next part of the text. It never fails.
func (o *Output) WriteString(s string) (int, error) { return o.c.Write([]byte(s)) }

// Text returns what the model is shown and the spill file's path ("" when
// nothing was spilled). Call it once, after the last write.
func (o *Output) Text() (text, spillPath string) {
	if o.c.total == 0 {
		return "", ""
	}
	return o.c.finish("")
}

// History is the calling session's own log, read-only: what the session
// query tools read (Env.History). Implementations are safe for concurrent
// use; the events they return are copies the caller may keep.
type History interface {
	// SessionID is the session's id.
	SessionID() string
	// Title is the session's current title, "" when it has none.
	Title() string
	// Window returns the events whose seq lies in [from, to] (both
	// clamped to the log) and the number of events in the log.
	Window(from, to int) (events []sessionlog.Event, length int)
}
