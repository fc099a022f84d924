package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// Session titles, made as the reference (dsh) makes them, so its
// recordings and reel's logs agree:
//
//   - The fallback: in the first step that has a human prompt with text
//     (a user/message of source "user" whose text parts, joined by "\n",
//     are not empty once cleaned), a session without a title gets the
//     first 5 words of that prompt, cut to 40 bytes of UTF-8 without
//     splitting a character: session/title with source "fallback", written
//     after the step's messages and before its request.
//   - The model's title: when that prompt is the session's first eligible
//     one, the session's own model is asked for a title once the turn has
//     ended (off the turn's critical path): session/title-llm-request
//     records the exact request first (the system prompt below, the prompt
//     framed as JSON, at most 32 output tokens), then an accepted answer
//     becomes session/title with source "provider". A failure (an error, a
//     timeout after 5 s, output cut at the token cap, a tool call, no text)
//     keeps the fallback and is only logged; it is never retried.
//   - Cleaning (both): escape sequences (OSC, CSI, two-byte ESC), control
//     characters and invisible or direction-changing characters are
//     removed, whitespace runs become one space, and the ends are trimmed;
//     an accepted title is at most 80 bytes.
//
// The engine reports every accepted title to the prompt's client
// (Updates.Title); a loaded session's client gets the stored one.
const (
	titleFallbackWords = 5
	titleFallbackBytes = 40
	titleMaxBytes      = 80
	titleTargetWords   = 5
	titleTargetCJK     = 10
	titleMaxInputBytes = 4096
	titleMaxTokens     = 32
	titleTimeout       = 5 * time.Second
	// titleMaxAnswerBytes bounds the text a title model may stream; a
	// longer answer fails the title (the reference would read on until
	// its timeout).
	titleMaxAnswerBytes = 64 << 10
	// titleGrace is how long the next prompt, or shutdown, waits for a
	// title call still running before cancelling it.
	titleGrace = 2 * time.Second
	// titleProviderID and titlePlugin are the names the reference records
	// for its first-prompt title model.
	titleProviderID = "session-title-first-prompt-llm"
	titlePlugin     = "dsh-session-title-llm"
)

// titleSystem is the title model's system prompt (the reference's words).
var titleSystem = strings.Join([]string{
	"Create a concise title for an AI coding-assistant session from the supplied human messages.",
	"Return only the title on one line, **in plain text of natural language**, with no quotes, prefix, explanation, Markdown, XML, or terminal control codes. No code is allowed.",
	"Use the language of the messages.",
	fmt.Sprintf("Aim for about %d words in non-CJK languages or %d CJK characters.", titleTargetWords, titleTargetCJK),
}, "\n")

// Title is a session's current title.
type Title struct {
	// Text is the title: one line, no control characters, at most 80
	// bytes.
	Text string
	// Source is sessionlog.TitleFallback or sessionlog.TitleProvider.
	Source string
	// At is when the title was accepted.
	At time.Time
	// Late is set for a title made after its turn ended: a client
	// shows it after that turn's prompt was answered.
	Late bool
}

// titleDirectional matches the invisible and direction-changing characters
// a title loses (compiled on first use, not at init of every reel process).
var titleDirectional = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[\x{200b}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2060}-\x{2064}\x{2066}-\x{206f}\x{feff}]`)
})

// titleRules are the cleaning rules, in the order they apply: OSC, CSI and
// other escape sequences, controls, directional characters. Compiled on
// first use, not at init of every reel process.
var titleRules = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?:\x1b\]|\x{9d})(?s:.)*?(?:\x07|\x1b\\|$)`),
		regexp.MustCompile(`(?:\x1b\[|\x{9b})[0-?]*[ -/]*[@-~]`),
		regexp.MustCompile(`\x1b[@-_]`),
		regexp.MustCompile(`[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x{9f}]`),
		titleDirectional(),
	}
})

// cleanTitle removes escape sequences and controls and makes s one trimmed
// line with single spaces.
func cleanTitle(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for _, re := range titleRules() {
		s = re.ReplaceAllString(s, "")
	}
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// cutUTF8 returns the longest prefix of s of whole characters within max
// bytes.
func cutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := 0
	for n < len(s) {
		_, size := utf8.DecodeRuneInString(s[n:])
		if n+size > max {
			break
		}
		n += size
	}
	return s[:n]
}

