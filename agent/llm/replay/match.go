package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// ErrRequestMismatch reports a model request that differs from the one the
// recording sent at the same call.
var ErrRequestMismatch = errors.New("replay: request mismatch")

// Match modes: how much of a request is compared (see MatchFields).
const (
	// MatchFull compares the whole request: header reason, system prompt,
	// tool schema set and every message field. For reel's own fixtures.
	MatchFull = "full"
	// MatchMessages compares the header reason and the messages, tool
	// results by their call id and error flag only; the system prompt and
	// tool schemas are not compared. For the reference's recordings, whose
	// prompt, schemas and tool-result presentation are the reference's own.
	MatchMessages = "messages"
	// MatchOff compares nothing (serving by position only).
	MatchOff = "off"
)

// MatchModes lists the accepted match modes.
var MatchModes = []string{MatchFull, MatchMessages, MatchOff}

// MatchFields names every field a request comparison can report, in the
// order a message is compared. docs/scenarios.md lists each (a test keeps
// the two in step).
var MatchFields = []string{
	"purpose", "header reason", "system prompt", "tool schema set", "max tokens",
	"instruction", "message count", "role", "part count", "part type", "text",
	"tool-call id", "tool-call name", "tool-call arguments",
	"tool-result call id", "tool-result isError", "tool-result content",
	"image",
}

// Want is the request a recording sent at one model call, reconstructed
// from its log with sessionlog.ReconstructAll.
type Want struct {
	// Turn and Step locate the call.
	Turn, Step int
	// Reason is the reason of the request/header the step wrote before its
	// call, or "" when it inherited the header in force.
	Reason string
	// Header is the header in force (as logged; pinned fixtures hold
	// {{prompt:NAME}} and {{tools:NAME}} references).
	Header sessionlog.RequestHeader
	// Messages are the derived messages, as logged.
	Messages []json.RawMessage
	// Purpose is the request's llm.Request Purpose: "" for a step's call,
	// llm.PurposeCompaction or llm.PurposeTitle (sidecalls.go).
	Purpose string
	// MaxTokens is the recorded output-token cap (0: not recorded, not
	// compared).
	MaxTokens int
	// Instruction, when non-empty, is the pinned reference of a last user
	// message the recording does not hold (a compaction's summary
	// instruction): it follows Messages.
	Instruction string
}

// Wants reconstructs the request of every step of a recorded log, by
// "turn T step S" (the Where of the step's script entries).
func Wants(h sessionlog.Header, events []sessionlog.Event) (map[string]*Want, error) {
	all, err := sessionlog.ReconstructAll(h, events)
	if err != nil {
		return nil, fmt.Errorf("replay: reconstruct the recorded requests: %w", err)
	}
	reasons := map[string]string{}
	open := ""
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeStepStart:
			d, err := sessionlog.DecodeData[sessionlog.StepData](e)
			if err != nil {
				return nil, err
			}
			open = stepKey(d.Turn, d.Step)
		case sessionlog.TypeStepEnd:
			open = ""
		case sessionlog.TypeRequestHeader:
			if open == "" {
				continue
			}
			if _, seen := reasons[open]; seen {
				continue // the first header of the step is the one its call owed
			}
			d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](e)
			if err != nil {
				return nil, err
			}
			reasons[open] = d.Reason
		case sessionlog.TypeRequestContext, sessionlog.TypeAssistantChunk:
			if open != "" {
				if _, seen := reasons[open]; !seen {
					reasons[open] = ""
				}
			}
		}
	}
	out := make(map[string]*Want, len(all))
	for _, r := range all {
		w := &Want{Turn: r.Turn, Step: r.Step, Reason: reasons[stepKey(r.Turn, r.Step)], Messages: r.Request.Messages}
		if len(r.Request.Header) > 0 {
			if w.Header, err = sessionlog.ParseRequestHeader(r.Request.Header); err != nil {
				return nil, fmt.Errorf("replay: turn %d step %d: %w", r.Turn, r.Step, err)
			}
		}
		out[stepKey(r.Turn, r.Step)] = w
	}
	if err := compactionWants(h, events, out); err != nil {
		return nil, err
	}
	return out, nil
}

func stepKey(turn, step int) string { return fmt.Sprintf("turn %d step %d", turn, step) }

// AttachWants gives every derived entry — steps and compaction summaries —
// the request its recording sent (Wants), by its Where.
func AttachWants(script []Entry, wants map[string]*Want) {
	for i := range script {
		if w, ok := wants[script[i].Where]; ok {
			script[i].Want = w
		}
	}
}

