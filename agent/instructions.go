package agent

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Instruction files (AGENTS.md, CLAUDE.md and their .local overlays), the
// reference agent's agent-instructions, in its exact rules:
//
// Discovery. The project root is the nearest directory, from the session
// cwd up to the file system root, holding a root marker (".git"); without
// one it is the cwd itself. The files are the user-global
// $REEL_HOME/AGENTS.md (default ~/.reel/AGENTS.md, shown under that
// name), then, in each directory from the project root down to the cwd,
// every existing candidate (AGENTS.md, CLAUDE.md) and then every existing
// local overlay (AGENTS.local.md, CLAUDE.local.md). A candidate is a
// regular file reached by following symbolic links; a missing one, or one
// leading to anything else, is absent. In one directory, a file whose
// content equals an earlier one's once trimmed of surrounding white space
// is dropped (so a CLAUDE.md mirroring AGENTS.md shows once).
//
// Bounds. A file is read only if it is at most 1 MiB (MaxSourceBytes), by
// its size and by what reading it yields, with tools.ReadRegularFile: never
// a FIFO or device, never a file of procfs or sysfs (a link to
// /proc/self/environ reads as absent). One injected message is at most
// 64 KiB (MaxBytes): the broadest files are left out first, then the most
// specific one is cut, and a "Workspace instruction budget N bytes:
// omitted …; truncated … from A to B bytes" notice says so.
//
// Injection. At the first step of a session in this process, the files
// become one durable user/message right after the step's entered messages
// (the prompt): "<system-reminder>\nThe following workspace instructions
// … Instructions from: PATH\n\nCONTENT …\n</system-reminder>", with the
// source {"kind":"agent-instructions","form":"instructions",
// "baseline":true,"baselineIdentity":…,"changes":[{"action":"set",
// "scope":"DIR\u0000NAME","path":…,"digest":SHA-1}…]}. Later steps
// compare the files with the instructions visible on the surface and
// inject only what changed: a file that appeared in a directory between
// the cwd and a file that a successful read, write or edit touched
// ("Additional instructions from: …"), a loaded file whose content changed
// ("Updated instructions from: …"), one that went away ("Instructions
// removed: …"). When compaction took the baseline off the surface, the
// next step injects it again. A loaded session keeps a visible baseline
// of the same identity (root, markers, budgets, candidates) and injects
// only what changed while it was closed; one of another identity is
// superseded by a complete new baseline. Repository text cannot close the
// frame: "</system-reminder>" in a file or path is written
// "<\/system-reminder>".

// Instruction defaults, the reference's.
const (
	defaultInstrMaxBytes       = 65536
	defaultInstrMaxSourceBytes = 1 << 20
	userGlobalDir              = "user-global"
	userGlobalFile             = "AGENTS.md"
	instrSourceKind            = "agent-instructions"
	scopeSep                   = "\x00"
	actionSet                  = "set"
	actionReplace              = "replace"
	actionRemove               = "remove"
)

// InstructionConfig configures the discovery of instruction files. Its
// zero value is discovery on, with the reference agent's defaults.
type InstructionConfig struct {
	// Disabled turns instruction files off.
	Disabled bool
	// Home is the directory of the user-global AGENTS.md; empty means
	// $REEL_HOME, else ~/.reel.
	Home string
	// RootMarkers are the names whose presence marks the project root
	// (nil: ".git").
	RootMarkers []string
	// Candidates are the instruction file names tried in each directory,
	// in order (nil: AGENTS.md, CLAUDE.md); LocalCandidates the overlays
	// read after them (nil: AGENTS.local.md, CLAUDE.local.md; empty: none).
	// Names that are not plain file names are ignored.
	Candidates, LocalCandidates []string
	// MaxBytes caps one injected message (0: 65536); MaxSourceBytes caps
	// one file, which is skipped when longer (0: 1 MiB).
	MaxBytes, MaxSourceBytes int
}

// instrConfig is a resolved InstructionConfig.
type instrConfig struct {
	home, homeDisplay          string
	markers, candidates, local []string
	maxBytes, maxSource        int
}