// normalizeTitle is an accepted title: cleaned, at most max bytes.
func normalizeTitle(s string, max int) string {
	return strings.TrimRightFunc(cutUTF8(cleanTitle(s), max), unicode.IsSpace)
}

// fallbackTitle is the first words of a prompt as a title.
func fallbackTitle(text string) string {
	words := strings.Fields(cleanTitle(text))
	words = words[:min(len(words), titleFallbackWords)]
	return strings.TrimRightFunc(cutUTF8(strings.Join(words, " "), titleFallbackBytes), unicode.IsSpace)
}

// titleMessage is a human prompt a title may be made from.
type titleMessage struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// titleInput is the user message of a title request: the prompts framed
// as a JSON array (as JSON.stringify writes it), so their text cannot
// break out of the framing.
func titleInput(msgs []titleMessage) string {
	b := []byte("Generate the session title from this JSON array of human messages:\n[")
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, int64(m.Seq), 10)
		b = append(b, `,"text":`...)
		b = sessionlog.AppendString(b, m.Text)
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

// titleState is a session's title work in this process.
type titleState struct {
	mu sync.Mutex
	// known is set once the log holds a title (no fallback is owed).
	known bool
	// cancel and done belong to the title call in flight (nil when none).
	cancel context.CancelFunc
	done   chan struct{}
}

// eligibleLocked lists the human prompts with text on the log and reports
// promptText is the text a title is made from: a user message's text
// parts, one per line.
func promptText(m sessionlog.UserMessage) string {
	var parts []string
	for _, p := range m.Content {
		if p.Type == sessionlog.PartText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// whether it holds a title. s.mu is held.
func (s *Session) eligibleLocked() (msgs []titleMessage, titled bool) {
	evs := s.log.Log().Events()
	for i := range evs {
		e := &evs[i]
		switch e.Type {
		case sessionlog.TypeSessionTitle:
			titled = true
		case sessionlog.TypeUserMessage:
			m, err := sessionlog.DecodeData[sessionlog.UserMessage](e)
			if err != nil || m.Source.Kind != sessionlog.SourceUser {
				continue
			}
			text := promptText(m)
			if cleanTitle(text) != "" {
				msgs = append(msgs, titleMessage{Seq: e.Seq, Text: text})
			}
		}
	}
	return msgs, titled
}

// titleFallback gives a session without a title its fallback title, after
// the step's messages are on the log; when the prompt is the session's
// first, the model is to be asked once the turn ends (r.titleFrom). It
// returns the update that shows the title, for the caller to send once
// the log holding it is durable (nil: nothing to show).
func (r *run) titleFallback(ctx context.Context) (show func()) {
	s := r.s
	if breakTitles() {
		return nil
	}
	s.title.mu.Lock()
	known := s.title.known
	s.title.mu.Unlock()
	if known {
		return nil
	}
	s.mu.Lock()
	msgs, titled := s.eligibleLocked()
	if titled || len(msgs) == 0 {
		s.mu.Unlock()
		if titled {
			s.title.mu.Lock()
			s.title.known = true
			s.title.mu.Unlock()
		}
		return nil
	}
	first := msgs[0]
	text := fallbackTitle(first.Text)
	now := r.e.now()
	_, err := s.emitLocked(ctx, now, sessionlog.TypeSessionTitle, sessionlog.SessionTitleData{
		Title: text, MessageSeqs: []int{first.Seq}, Source: sessionlog.TitleSource{Kind: sessionlog.TitleFallback},
	}, nil, nil)
	s.mu.Unlock()
	if err != nil {
		// The step's own writes report a broken log; a title is not
		// worth failing the turn for.
		r.e.log.Warn("cannot write the fallback title", "session", s.id, "err", err)
		return nil
	}
	s.title.mu.Lock()
	s.title.known = true
	s.title.mu.Unlock()
	if len(msgs) == 1 && !r.e.cfg.DisableTitleModel && !r.s.child {
		r.titleFrom = &first
	}
	return func() {
		r.c.Updates.Title(ctx, Title{Text: text, Source: sessionlog.TitleFallback, At: time.UnixMilli(now)})
	}
}

// titleRequest logs the request of the title model call the turn owes,
// if any, after its turn/end and before the sync that makes both durable
// (finish): the request is on the log, durable, before the call is
// dispatched and before the prompt answers. It sets r.titleCall, which
// afterTurn starts once that sync succeeded.
func (r *run) titleRequest(ctx context.Context) {
	if r.titleFrom == nil {
		return
	}
	s := r.s
	msgs := []titleMessage{*r.titleFrom}
	input := titleInput(msgs)
	if len(input) > titleMaxInputBytes {
		r.e.log.Warn("the first prompt is too long to ask the model for a title; keeping the fallback title",
			"session", s.id, "bytes", len(input), "max", titleMaxInputBytes)
		return
	}
	route := s.titleRoute(r.e)
	plugin, _ := json.Marshal(titlePlugin)
	msg := sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(input)},
		Source:  sessionlog.MessageSource{Kind: "plugin", Extra: []sessionlog.Member{{Key: "plugin", Value: plugin}}},
		ID:      r.e.newID(),
	}
	if _, err := s.emit(ctx, r.e.now(), sessionlog.TypeTitleLLMRequest, sessionlog.TitleLLMRequestData{
		TitleProvider: titleProviderID, MessageSeqs: []int{msgs[0].Seq}, Route: route,
		System: titleSystem, Messages: []sessionlog.UserMessage{msg}, MaxTokens: titleMaxTokens,
	}, nil, nil); err != nil {
		r.e.log.Warn("cannot write the title request; no title is asked for", "session", s.id, "err", err)
		return
	}
	r.titleCall = func() {
		// The call belongs to the session, not to the prompt: it outlives
		// the prompt's context and ends when the session closes.
		tctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		s.title.mu.Lock()
		s.title.cancel, s.title.done = stop, done
		s.title.mu.Unlock()
		up := r.c.Updates
		go func() {
			defer close(done)
			defer stop()
			s.titleCall(tctx, up, route, msg, msgs)
		}()
	}
}

