package agent

import (
	"bytes"
	"context"
	"strings"

	"github.com/reel-agent/reel/agent/skills"
	"github.com/reel-agent/reel/sessionlog"
)

// Skills (agent/skills) reach the model three ways, as in the reference:
//
//   - the catalog: a <system-reminder> user/message listing the skills the
//     model may load, entered after a step's other context messages when
//     the session's skills differ from the newest catalog still on the
//     surface (the first one of a session in its first form, later ones —
//     or one after compaction hid every catalog — as a replacement);
//   - the skill tool, which loads one by name;
//   - a prompt naming a user-invocable skill as a /name word: the skill's
//     instructions enter after the step's other messages.

// skillNeed names one moment the session's skills are read for: the start
// of a turn (its notices, the skills its prompt invokes and its first
// step's catalog, a few statements apart) or a later step of it. The
// skill directories are scanned once per need, so a skill added, changed
// or removed while the session runs is seen at the next turn or step, as
// the catalog's rule wants (agent/skills: "at every later step it
// compares …"), and no need pays for a scan twice.
type skillNeed struct{ turn, step int }

// skillScan is the last scan of the session's skills and the need it
// served (valid false: none yet, or one that served no need).
type skillScan struct {
	valid    bool
	need     skillNeed
	catalog  *skills.Catalog
	problems []skills.Problem
	// scans counts the session's scans (for its tests).
	scans int
}

// discoverSkills is the catalog of the session's skills now, and the
// SKILL.md files it could not use (logged at each scan). A call for the
// need the last scan served gets that scan again.
func (s *Session) discoverSkills(ctx context.Context, need skillNeed) (*skills.Catalog, []skills.Problem) {
	s.mu.Lock()
	if sc := s.skillSet; sc.valid && sc.need == need {
		s.mu.Unlock()
		return sc.catalog, sc.problems
	}
	s.skillSet.scans++
	s.mu.Unlock()
	c, problems := skills.Discover(ctx, s.cwd, s.eng.cfg.Skills)
	for _, p := range problems {
		s.eng.log.Warn("skill skipped", "session", s.id, "problem", p.String())
	}
	if c.Complete() && need.turn > 0 {
		// An incomplete scan (a cancelled context, a root that could not
		// be read) is not kept: the next caller of the need scans again;
		// nor is one outside a turn (SessionCommands).
		s.mu.Lock()
		s.skillSet = skillScan{valid: true, need: need, catalog: c, problems: problems, scans: s.skillSet.scans}
		s.mu.Unlock()
	}
	return c, problems
}

// skillProblems are the session's SKILL.md files that cannot be used, as
// lines for its user ("" when skills are off), at the start of turn.
func (s *Session) skillProblems(ctx context.Context, turn int) []string {
	if s.eng.cfg.DisableSkills {
		return nil
	}
	_, problems := s.discoverSkills(ctx, skillNeed{turn: turn, step: 1})
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		out = append(out, "skill skipped: "+p.String())
	}
	return out
}

// skillCatalog is the catalog message the step owes, nil when the
// surface shows the session's skills already (or there are none to show).
func (s *Session) skillCatalog(ctx context.Context, need skillNeed) *sessionlog.UserMessage {
	if s.eng.cfg.DisableSkills {
		return nil
	}
	c, _ := s.discoverSkills(ctx, need)
	if !c.Complete() {
		return nil // a root could not be read: say nothing rather than something wrong
	}
	visible, ever := s.catalogDigest()
	switch {
	case visible != "" && visible == c.Digest():
		return nil
	case visible == "" && len(c.Entries()) == 0:
		return nil
	}
	text, update := c.Update(), true
	if visible == "" && !ever {
		var ok bool
		if text, ok = c.Message(); !ok {
			return nil
		}
		update = false
	}
	return &sessionlog.UserMessage{
		Content: []sessionlog.ContentPart{sessionlog.TextPart(text)},
		Source:  c.Source(update),
		ID:      s.eng.newID(),
	}
}

// catalogState caches what catalogDigest found: the log's events up to
// scanned were read, under surface generation gen; seq and digest are the
// newest catalog's (seq -1: none), ever whether the log held one.
type catalogState struct {
	valid        bool
	gen, scanned int
	seq          int
	digest       string
	ever         bool
}

// catalogMarker is in the data of every skill catalog message.
var catalogMarker = []byte(`"kind":"` + skills.CatalogKind + `"`)

// catalogDigest is the digest of the newest skill catalog on the surface
// ("" for none) and whether the log ever held one. It reads each event
// once: only what was appended since the last call, unless the surface
// was rewritten (compaction), which makes it read the whole log again;
// and it parses only messages that may be catalogs.
func (s *Session) catalogDigest() (visible string, ever bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lg := s.log.Log()
	c := &s.catalog
	if !c.valid || c.gen != lg.Surface().Gen() {
		*c = catalogState{valid: true, gen: lg.Surface().Gen(), seq: -1, ever: c.ever}
	}
	evs := lg.Events()
	for i := c.scanned; i < len(evs); i++ {
		e := &evs[i]
		if e.Type != sessionlog.TypeUserMessage || !bytes.Contains(e.Data, catalogMarker) {
			continue
		}
		m, err := sessionlog.ParseMessage(e.Data)
		if err != nil {
			continue
		}
		var src sessionlog.MessageSource
		if src.UnmarshalJSON(m.Source) != nil {
			continue
		}
		if d, ok := skills.SourceDigest(src); ok {
			c.seq, c.digest, c.ever = e.Seq, d, true
		}
	}
	c.scanned = len(evs)
	if c.seq < 0 || lg.Surface().Index(c.seq) < 0 {
		// The newest catalog is not on the surface (compaction hid it):
		// the next one is a replacement.
		return "", c.ever
	}
	return c.digest, c.ever
}

// invokedSkills are the messages of the user-invocable skills a prompt
// of turn names as /name words, in order; names of no such skill stay
// text.
func (s *Session) invokedSkills(ctx context.Context, turn int, prompt []Content) []sessionlog.UserMessage {
	if s.eng.cfg.DisableSkills {
		return nil
	}
	var text strings.Builder
	for _, c := range prompt {
		text.WriteString(c.Text)
		text.WriteString("\n")
	}
	names := skills.InvokedNames(text.String())
	if len(names) == 0 {
		return nil
	}
	c, _ := s.discoverSkills(ctx, skillNeed{turn: turn, step: 1})
	var out []sessionlog.UserMessage
	for _, n := range names {
		body, err := c.Load(n)
		if err != nil {
			continue
		}
		out = append(out, sessionlog.UserMessage{
			Content: []sessionlog.ContentPart{sessionlog.TextPart(body)},
			Source:  skills.InvocationSource(n),
			ID:      s.eng.newID(),
		})
	}
	return out
}

// SessionCommands lists the slash commands of session s: the engine's
// own and one per user-invocable skill of its working directory, read
// now (a need of its own: the session's next turn reads them again).
func (e *Engine) SessionCommands(ctx context.Context, s *Session) []Command {
	cmds := append(Commands(), e.checkpointCommands()...)
	if e.cfg.DisableSkills || s == nil {
		return cmds
	}
	c, _ := s.discoverSkills(ctx, skillNeed{})
	for _, sk := range c.UserVisible() {
		cmds = append(cmds, Command{Name: sk.Name, Description: sk.Description})
	}
	return cmds
}