// resolveInstructions applies the defaults; nil when discovery is off.
func resolveInstructions(c InstructionConfig) *instrConfig {
	if c.Disabled {
		return nil
	}
	r := &instrConfig{markers: c.RootMarkers, maxBytes: c.MaxBytes, maxSource: c.MaxSourceBytes}
	if r.markers == nil {
		r.markers = []string{".git"}
	}
	r.candidates = fileNames(c.Candidates, []string{"AGENTS.md", "CLAUDE.md"})
	r.local = fileNames(c.LocalCandidates, []string{"AGENTS.local.md", "CLAUDE.local.md"})
	if r.maxBytes <= 0 {
		r.maxBytes = defaultInstrMaxBytes
	}
	if r.maxSource <= 0 {
		r.maxSource = defaultInstrMaxSourceBytes
	}
	userHome, _ := os.UserHomeDir()
	defaultHome := filepath.Join(userHome, ".reel")
	r.home = c.Home
	if r.home == "" {
		if env := strings.TrimSpace(os.Getenv("REEL_HOME")); env != "" {
			r.home = os.Getenv("REEL_HOME")
		} else {
			r.home = defaultHome
		}
	}
	if abs, err := filepath.Abs(r.home); err == nil {
		r.home = abs
	}
	r.homeDisplay = "$REEL_HOME"
	if userHome != "" && r.home == defaultHome {
		r.homeDisplay = "~/.reel"
	}
	return r
}