// afterTurn starts the title model call the turn owes, if any (its
// request was made durable with the turn's end, see titleRequest); its
// answer arrives later (Updates.Title).
func (r *run) afterTurn() {
	if r.titleCall != nil {
		r.titleCall()
	}
}

// titleRoute is the model the session's latest request went to.
func (s *Session) titleRoute(e *Engine) sessionlog.TitleRoute {
	route := sessionlog.TitleRoute{Provider: e.cfg.Provider, Model: e.cfg.Model}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, _, _, ok := s.log.Log().LatestHeader(); ok {
		var cfg struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
		}
		if json.Unmarshal(h.Config, &cfg) == nil && cfg.Provider != "" && cfg.Model != "" {
			route = sessionlog.TitleRoute{Provider: cfg.Provider, Model: cfg.Model}
		}
	}
	return route
}

// titleCall asks the model for a title and, when its answer is accepted,
// logs it and tells the client.
func (s *Session) titleCall(ctx context.Context, up Updates, route sessionlog.TitleRoute, msg sessionlog.UserMessage, msgs []titleMessage) {
	text, err := s.askTitle(ctx, route, msg)
	if err == nil {
		if text = normalizeTitle(text, titleMaxBytes); text == "" {
			err = errors.New("the title model's answer is empty once cleaned")
		}
	}
	if err != nil {
		s.eng.log.Warn("no title from the model; keeping the fallback title", "session", s.id, "err", err)
		return
	}
	seqs := make([]int, len(msgs))
	for i, m := range msgs {
		seqs[i] = m.Seq
	}
	now := s.eng.now()
	if _, err := s.emit(ctx, now, sessionlog.TypeSessionTitle, sessionlog.SessionTitleData{
		Title: text, MessageSeqs: seqs,
		Source: sessionlog.TitleSource{Kind: sessionlog.TitleProvider, Provider: titleProviderID, Model: &route},
	}, nil, nil); err != nil {
		s.eng.log.Warn("cannot write the model's title", "session", s.id, "err", err)
		return
	}
	if err := s.checkpoint(ctx); err != nil {
		s.eng.log.Warn("cannot make the model's title durable", "session", s.id, "err", err)
	}
	up.Title(ctx, Title{Text: text, Source: sessionlog.TitleProvider, At: time.UnixMilli(now), Late: true})
}