// Matcher compares the requests reel sends with the recorded ones.
//
// Normalization (the one rule applied before comparing): in every string
// reel sends, and in every recorded string (a live log replayed with
// --replay holds the real cwd), the session's cwd becomes {{cwd}}; in a
// recorded string, each
// harness placeholder ({{cwd}}, {{tmp}}…, {{sessionId}}…, {{id:N}},
// {{time}}) matches any non-empty text (the recording was normalized by the
// harness's table, harness/normalize). Message ids and sources are not part
// of what the model sees (llm.ParseMessage) and are not compared.
type Matcher struct {
	// Mode is MatchFull, MatchMessages or MatchOff.
	Mode string
	// Cwd is the session's working directory.
	Cwd string
	// Pins is the folder of pinned prompts and tool lists
	// (prompts/NAME_1.snap.md, tools/NAME_1.snap.json) a fixture's
	// {{prompt:NAME}} and {{tools:NAME}} references name; "" when none.
	Pins string

	// patterns caches the compiled pattern of each recorded string with
	// placeholders: a step compares its whole history, most of it the
	// same recorded strings as the step before.
	patterns sync.Map
	// pins caches the pinned files read (path → content): every call of
	// a session names the same few, and they do not change during a run.
	pins sync.Map
	// compacts caches the compact form of each recorded tool list (the
	// list → its json.Compact, "" when it is not valid JSON): every call
	// compares the same few.
	compacts sync.Map
	// agreed remembers the message pairs (recorded, sent) compared
	// without a difference, by a hash of the pair: a step sends its whole
	// history, the messages the step before sent and one or two more, and
	// a pair that agreed agrees again (the comparison depends on nothing
	// else but Mode and Cwd, which are part of the key).
	agreedMu sync.Mutex
	agreed   map[uint64][]agreedPair
	seed     maphash.Seed
	// exhaustive turns the fast paths off: every message is compared
	// field by field, and tool lists compacted both (the old path, which
	// the differential test compares them with).
	exhaustive bool
}

// agreedPair is a message pair that compared without a difference.
type agreedPair struct {
	mode, cwd string
	want, got []byte
}

// pairHash hashes a message pair with the matcher's mode and cwd.
func (m *Matcher) pairHash(want, got []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(m.Mode)
	h.WriteByte(0)
	h.WriteString(m.Cwd)
	h.WriteByte(0)
	h.Write(want)
	h.WriteByte(0)
	h.Write(got)
	return h.Sum64()
}

// agreedBefore reports whether the pair compared without a difference
// before (under the same mode and cwd).
func (m *Matcher) agreedBefore(want, got []byte) bool {
	m.agreedMu.Lock()
	defer m.agreedMu.Unlock()
	if m.agreed == nil {
		return false
	}
	for _, p := range m.agreed[m.pairHash(want, got)] {
		if p.mode == m.Mode && p.cwd == m.Cwd && bytes.Equal(p.want, want) && bytes.Equal(p.got, got) {
			return true
		}
	}
	return false
}

// agree records that the pair compared without a difference.
func (m *Matcher) agree(want, got []byte) {
	m.agreedMu.Lock()
	defer m.agreedMu.Unlock()
	if m.agreed == nil {
		m.agreed, m.seed = map[uint64][]agreedPair{}, maphash.MakeSeed()
	}
	k := m.pairHash(want, got)
	m.agreed[k] = append(m.agreed[k], agreedPair{m.Mode, m.Cwd, bytes.Clone(want), bytes.Clone(got)})
}

// Diff is one difference between the recorded and the sent request.
type Diff struct {
	// Message is the message index (-1 for the header); under
	// MatchMessages, the index among the compared (conversation) messages.
	Message int
	// Part is the part path inside the message ("" for the message).
	Part string
	// Field is one of MatchFields.
	Field string
	// Want and Got are the recorded and sent values, shortened.
	Want, Got string
}

// MismatchError is a request that differs from the recorded one.
type MismatchError struct {
	// Where is the call ("turn 2 step 1").
	Where string
	// Diffs are the differences, at most maxDiffs.
	Diffs []Diff
}

const maxDiffs = 5

