package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// Repeated-call reminders, the reference agent's repeat-tool-reminder:
// the session counts runs of consecutive tool calls with the same name and
// canonical arguments (canonicalArguments); when a run reaches a threshold
// the model is reminded, in a user/message entered at the start of the
// next step. The first threshold gets a short nudge, every later one a
// detailed notice naming the tool, the run length and the arguments.
// Every call the model makes counts, a failed or refused one too (a model
// hammering a denied call is the loop worth breaking); a user prompt
// starts a new chain; nothing is vetoed or rewritten, and the tool's
// result is left as it is. The chain lives in memory only: a loaded
// session starts a fresh one.

// repeatPlugin names the reminders' source, as the reference names it.
const repeatPlugin = "repeat-tool-reminder"

// repeatPreviewChars caps the arguments quoted in the detailed reminder,
// in UTF-16 code units as the reference counts them; the chain always
// compares the whole canonical arguments.
const repeatPreviewChars = 500

// defaultRepeatThresholds are the reference's run lengths that draw a
// reminder.
func defaultRepeatThresholds() []int { return []int{3, 5, 8} }

// gentleReminder is the first threshold's nudge.
const gentleReminder = "You are repeating the exact same tool call with identical arguments. " +
	"Carefully analyze the previous result before calling again: if the task is " +
	"not complete, try a different approach or different arguments instead of " +
	"repeating the call."

// detailedReminder is every later threshold's notice.
func detailedReminder(tool string, count int, args string) string {
	return "Repeated tool call detected:\n" +
		"- tool: " + tool + "\n" +
		"- consecutive_calls: " + strconv.Itoa(count) + "\n" +
		"- arguments: " + args + "\n" +
		"The repeated calls are not making progress. Do not call this tool with " +
		"these exact arguments again. Inspect the latest result and choose a " +
		"different action, different arguments, or finish the task if enough " +
		"evidence has been gathered."
}

// previewArguments cuts canonical arguments longer than repeatPreviewChars,
// saying how much was left out.
func previewArguments(canonical string) string {
	n := jsrules.UTF16Len(canonical)
	if n <= repeatPreviewChars {
		return canonical
	}
	head, units := jsrules.UTF16Prefix(canonical, repeatPreviewChars)
	return fmt.Sprintf("%s… (+%d more chars)", head, n-units)
}

// repeatThresholds validates configured thresholds (nil: the defaults) as
// the reference does, failing loudly: not empty, integers of at least 2,
// no duplicates. They come back sorted.
func repeatThresholds(cfg []int) ([]int, error) {
	if cfg == nil {
		return defaultRepeatThresholds(), nil
	}
	if len(cfg) == 0 {
		return nil, errors.New("agent: RepeatThresholds must not be empty (set DisableRepeatReminders to turn the reminders off)")
	}
	t := slices.Clone(cfg)
	slices.Sort(t)
	for i, v := range t {
		if v < 2 {
			return nil, fmt.Errorf("agent: invalid repeat threshold %d: every threshold must be at least 2", v)
		}
		if i > 0 && t[i-1] == v {
			return nil, fmt.Errorf("agent: repeat threshold %d is given twice", v)
		}
	}
	return t, nil
}

// repeatChain is a session's current run of identical calls, and the
// reminders waiting for the next step.
type repeatChain struct {
	key     string
	count   int
	pending []sessionlog.UserMessage
}

// noteToolCall advances the session's chain with one call the model made
// and queues a reminder when the run reaches a threshold.
func (s *Session) noteToolCall(name, args string) {
	thresholds := s.eng.repeatThresholds
	if len(thresholds) == 0 {
		return
	}
	canonical := canonicalArguments(args)
	key := string(appendJSList(nil, name, canonical))
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.repeat
	if c.key == key {
		c.count++
	} else {
		c.key, c.count = key, 1
	}
	if !slices.Contains(thresholds, c.count) {
		return
	}
	text := gentleReminder
	if c.count != thresholds[0] {
		text = detailedReminder(name, c.count, previewArguments(canonical))
	}
	c.pending = append(c.pending, sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(text)},
		Source:  pluginSource(repeatPlugin, "notice", fmt.Sprintf("%s × %d", name, c.count)),
		ID:      s.eng.newID(),
	})
}

// takeReminders returns the reminders queued for the next step and, at
// the first step of a turn (a user prompt), starts a new chain.
func (s *Session) takeReminders(firstStep bool) []sessionlog.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.repeat.pending
	s.repeat.pending = nil
	if firstStep {
		s.repeat.key, s.repeat.count = "", 0
	}
	return out
}

// pluginSource is {"kind":"plugin","plugin":…,"form":…,"summary":…}.
func pluginSource(plugin, form, summary string) sessionlog.MessageSource {
	str := func(s string) json.RawMessage { return sessionlog.AppendString(nil, s) }
	return sessionlog.MessageSource{Kind: "plugin", Extra: []sessionlog.Member{
		{Key: "plugin", Value: str(plugin)},
		{Key: "form", Value: str(form)},
		{Key: "summary", Value: str(summary)},
	}}
}

// appendJSList appends a JSON array of strings.
func appendJSList(b []byte, items ...string) []byte {
	b = append(b, '[')
	for i, s := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = sessionlog.AppendString(b, s)
	}
	return append(b, ']')
}