// askTitle streams the title call and returns the text of its answer: its
// text blocks joined by spaces. The call fails when it does not finish
// with "stop" within titleTimeout, streams more than titleMaxAnswerBytes,
// calls a tool, or has no text.
func (s *Session) askTitle(ctx context.Context, route sessionlog.TitleRoute, msg sessionlog.UserMessage) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	st, err := s.provider.Stream(ctx, llm.Request{
		Provider: route.Provider, Model: route.Model, System: titleSystem,
		Messages: []json.RawMessage{msg.AppendJSON(nil)}, MaxTokens: titleMaxTokens, Purpose: llm.PurposeTitle,
	})
	if err != nil {
		return "", err
	}
	defer st.Close()
	var asm llm.Assembler
	streamed := 0
	for {
		c, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		streamed += len(c.Text) + len(c.ArgumentsDelta)
		if c.Block != nil {
			// A finished block repeats its deltas: it is bounded alone.
			streamed = max(streamed, len(c.Block.Text)+len(c.Block.Arguments))
		}
		if streamed > titleMaxAnswerBytes {
			return "", fmt.Errorf("the title model streamed more than %d bytes", titleMaxAnswerBytes)
		}
		if _, err := asm.Add(c); err != nil {
			return "", err
		}
	}
	fin, err := asm.Finish()
	if err != nil {
		return "", err
	}
	switch fin.Kind {
	case llm.FinishStop:
	case llm.FinishMaxTokens:
		return "", errors.New("the title reached the output-token cap")
	case llm.FinishToolCalls:
		return "", errors.New("the title model asked for a tool")
	default:
		return "", fmt.Errorf("the title call finished %q", fin.Kind)
	}
	var texts []string
	for _, b := range asm.Blocks() {
		switch b.Type {
		case llm.BlockToolCall:
			return "", errors.New("the title model's answer holds a tool call")
		case llm.BlockText:
			texts = append(texts, b.Text)
		}
	}
	text := strings.Join(texts, " ")
	if cleanTitle(text) == "" {
		return "", errors.New("the title model answered no text")
	}
	return text, nil
}

// settleTitle waits for the session's title call in flight, at most until
// deadline, then cancels it and waits for it to end (it ends promptly: the
// call honours its context).
func (s *Session) settleTitle(deadline time.Time) {
	s.title.mu.Lock()
	cancel, done := s.title.cancel, s.title.done
	s.title.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.eng.log.Warn("the title model did not answer in time; keeping the fallback title", "session", s.id)
		cancel()
		<-done
	}
	s.title.mu.Lock()
	if s.title.done == done {
		s.title.cancel, s.title.done = nil, nil
	}
	s.title.mu.Unlock()
}

// stopTitle cancels the session's title call in flight without waiting.
func (s *Session) stopTitle() {
	s.title.mu.Lock()
	cancel := s.title.cancel
	s.title.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// settleTitles lets every session's title call finish, together, for at
// most titleGrace (graceful shutdown).
func settleTitles(sessions []*Session) {
	deadline := time.Now().Add(titleGrace)
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { s.settleTitle(deadline) })
	}
	wg.Wait()
}

// Title returns the session's current title: the latest session/title of
// its log (false when it has none).
func (s *Session) Title() (Title, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return latestTitle(s.log.Log().Events())
}

// latestTitle is the latest session/title of events.
func latestTitle(evs []sessionlog.Event) (Title, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != sessionlog.TypeSessionTitle {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.SessionTitleData](&evs[i])
		if err != nil || d.Title == "" {
			continue
		}
		return Title{Text: d.Title, Source: d.Source.Kind, At: time.UnixMilli(evs[i].Time).UTC()}, true
	}
	return Title{}, false
}

// storedTitle is the title of session id: from the live session, else
// from its stored log.
func (e *Engine) storedTitle(ctx context.Context, id string) (Title, bool) {
	e.mu.Lock()
	s, live := e.sessions[id]
	e.mu.Unlock()
	if live {
		return s.Title()
	}
	l, err := e.cfg.Store.Inspect(ctx, id)
	if err != nil {
		e.log.Debug("no title for a listed session", "session", id, "err", err)
		return Title{}, false
	}
	return latestTitle(l.Log.Events())
}