// Error names the call and each difference on a line of its own.
func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s:", ErrRequestMismatch, e.Where)
	for _, d := range e.Diffs {
		b.WriteString("\n  ")
		b.WriteString(e.Where)
		if d.Message >= 0 {
			fmt.Fprintf(&b, " message %d", d.Message)
		}
		if d.Part != "" {
			b.WriteString(" " + d.Part)
		}
		if d.Got == "" {
			fmt.Fprintf(&b, " %s: %s", d.Field, d.Want)
			continue
		}
		fmt.Fprintf(&b, " %s: recorded %s, sent %s", d.Field, d.Want, d.Got)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrRequestMismatch) hold.
func (e *MismatchError) Unwrap() error { return ErrRequestMismatch }

// Check compares req (what reel sends at call where) with w. It returns a
// *MismatchError, nil when they match, and the fields it could not compare
// (a pinned reference it cannot resolve).
func (m *Matcher) Check(where string, w *Want, req llm.Request) (unchecked []string, err error) {
	c := &cmp{m: m}
	if req.Purpose != w.Purpose {
		c.add(-1, "", "purpose", quote(w.Purpose), quote(req.Purpose))
	}
	if req.HeaderReason != w.Reason {
		c.add(-1, "", "header reason", quote(w.Reason), quote(req.HeaderReason))
	}
	if w.MaxTokens != 0 && req.MaxTokens != w.MaxTokens {
		c.add(-1, "", "max tokens", fmt.Sprint(w.MaxTokens), fmt.Sprint(req.MaxTokens))
	}
	if m.Mode == MatchFull {
		unchecked = append(unchecked, c.header(w.Header, req)...)
	}
	want, got := w.Messages, req.Messages
	if w.Instruction != "" {
		// The last message sent is the instruction: compared with its pin
		// under MatchFull, not at all under MatchMessages.
		if len(got) == 0 {
			c.add(0, "", "instruction", "a last user message holding the instruction", "no message")
		} else {
			last := got[len(got)-1]
			got = got[:len(got)-1]
			if m.Mode == MatchFull {
				unchecked = append(unchecked, c.instruction(len(got), w.Instruction, last)...)
			}
		}
	}
	if m.Mode == MatchMessages {
		want, got = conversation(want), conversation(got)
	}
	c.messages(want, got)
	if len(c.diffs) > 0 {
		return unchecked, &MismatchError{Where: where, Diffs: c.diffs}
	}
	return unchecked, nil
}

type cmp struct {
	m     *Matcher
	diffs []Diff
	// found counts the differences found, kept or not (diffs stops at
	// maxDiffs).
	found int
}

func (c *cmp) add(msg int, part, field, want, got string) {
	c.found++
	if len(c.diffs) < maxDiffs {
		c.diffs = append(c.diffs, Diff{Message: msg, Part: part, Field: field, Want: want, Got: got})
	}
}