// fileNames keeps the plain file names of names (nil: def).
func fileNames(names, def []string) []string {
	if names == nil {
		names = def
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && n != "." && n != ".." && !strings.ContainsAny(n, `/\`) {
			out = append(out, n)
		}
	}
	return out
}

// identity is what a resumed baseline must match to be kept: the project
// root (relative to the cwd), the markers, the budgets and the candidates,
// as the reference serializes them.
func (c *instrConfig) identity(cwd, root string) string {
	rel, err := filepath.Rel(cwd, root)
	if err != nil || rel == "." {
		rel = ""
	}
	return string(appendJSObject(nil,
		jsField{"projectRoot", filepath.ToSlash(rel)},
		jsField{"projectRootMarkers", c.markers},
		jsField{"maxBytes", c.maxBytes},
		jsField{"maxSourceBytes", c.maxSource},
		jsField{"instructionFileCandidates", c.candidates},
		jsField{"localInstructionFileCandidates", c.local},
	))
}

// instrChange is one state transition an injected message records.
type instrChange struct {
	Action, Scope, Path string
	Digest              string // empty for a removal
}

func (ch instrChange) appendJSON(b []byte) []byte {
	b = append(b, `{"action":`...)
	b = sessionlog.AppendString(b, ch.Action)
	b = append(b, `,"scope":`...)
	b = sessionlog.AppendString(b, ch.Scope)
	b = append(b, `,"path":`...)
	b = sessionlog.AppendString(b, ch.Path)
	if ch.Digest != "" {
		b = append(b, `,"digest":`...)
		b = sessionlog.AppendString(b, ch.Digest)
	}
	return append(b, '}')
}

// instrSource is the agent-instructions source of a user/message.
type instrSource struct {
	baseline bool
	identity string
	changes  []instrChange
}

// parseInstrSource reads an agent-instructions source; ok is false for
// any other source (or one without a changes list).
func parseInstrSource(src sessionlog.MessageSource) (instrSource, bool) {
	var out instrSource
	if src.Kind != instrSourceKind {
		return out, false
	}
	found := false
	for _, m := range src.Extra {
		switch m.Key {
		case "baseline":
			out.baseline = string(m.Value) == "true"
		case "baselineIdentity":
			_ = json.Unmarshal(m.Value, &out.identity)
		case "changes":
			var raw []json.RawMessage
			if json.Unmarshal(m.Value, &raw) != nil {
				return out, false
			}
			found = true
			for _, r := range raw {
				var ch struct {
					Action, Scope, Path string
					Digest              *string
				}
				if json.Unmarshal(r, &ch) != nil || (ch.Action != actionSet && ch.Action != actionReplace && ch.Action != actionRemove) {
					continue
				}
				c := instrChange{Action: ch.Action, Scope: ch.Scope, Path: ch.Path}
				if ch.Digest != nil {
					c.Digest = *ch.Digest
				}
				out.changes = append(out.changes, c)
			}
		}
	}
	return out, found
}

// messageSource is the source of an injected message, in the reference's
// member order.
func (s instrSource) messageSource() sessionlog.MessageSource {
	str := func(v string) json.RawMessage { return sessionlog.AppendString(nil, v) }
	extra := []sessionlog.Member{{Key: "form", Value: str("instructions")}}
	if s.baseline {
		extra = append(extra,
			sessionlog.Member{Key: "baseline", Value: json.RawMessage("true")},
			sessionlog.Member{Key: "baselineIdentity", Value: str(s.identity)})
	}
	list := []byte{'['}
	for i, ch := range s.changes {
		if i > 0 {
			list = append(list, ',')
		}
		list = ch.appendJSON(list)
	}
	list = append(list, ']')
	extra = append(extra, sessionlog.Member{Key: "changes", Value: list})
	return sessionlog.MessageSource{Kind: instrSourceKind, Extra: extra}
}

// scopeKey pairs a logical directory with a candidate name.
func scopeKey(dir, name string) string { return dir + scopeSep + name }

func splitScope(scope string) (dir, name string) {
	dir, name, _ = strings.Cut(scope, scopeSep)
	return dir, name
}

// displayScope is the scope of a loaded file from its model-facing path.
func (c *instrConfig) displayScope(display string) string {
	if display == "~/.reel/"+userGlobalFile || display == "$REEL_HOME/"+userGlobalFile {
		return userGlobalDir
	}
	return filepath.ToSlash(filepath.Dir(display))
}

func (c *instrConfig) fileScope(display string) string {
	return scopeKey(c.displayScope(display), filepath.Base(display))
}

// changes is an ordered map of scope to its latest change, in the order
// scopes first appeared (as a JavaScript Map keeps them).
type changes struct {
	keys []string
	m    map[string]instrChange
}

func (c *changes) set(ch instrChange) {
	if c.m == nil {
		c.m = map[string]instrChange{}
	}
	if _, ok := c.m[ch.Scope]; !ok {
		c.keys = append(c.keys, ch.Scope)
	}
	c.m[ch.Scope] = ch
}

func (c *changes) get(scope string) (instrChange, bool) {
	ch, ok := c.m[scope]
	return ch, ok
}

// scopeSet is an insertion-ordered set of scopes.
type scopeSet struct {
	keys []string
	m    map[string]bool
}

func (s *scopeSet) add(k string) {
	if s.m == nil {
		s.m = map[string]bool{}
	}
	if !s.m[k] {
		s.m[k] = true
		s.keys = append(s.keys, k)
	}
}

// instrCached is what a session remembers of a loaded file, to skip
// reading it again while its version is unchanged (never its content).
type instrCached struct {
	path            string
	version         tools.FileVersion
	digest, trimmed string
}

// instrState is a session's instruction state in this process.
type instrState struct {
	// touched are the paths successful read, write and edit calls named
	// since the last step began.
	touched []string
	// versions cache loaded files by scope.
	versions map[string]instrCached
	// prepared is the identity whose baseline this process composed, and
	// the baseline files left out of it (budget, duplicates).
	prepared *instrPrepared
	// scan keeps visibleInstructions' reading of the surface.
	scan instrScan
}

type instrPrepared struct {
	identity string
	excluded map[string]bool
}

// noteTouch records the file_path of a successful read, write or edit.
func (s *Session) noteTouch(name, args string, res tools.Result) {
	if s.eng.instr == nil || res.IsError || (name != "read" && name != "write" && name != "edit") {
		return
	}
	var a struct {
		FilePath any `json:"file_path"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return
	}
	p, ok := a.FilePath.(string)
	if p = strings.TrimSpace(p); !ok || p == "" {
		return
	}
	s.mu.Lock()
	s.instr.touched = append(s.instr.touched, p)
	s.mu.Unlock()
}

// contextHook is the pre-step hook that enters the engine's own context
// messages after the step's entered messages: the repeated-call reminders
// queued by the last step, then the instruction files' baseline or
// changes.
func (e *Engine) contextHook(ctx context.Context, info StepInfo) (PreStepResult, error) {
	s, err := e.Session(info.Session)
	if err != nil {
		return PreStepResult{}, nil
	}
	msgs := s.takeNotices()
	msgs = append(msgs, s.takeReminders(info.Step == 1)...)
	if e.instr != nil {
		if m := s.composeInstructions(ctx); m != nil {
			msgs = append(msgs, *m)
		}
	}
	if m := s.skillCatalog(ctx, skillNeed{turn: info.Turn, step: info.Step}); m != nil {
		msgs = append(msgs, *m)
	}
	if info.Step == 1 {
		msgs = append(msgs, s.takeInvoked()...)
	}
	for _, m := range msgs {
		if _, err := s.emit(ctx, e.now(), sessionlog.TypeUserMessage, m, sessionlog.AppendOp(), nil); err != nil {
			return PreStepResult{}, err
		}
	}
	return PreStepResult{}, nil
}

// visibleInstructions is the instruction state the surface shows: every
// scope's latest change in log order, and the latest baseline on it.
func (s *Session) visibleInstructions() (visible changes, baseline *instrSource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lg := s.log.Log()
	surf := lg.Surface()
	seqs := surf.Seqs()
	// Only the surface entries added since the last step are read: the
	// scan starts over when the replace generation moves.
	sc := &s.instr.scan
	if sc.log != lg || sc.gen != surf.Gen() || sc.done > len(seqs) {
		*sc = instrScan{log: lg, gen: surf.Gen()}
	}
	marker := []byte(`"` + instrSourceKind + `"`)
	events := lg.Events()
	for ; sc.done < len(seqs); sc.done++ {
		e := &events[seqs[sc.done]]
		if e.Type != sessionlog.TypeUserMessage || !bytes.Contains(e.Data, marker) {
			continue
		}
		m, err := sessionlog.DecodeData[sessionlog.UserMessage](e)
		if err != nil {
			continue
		}
		src, ok := parseInstrSource(m.Source)
		if !ok {
			continue
		}
		sc.found = append(sc.found, instrFound{seq: e.Seq, src: src})
	}
	// The changes apply in log order; the baseline is the last on the
	// surface.
	bySeq := slices.Clone(sc.found)
	slices.SortStableFunc(bySeq, func(a, b instrFound) int { return a.seq - b.seq })
	for _, f := range bySeq {
		for _, ch := range f.src.changes {
			visible.set(ch)
		}
	}
	for i := len(sc.found) - 1; i >= 0; i-- {
		if src := sc.found[i].src; src.baseline {
			baseline = &src
			break
		}
	}
	return visible, baseline
}

// instrScan is what visibleInstructions has read of one surface
// generation of one log: the first done surface entries, and the
// instruction messages among them in surface order.
type instrScan struct {
	log   *sessionlog.Log
	gen   int
	done  int
	found []instrFound
}

// instrFound is an instruction message on the surface.
type instrFound struct {
	seq int
	src instrSource
}

// composeInstructions is the message the step owes for the instruction
// files, or nil: the baseline when none of this identity is visible (first
// step, after compaction, after a load with another configuration), and
// the changes since the visible state.
func (s *Session) composeInstructions(ctx context.Context) *sessionlog.UserMessage {
	c := s.eng.instr
	s.mu.Lock()
	touched := s.instr.touched
	s.instr.touched = nil
	if s.instr.versions == nil {
		s.instr.versions = map[string]instrCached{}
	}
	st := &s.instr
	s.mu.Unlock()

	cwd := filepath.Clean(s.cwd)
	root := c.projectRoot(cwd)
	identity := c.identity(cwd, root)
	visible, visibleBaseline := s.visibleInstructions()
	keep := visibleBaseline != nil && visibleBaseline.identity == identity
	var excluded map[string]bool
	if keep && st.prepared != nil && st.prepared.identity == identity {
		excluded = st.prepared.excluded
	}
	var parts []sessionlog.ContentPart
	var out instrSource
	var authority []instrChange
	var next *instrPrepared
	if !keep || excluded == nil {
		replace := visibleBaseline != nil && !keep
		set := c.loadBaseline(ctx, cwd, root, replace)
		var included, observed changes
		if set != nil {
			for _, f := range set.included {
				ch := instrChange{Action: actionSet, Scope: c.fileScope(f.display), Path: f.display, Digest: sha1Hex(f.content)}
				included.set(ch)
				if f.version != (tools.FileVersion{}) {
					st.versions[ch.Scope] = instrCached{path: f.display, version: f.version, digest: ch.Digest, trimmed: sha1Hex(jsTrim(f.content))}
				}
			}
			for _, f := range set.observed {
				observed.set(instrChange{Scope: c.fileScope(f.display)})
			}
		}
		excluded = map[string]bool{}
		for _, k := range observed.keys {
			if _, ok := included.get(k); !ok {
				excluded[k] = true
			}
		}
		next = &instrPrepared{identity: identity, excluded: excluded}
		if !keep && set != nil && set.r.text != "" {
			parts = append(parts, sessionlog.TextPart(set.r.text))
			var removals []instrChange
			if replace {
				for _, ch := range visibleBaseline.changes {
					if _, still := included.get(ch.Scope); ch.Action != actionRemove && !still {
						removals = append(removals, instrChange{Action: actionRemove, Scope: ch.Scope, Path: ch.Path})
					}
				}
			}
			for _, k := range included.keys {
				removals = append(removals, included.m[k])
			}
			authority = removals
			out.changes = append(out.changes, removals...)
			out.baseline, out.identity = true, identity
		}
	}
	for _, ch := range authority {
		visible.set(ch)
	}
	var keepExcluded map[string]bool
	if keep {
		keepExcluded = excluded
	}
	if text, chs := c.reconcile(ctx, st.versions, &visible, cwd, root, touched, keep, keepExcluded); text != "" {
		parts = append(parts, sessionlog.TextPart(text))
		out.changes = append(out.changes, chs...)
	}
	if ctx.Err() != nil {
		return nil
	}
	if next != nil {
		st.prepared = next
	}
	if len(parts) == 0 {
		return nil
	}
	return &sessionlog.UserMessage{Content: parts, Source: out.messageSource(), ID: s.eng.newID()}
}

// projectRoot is the nearest directory from cwd up holding a root marker,
// else cwd.
func (c *instrConfig) projectRoot(cwd string) string {
	for dir := cwd; ; dir = filepath.Dir(dir) {
		for _, m := range c.markers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if filepath.Dir(dir) == dir {
			return cwd
		}
	}
}

// ancestorChain is root, …, cwd (broadest first).
func ancestorChain(root, cwd string) []string {
	var chain []string
	cur := cwd
	for cur != root {
		chain = append(chain, cur)
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		cur = parent
	}
	chain = append(chain, root)
	slices.Reverse(chain)
	return chain
}

// descendantDirs are the directories below cwd down to the directory of
// touched (relative to cwd, or absolute), shallowest first; none when it
// is not below cwd.
func descendantDirs(cwd, touched string) []string {
	target := touched
	if !filepath.IsAbs(target) {
		target = filepath.Join(cwd, target)
	}
	dir := filepath.Dir(filepath.Clean(target))
	rel, err := filepath.Rel(cwd, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return nil
	}
	return ancestorChain(cwd, dir)[1:]
}

// relScope is dir's logical scope: its path relative to the root.
func relScope(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return "."
	}
	return filepath.ToSlash(rel)
}

// dirOf is the absolute directory of a logical scope directory; ok is
// false for one that would leave the project root (from a foreign log).
func (c *instrConfig) dirOf(root, dir string) (string, bool) {
	switch {
	case dir == userGlobalDir:
		return c.home, true
	case dir == ".":
		return root, true
	case filepath.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") || strings.Contains(dir, "/../") || strings.HasSuffix(dir, "/.."):
		return "", false
	}
	return filepath.Join(root, filepath.FromSlash(dir)), true
}

// probe is what a stat of a candidate found.
type probe int

const (
	probeAbsent probe = iota
	probePresent
	probeUnavailable
)

// statCandidate stats p following symbolic links: present when it is a
// regular file, absent when missing or anything else, unavailable when
// the stat failed otherwise.
func statCandidate(p string) (probe, tools.FileVersion, int64) {
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return probePresent, tools.VersionOf(fi), fi.Size()
	case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return probeAbsent, tools.FileVersion{}, 0
	}
	return probeUnavailable, tools.FileVersion{}, 0
}

