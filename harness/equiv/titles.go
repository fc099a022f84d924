package equiv

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// titleFact is one session/title: who made it, its text, the prompts it
// was made from (as "prompt N": the N-th user/message of source "user" in
// the log, so the two logs' different seqs compare), and where it lies.
type titleFact struct {
	Seq     int
	Kind    string
	Title   string
	Prompts []string
	Place   string
}

// titleRequestFact is one session/title-llm-request: what the title model
// was asked (the system prompt, the messages with their seqs as prompt
// numbers, the output-token cap) and for which prompts. Its route is not
// compared: the reference's recording names a replay route of its own.
type titleRequestFact struct {
	Seq       int
	Prompts   []string
	System    string
	Messages  []string
	MaxTokens int
}

// titleReader collects the title records of one log as extract reads it.
type titleReader struct {
	prompts map[int]string // seq of a human prompt → "prompt N"
}

// prompt names the prompt at seq ("seq N?" when the log has none there).
func (t *titleReader) prompt(seq int) string {
	if p, ok := t.prompts[seq]; ok {
		return p
	}
	return fmt.Sprintf("seq %d (no prompt)", seq)
}

func (t *titleReader) names(seqs []int) []string {
	out := make([]string, len(seqs))
	for i, s := range seqs {
		out[i] = t.prompt(s)
	}
	return out
}

// notePrompt numbers a user/message of source "user".
func (t *titleReader) notePrompt(e *sessionlog.Event, source json.RawMessage) {
	var s struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(source, &s) == nil && s.Kind == sessionlog.SourceUser {
		t.prompts[e.Seq] = fmt.Sprintf("prompt %d", len(t.prompts)+1)
	}
}

// addTitle records a session/title or session/title-llm-request.
func (f *facts) addTitle(t *titleReader, e *sessionlog.Event, place string) error {
	if e.Type == sessionlog.TypeSessionTitle {
		d, err := sessionlog.DecodeData[sessionlog.SessionTitleData](e)
		if err != nil {
			return err
		}
		f.titles = append(f.titles, &titleFact{Seq: e.Seq, Kind: d.Source.Kind, Title: d.Title, Prompts: t.names(d.MessageSeqs), Place: place})
		return nil
	}
	d, err := sessionlog.DecodeData[sessionlog.TitleLLMRequestData](e)
	if err != nil {
		return err
	}
	r := &titleRequestFact{Seq: e.Seq, Prompts: t.names(d.MessageSeqs), System: d.System, MaxTokens: d.MaxTokens}
	for _, m := range d.Messages {
		src, _ := json.Marshal(m.Source)
		var parts []string
		for _, p := range m.Content {
			parts = append(parts, t.framed(p.Text))
		}
		r.Messages = append(r.Messages, fmt.Sprintf("%s: %s", src, strings.Join(parts, "")))
	}
	f.titleRequests = append(f.titleRequests, r)
	return nil
}

// framed rewrites the seqs of a title request's framed prompts ("…:\n[{"seq":4,"text":…}]")
// as prompt numbers; text in another shape is kept as it is.
func (t *titleReader) framed(text string) string {
	head, list, ok := strings.Cut(text, "\n")
	var items []struct {
		Seq  int    `json:"seq"`
		Text string `json:"text"`
	}
	if !ok || json.Unmarshal([]byte(list), &items) != nil {
		return text
	}
	var b strings.Builder
	b.WriteString(head + "\n")
	for _, it := range items {
		fmt.Fprintf(&b, "[%s] %q\n", t.prompt(it.Seq), it.Text)
	}
	return b.String()
}

// checkTitles compares the session titles: the same titles in the same
// order, each with the same source kind, text, prompts and place (the
// turn and step it was written in, or the turn it followed), and the same
// title-model requests (system prompt, messages, output-token cap,
// prompts).
func checkTitles(c *cmp) {
	w, g := c.want.titles, c.got.titles
	render := func(ts []*titleFact) string {
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = t.Kind + " " + strconv.Quote(t.Title)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if len(w) != len(g) {
		c.diff("titles", "", "%s writes %d title(s) %s, %s %d %s", c.r.Want, len(w), render(w), c.r.Got, len(g), render(g))
	}
	for i := 0; i < min(len(w), len(g)); i++ {
		a, b := w[i], g[i]
		where := fmt.Sprintf("title %d (%s)", i+1, c.seqs(a.Seq, b.Seq))
		switch {
		case a.Kind != b.Kind:
			c.diff("titles", where, "source: %s", c.vs(a.Kind, b.Kind))
		case a.Title != b.Title:
			c.diff("titles", where, "%s title: %s", a.Kind, c.vs(strconv.Quote(a.Title), strconv.Quote(b.Title)))
		case !slices.Equal(a.Prompts, b.Prompts):
			c.diff("titles", where, "made from: %s", c.vs(fmt.Sprint(a.Prompts), fmt.Sprint(b.Prompts)))
		case a.Place != b.Place:
			c.diff("titles", where, "place: %s", c.vs(a.Place, b.Place))
		}
	}
	wr, gr := c.want.titleRequests, c.got.titleRequests
	if len(wr) != len(gr) {
		c.diff("titles", "", "%s asks a title model %d time(s), %s %d", c.r.Want, len(wr), c.r.Got, len(gr))
	}
	for i := 0; i < min(len(wr), len(gr)); i++ {
		a, b := wr[i], gr[i]
		where := fmt.Sprintf("title request %d (%s)", i+1, c.seqs(a.Seq, b.Seq))
		switch {
		case a.System != b.System:
			c.diff("titles", where, "system prompt: %s", c.vs(strconv.Quote(clip(a.System, 300)), strconv.Quote(clip(b.System, 300))))
		case !slices.Equal(a.Messages, b.Messages):
			c.diff("titles", where, "messages: %s", c.vs(clip(fmt.Sprintf("%q", a.Messages), 400), clip(fmt.Sprintf("%q", b.Messages), 400)))
		case a.MaxTokens != b.MaxTokens:
			c.diff("titles", where, "maxTokens: %s", c.vs(strconv.Itoa(a.MaxTokens), strconv.Itoa(b.MaxTokens)))
		case !slices.Equal(a.Prompts, b.Prompts):
			c.diff("titles", where, "made from: %s", c.vs(fmt.Sprint(a.Prompts), fmt.Sprint(b.Prompts)))
		}
	}
}