// norm applies the normalization to a string reel sends or a recorded one.
func (c *cmp) norm(s string) string {
	if c.m.Cwd == "" || len(c.m.Cwd) < 2 {
		return s
	}
	return strings.ReplaceAll(s, c.m.Cwd, "{{cwd}}")
}

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{(?:cwd|tmp\d*|sessionId\d*|id:\d+|time)\}\}`) })

// same reports whether a recorded string matches a sent one.
func (c *cmp) same(want, got string) bool {
	want, got = c.norm(want), c.norm(got)
	if want == got {
		return true
	}
	if !strings.Contains(want, "{{") {
		return false
	}
	if re, ok := c.m.patterns.Load(want); ok {
		return re.(*regexp.Regexp).MatchString(got)
	}
	locs := placeholder().FindAllStringIndex(want, -1)
	if len(locs) == 0 {
		return false
	}
	var pat strings.Builder
	pat.WriteString(`^(?s:`)
	last := 0
	for _, l := range locs {
		pat.WriteString(regexp.QuoteMeta(want[last:l[0]]))
		if want[l[0]:l[1]] == "{{cwd}}" {
			pat.WriteString(`(?:` + regexp.QuoteMeta("{{cwd}}") + `|.+?)`)
		} else {
			pat.WriteString(`.+?`)
		}
		last = l[1]
	}
	pat.WriteString(regexp.QuoteMeta(want[last:]))
	pat.WriteString(`)$`)
	re, err := regexp.Compile(pat.String())
	if err != nil {
		return false
	}
	c.m.patterns.Store(want, re)
	return re.MatchString(got)
}

// header compares the system prompt and the tool schema set.
func (c *cmp) header(h sessionlog.RequestHeader, req llm.Request) (unchecked []string) {
	want, ok, why := c.pinned(h.System)
	switch {
	case !ok:
		unchecked = append(unchecked, "system prompt ("+why+")")
	case !c.same(want, req.System):
		c.add(-1, "", "system prompt", firstDiff(c.norm(want), c.norm(req.System)), "")
	}
	tools := string(h.Tools)
	var ref string
	if json.Unmarshal(h.Tools, &ref) == nil {
		tools = ref
	}
	want, ok, why = c.pinned(tools)
	switch {
	case !ok:
		unchecked = append(unchecked, "tool schema set ("+why+")")
	default:
		if d := toolDiff(want, c.norm(string(req.Tools)), c); d != "" {
			c.add(-1, "", "tool schema set", d, "")
		}
	}
	return unchecked
}

// instruction compares the last message sent (at index i) with the pinned
// instruction ref: one user message of one text part.
func (c *cmp) instruction(i int, ref string, last json.RawMessage) (unchecked []string) {
	text, ok, why := c.pinned(ref)
	if !ok {
		return []string{"instruction (" + why + ")"}
	}
	g, err := llm.ParseMessage(last)
	switch {
	case err != nil || g.Role != "user" || len(g.Content) != 1 || g.Content[0].Type != llm.PartText:
		c.add(i, "", "instruction", short(text), short(string(last)))
	case !c.same(text, g.Content[0].Text):
		c.add(i, "", "instruction", firstDiff(c.norm(text), c.norm(g.Content[0].Text)), "")
	}
	return nil
}

// pinDirs maps a pinned reference's kind to its folder and file extension
// in the pins folder.
var pinDirs = map[string][2]string{
	"prompt":       {"prompts", ".md"},
	"tools":        {"tools", ".json"},
	"instructions": {"instructions", ".md"},
}

// pinned resolves a {{prompt:NAME}}, {{tools:NAME}} or
// {{instructions:NAME}} reference through the pins folder (as
// DIR/NAME_1.snap.EXT); other values are returned as they are.
func (c *cmp) pinned(v string) (string, bool, string) {
	if !strings.HasPrefix(v, "{{") || !strings.HasSuffix(v, "}}") {
		return v, true, ""
	}
	kind, name, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(v, "{{"), "}}"), ":")
	d, known := pinDirs[kind]
	if !ok || !known {
		return "", false, "the recording holds " + v + ", not the content"
	}
	dir, ext := d[0], d[1]
	if c.m.Pins == "" {
		return "", false, v + " and no --replay-pins folder"
	}
	path := filepath.Join(c.m.Pins, dir, name+"_1.snap"+ext)
	if b, ok := c.m.pins.Load(path); ok {
		return b.(string), true, ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, err.Error()
	}
	c.m.pins.Store(path, string(b))
	return string(b), true, ""
}

// toolDiff compares two tool lists: the names added or removed, or the
// first tool whose schema differs; "" when they match.
func toolDiff(want, got string, c *cmp) string {
	type tool struct {
		Name string `json:"name"`
	}
	// The commonest case: what is sent is the recorded list compacted
	// (the log holds compact headers), and then its compaction is too.
	if !c.m.exhaustive && got != "" && c.compact(want) == got {
		return ""
	}
	// The common case, the same list: one compaction of each, no parse.
	var cw, cg bytes.Buffer
	if json.Compact(&cw, []byte(want)) == nil && json.Compact(&cg, []byte(got)) == nil && bytes.Equal(cw.Bytes(), cg.Bytes()) {
		return ""
	}
	var w, g []json.RawMessage
	if json.Unmarshal([]byte(want), &w) != nil || json.Unmarshal([]byte(got), &g) != nil {
		if strings.TrimSpace(want) == strings.TrimSpace(got) {
			return ""
		}
		return fmt.Sprintf("recorded %s, sent %s", short(want), short(got))
	}
	names := func(l []json.RawMessage) []string {
		var out []string
		for _, r := range l {
			var t tool
			_ = json.Unmarshal(r, &t)
			out = append(out, t.Name)
		}
		return out
	}
	wn, gn := names(w), names(g)
	if !slices.Equal(wn, gn) {
		return fmt.Sprintf("recorded tools %v, sent %v", wn, gn)
	}
	for i := range w {
		var a, b bytes.Buffer
		_ = json.Compact(&a, w[i])
		_ = json.Compact(&b, g[i])
		if !c.same(a.String(), b.String()) {
			return fmt.Sprintf("tool %q: schema differs: %s", wn[i], firstDiff(a.String(), c.norm(b.String())))
		}
	}
	return ""
}

// compact returns json.Compact of a recorded tool list, "" when it is
// not valid JSON, computed once per list.
func (c *cmp) compact(want string) string {
	if v, ok := c.m.compacts.Load(want); ok {
		return v.(string)
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(want)) != nil {
		b.Reset()
	}
	c.m.compacts.Store(want, b.String())
	return b.String()
}

// messages compares the message lists field by field. A message sent with
// exactly the recorded bytes is equal in every field (both parse alike,
// and same holds for equal strings), and a pair that agreed at an earlier
// call agrees again: neither is parsed.
func (c *cmp) messages(want, got []json.RawMessage) {
	switch {
	case len(want) > len(got):
		c.add(len(got), "", "message count", fmt.Sprintf("%d messages, message %d %s not sent", len(want), len(got), describe(want[len(got)])), fmt.Sprint(len(got)))
	case len(want) < len(got):
		c.add(len(want), "", "message count", fmt.Sprint(len(want)), fmt.Sprintf("%d messages, message %d %s not recorded", len(got), len(want), describe(got[len(want)])))
	}
	for i := range min(len(want), len(got)) {
		if !c.m.exhaustive && (bytes.Equal(want[i], got[i]) || c.m.agreedBefore(want[i], got[i])) {
			continue
		}
		found := c.found
		c.message(i, want[i], got[i])
		if !c.m.exhaustive && c.found == found {
			c.m.agree(want[i], got[i])
		}
	}
}

// message compares message i of the lists, recorded and sent.
func (c *cmp) message(i int, want, got json.RawMessage) {
	w, errW := llm.ParseMessage(want)
	g, errG := llm.ParseMessage(got)
	if errW != nil || errG != nil {
		if !c.same(string(want), string(got)) {
			c.add(i, "", "text", short(string(want)), short(string(got)))
		}
		return
	}
	if w.Role != g.Role {
		c.add(i, "", "role", w.Role, g.Role)
		return
	}
	c.parts(i, "", w.Content, g.Content)
}

func (c *cmp) parts(msg int, path string, want, got []llm.Part) {
	if len(want) != len(got) {
		c.add(msg, path, "part count", fmt.Sprintf("%d (%s)", len(want), partTypes(want)), fmt.Sprintf("%d (%s)", len(got), partTypes(got)))
		return
	}
	for j := range want {
		w, g := want[j], got[j]
		p := fmt.Sprintf("%spart %d (%s)", path, j, w.Type)
		if w.Type != g.Type {
			c.add(msg, p, "part type", w.Type, g.Type)
			continue
		}
		switch w.Type {
		case llm.PartText, llm.PartReasoning:
			if !c.same(w.Text, g.Text) {
				c.add(msg, p, "text", firstDiff(c.norm(w.Text), c.norm(g.Text)), "")
			}
		case llm.PartToolCall:
			if w.ID != g.ID {
				c.add(msg, p, "tool-call id", quote(w.ID), quote(g.ID))
			}
			if w.Name != g.Name {
				c.add(msg, p, "tool-call name", quote(w.Name), quote(g.Name))
			}
			if !c.same(w.Arguments, g.Arguments) {
				c.add(msg, p, "tool-call arguments", short(w.Arguments), short(g.Arguments))
			}
		case llm.PartToolResult:
			if w.ToolCallID != g.ToolCallID {
				c.add(msg, p, "tool-result call id", quote(w.ToolCallID), quote(g.ToolCallID))
			}
			if w.IsError != g.IsError {
				c.add(msg, p, "tool-result isError", fmt.Sprint(w.IsError), fmt.Sprint(g.IsError))
			}
			if c.m.Mode == MatchFull {
				c.parts(msg, p+" content ", w.Content, g.Content)
			}
		case llm.PartImage:
			if !c.same(string(w.Raw), string(g.Raw)) {
				c.add(msg, p, "image", short(string(w.Raw)), short(string(g.Raw)))
			}
		default:
			if !c.same(string(w.Raw), string(g.Raw)) {
				c.add(msg, p, "text", short(string(w.Raw)), short(string(g.Raw)))
			}
		}
	}
}

func partTypes(ps []llm.Part) string {
	t := make([]string, len(ps))
	for i, p := range ps {
		t[i] = p.Type
	}
	return strings.Join(t, ",")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// short quotes s, cut to 120 bytes.
func short(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q…(%d bytes)", s[:120], len(s))
	}
	return quote(s)
}

// firstDiff describes where two texts part: the byte offset in the
// recorded text and a window of each around it. A recorded text with
// placeholders is first aligned with the sent one as far as it matches
// (each placeholder standing for the text it matched, as in same), so the
// offset is where the texts really part, not the first placeholder.
func firstDiff(want, got string) string {
	wi, gi := alignPlaceholders(want, got)
	for wi < len(want) && gi < len(got) && want[wi] == got[gi] {
		wi++
		gi++
	}
	win := func(s string, i int) string {
		lo, hi := max(0, i-30), min(len(s), i+50)
		if lo > len(s) {
			return `""`
		}
		return quote(s[lo:hi])
	}
	return fmt.Sprintf("differ at byte %d (recorded %d bytes, sent %d): recorded …%s…, sent …%s…", wi, len(want), len(got), win(want, wi), win(got, gi))
}

// alignPlaceholders returns the offsets in want and got up to which want's
// longest matching prefix of whole segments (literal text, then each
// placeholder with the literal after it) matches got: the last placeholder
// that matched is where both texts are known to agree.
func alignPlaceholders(want, got string) (wi, gi int) {
	locs := placeholder().FindAllStringIndex(want, -1)
	if len(locs) == 0 || !strings.HasPrefix(got, want[:locs[0][0]]) {
		return 0, 0
	}
	// Grow the pattern one placeholder (and its following literal) at a
	// time; the last pattern that still matches got's prefix gives the
	// alignment. Only a failed comparison pays for this.
	var pat strings.Builder
	pat.WriteString(`^(?s:` + regexp.QuoteMeta(want[:locs[0][0]]))
	wi, gi = locs[0][0], locs[0][0]
	// match returns the end in got of the pattern so far followed by the
	// placeholder and lit, or -1.
	match := func(ph, lit string) int {
		p := pat.String()
		if ph == "{{cwd}}" {
			p += `(?:` + regexp.QuoteMeta("{{cwd}}") + `|.+?)`
		} else {
			p += `.+?`
		}
		re, err := regexp.Compile(p + regexp.QuoteMeta(lit) + `)`)
		if err != nil {
			return -1
		}
		if m := re.FindStringIndex(got); m != nil {
			return m[1]
		}
		return -1
	}
	for k, l := range locs {
		end := len(want)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		ph, lit := want[l[0]:l[1]], want[l[1]:end]
		if e := match(ph, lit); e >= 0 {
			wi, gi = end, e
			if ph == "{{cwd}}" {
				pat.WriteString(`(?:` + regexp.QuoteMeta("{{cwd}}") + `|.+?)`)
			} else {
				pat.WriteString(`.+?`)
			}
			pat.WriteString(regexp.QuoteMeta(lit))
			continue
		}
		// The texts part inside lit: the longest prefix of lit (cut between
		// characters, or the pattern would not compile) that still matches;
		// a prefix that matches makes every shorter one match.
		var cuts []int
		for c := range lit {
			cuts = append(cuts, c)
		}
		lo, hi, at := 0, len(cuts)-1, -1
		for lo <= hi {
			mid := (lo + hi) / 2
			if e := match(ph, lit[:cuts[mid]]); e >= 0 {
				at, lo = e, mid+1
				wi = l[1] + cuts[mid]
			} else {
				hi = mid - 1
			}
		}
		if at >= 0 {
			gi = at
		} else {
			wi = l[0]
		}
		return wi, gi
	}
	return wi, gi
}

// describe names a message by its role and part types.
func describe(raw json.RawMessage) string {
	m, err := llm.ParseMessage(raw)
	if err != nil {
		return short(string(raw))
	}
	return fmt.Sprintf("(%s: %s)", m.Role, partTypes(m.Content))
}

// ConversationSources are the message source kinds MatchMessages compares:
// what the user typed, what the model answered and the tool results. The
// other messages (runtime context, instructions, reminders, catalogs,
// notices) are each implementation's own injections; the harness compares
// them from the logs under its message rules (harness/equiv/messages.go).
var ConversationSources = []string{"user", "model", "tool"}

// conversation keeps the messages MatchMessages compares.
func conversation(msgs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(msgs))
	for _, raw := range msgs {
		var m struct {
			Source struct {
				Kind string `json:"kind"`
			} `json:"source"`
		}
		if json.Unmarshal(raw, &m) == nil && (m.Source.Kind == "" || slices.Contains(ConversationSources, m.Source.Kind)) {
			out = append(out, raw)
		}
	}
	return out
}