// readInstruction reads a candidate within the source cap: its text (as
// UTF-8, bad bytes replaced), or ok false when it cannot be read or is too
// large.
func (c *instrConfig) readInstruction(p string) (string, bool) {
	b, _, err := tools.ReadRegularFile(p, int64(c.maxSource))
	if err != nil {
		return "", false
	}
	if utf8.Valid(b) {
		return string(b), true
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), true
}

// baselineSet is a rendered baseline and the files it came from.
type baselineSet struct {
	r rendered
	// observed are the files read; included those the text carries.
	observed, included []instrFile
}

// loadBaseline discovers, reads and renders the baseline; nil when there
// is nothing to inject (and replace is false).
func (c *instrConfig) loadBaseline(ctx context.Context, cwd, root string, replace bool) *baselineSet {
	type cand struct {
		abs, display string
		version      tools.FileVersion
		size         int64
	}
	var found []cand
	seen := map[string]bool{}
	add := func(abs, display string) {
		if seen[abs] {
			return
		}
		if kind, v, size := statCandidate(abs); kind == probePresent {
			seen[abs] = true
			found = append(found, cand{abs, display, v, size})
		}
	}
	add(filepath.Join(c.home, userGlobalFile), c.homeDisplay+"/"+userGlobalFile)
	for _, dir := range ancestorChain(root, cwd) {
		for _, list := range [][]string{c.candidates, c.local} {
			for _, name := range list {
				abs := filepath.Join(dir, name)
				rel, _ := filepath.Rel(root, abs)
				add(abs, filepath.ToSlash(rel))
			}
		}
	}
	var loaded []instrFile
	for _, f := range found {
		if ctx.Err() != nil {
			return nil
		}
		if f.size > int64(c.maxSource) {
			continue
		}
		if text, ok := c.readInstruction(f.abs); ok {
			loaded = append(loaded, instrFile{abs: f.abs, display: f.display, content: text, version: f.version})
		}
	}
	deduped := dedupByDirectory(loaded)
	if len(deduped) == 0 && !replace {
		return nil
	}
	r := renderBaseline(deduped, c.maxBytes, replace)
	if len(deduped) == 0 {
		loaded = nil
	}
	return &baselineSet{r: r, observed: loaded, included: r.represented}
}

// dedupByDirectory drops, per directory, a file whose trimmed content
// equals an earlier one's.
func dedupByDirectory(files []instrFile) []instrFile {
	kept := map[string]map[string]bool{}
	var out []instrFile
	for _, f := range files {
		dir := filepath.Dir(f.display)
		d := sha1Hex(jsTrim(f.content))
		if kept[dir] == nil {
			kept[dir] = map[string]bool{}
		}
		if kept[dir][d] {
			continue
		}
		kept[dir][d] = true
		out = append(out, f)
	}
	return out
}

// reconcile compares the scopes worth checking with the visible state and
// renders their transitions: the baseline's scopes when a baseline of this
// identity is visible (includeBaseline), every scope the surface shows,
// and the candidates of each directory between cwd and a touched file.
// versions is updated as the reference updates its cache. It returns ""
// when nothing changed (or nothing fits the budget).
func (c *instrConfig) reconcile(ctx context.Context, versions map[string]instrCached, effective *changes, cwd, root string, touched []string, includeBaseline bool, excluded map[string]bool) (string, []instrChange) {
	var scopes, baseline scopeSet
	addDir := func(set *scopeSet, dir string) {
		for _, n := range c.candidates {
			set.add(scopeKey(dir, n))
		}
		for _, n := range c.local {
			set.add(scopeKey(dir, n))
		}
	}
	baseline.add(scopeKey(userGlobalDir, userGlobalFile))
	for _, d := range ancestorChain(root, cwd) {
		addDir(&baseline, relScope(root, d))
	}
	if includeBaseline {
		for _, k := range baseline.keys {
			scopes.add(k)
		}
	}
	for _, k := range effective.keys {
		if !includeBaseline && baseline.m[k] {
			continue
		}
		if dir, _ := splitScope(k); dir == userGlobalDir {
			scopes.add(scopeKey(userGlobalDir, userGlobalFile))
		} else {
			addDir(&scopes, dir)
		}
	}
	for _, t := range touched {
		for _, d := range descendantDirs(cwd, t) {
			addDir(&scopes, relScope(root, d))
		}
	}

	type update struct {
		change instrChange
		state  *instrCached
	}
	var items []changeItem
	var updates []update
	seenAbs := map[string]bool{}
	keptTrimmed := map[string]map[string]bool{}
	registerKept := func(dir, digest string) bool {
		if keptTrimmed[dir] == nil {
			keptTrimmed[dir] = map[string]bool{}
		}
		if keptTrimmed[dir][digest] {
			return true
		}
		keptTrimmed[dir][digest] = true
		return false
	}
	pushRemoval := func(scope, path string) {
		ch := instrChange{Action: actionRemove, Scope: scope, Path: path}
		items = append(items, changeItem{change: ch, file: instrFile{abs: "removed:" + scope, display: path}})
		updates = append(updates, update{change: ch})
	}
	var dirs []string
	byDir := map[string][]string{}
	for _, k := range scopes.keys {
		d, _ := splitScope(k)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], k)
	}
	for _, dir := range dirs {
		var probed []string
		for _, scope := range byDir[dir] {
			if excluded != nil && baseline.m[scope] && excluded[scope] {
				if prev, ok := effective.get(scope); !ok || prev.Action == actionRemove {
					delete(versions, scope)
				} else {
					pushRemoval(scope, prev.Path)
				}
				continue
			}
			probed = append(probed, scope)
		}
		itemStart, updateStart := len(items), len(updates)
		var added []string
		prior := map[string]*instrCached{}
		for _, scope := range probed {
			if v, ok := versions[scope]; ok {
				prior[scope] = &v
			} else {
				prior[scope] = nil
			}
		}
		for _, scope := range probed {
			if ctx.Err() != nil {
				return "", nil
			}
			prev, hasPrev := effective.get(scope)
			live := hasPrev && prev.Action != actionRemove
			_, name := splitScope(scope)
			absDir, ok := c.dirOf(root, dir)
			if !ok {
				continue
			}
			abs := filepath.Join(absDir, name)
			display := c.homeDisplay + "/" + userGlobalFile
			if dir != userGlobalDir {
				rel, _ := filepath.Rel(root, abs)
				display = filepath.ToSlash(rel)
			}
			kind, version, size := statCandidate(abs)
			if kind == probeUnavailable {
				if !live {
					continue
				}
				// One member of the directory's group cannot be seen:
				// keep the whole group as it was.
				items, updates = items[:itemStart], updates[:updateStart]
				for k, v := range prior {
					if v == nil {
						delete(versions, k)
					} else {
						versions[k] = *v
					}
				}
				for _, a := range added {
					delete(seenAbs, a)
				}
				delete(keptTrimmed, dir)
				break
			}
			if kind == probeAbsent {
				if !live {
					delete(versions, scope)
				} else {
					pushRemoval(scope, prev.Path)
				}
				continue
			}
			if seenAbs[abs] {
				continue
			}
			seenAbs[abs] = true
			added = append(added, abs)
			if cached, ok := versions[scope]; ok && cached.path == display && cached.version == version && live && prev.Path == cached.path && prev.Digest == cached.digest {
				if registerKept(dir, cached.trimmed) {
					pushRemoval(scope, prev.Path)
				}
				continue
			}
			if size > int64(c.maxSource) {
				continue
			}
			text, ok := c.readInstruction(abs)
			if !ok {
				continue
			}
			digest, trimmed := sha1Hex(text), sha1Hex(jsTrim(text))
			if registerKept(dir, trimmed) {
				if live {
					pushRemoval(scope, prev.Path)
				} else {
					delete(versions, scope)
				}
				continue
			}
			next := instrCached{path: display, version: version, digest: digest, trimmed: trimmed}
			if live && prev.Path == display && prev.Digest == digest {
				versions[scope] = next
				continue
			}
			action := actionReplace
			if !live {
				action = actionSet
			}
			ch := instrChange{Action: action, Scope: scope, Path: display, Digest: digest}
			items = append(items, changeItem{change: ch, file: instrFile{abs: abs, display: display, content: text, version: version}})
			updates = append(updates, update{change: ch, state: &next})
		}
	}
	if len(items) == 0 {
		return "", nil
	}
	text, kept := c.renderChanges(items, c.maxBytes)
	if text == "" || len(kept) == 0 {
		return "", nil
	}
	for _, u := range updates {
		if !slices.Contains(kept, u.change) {
			continue
		}
		if u.state == nil {
			delete(versions, u.change.Scope)
		} else {
			versions[u.change.Scope] = *u.state
		}
	}
	return text, kept
}

// sha1Hex is the reference's content digest: SHA-1 of the text, in hex.
func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// jsTrim trims white space as JavaScript's String.prototype.trim does.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
}
