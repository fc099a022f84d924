package skills

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/jsrules"
)

// Limits and defaults.
const (
	// DefaultMaxFileBytes caps one SKILL.md file; a longer one is skipped.
	DefaultMaxFileBytes = 1 << 20
	// DefaultMaxDescription caps a description in the catalog, in UTF-16
	// code units as the reference counts them, "..." included.
	DefaultMaxDescription = 500
	// MaxEntriesPerRoot caps the directory entries read from one root.
	MaxEntriesPerRoot = 1024
	// FileName is the file of a directory skill.
	FileName = "SKILL.md"
)

// Sources: where a skill was found, in precedence order (a skill of an
// earlier source wins a name over one of a later source).
const (
	SourceProjectReel   = "project-reel"   // <project>/.reel/skills
	SourceProjectDsh    = "project-dsh"    // <project>/.dsh/skills
	SourceProjectAgents = "project-agents" // <project>/.agents/skills
	SourceProjectClaude = "project-claude" // <project>/.claude/skills
	SourceCustom        = "custom"         // Options.Dirs
	SourceUserReel      = "user-reel"      // $XDG_CONFIG_HOME/reel/skills
	SourceUserAgents    = "user-agents"    // ~/.agents/skills
	SourceUserClaude    = "user-claude"    // ~/.claude/skills
)

// Errors of Load and of the skill tool, matched with errors.Is.
var (
	// ErrInvalidName reports a name outside the skill name grammar.
	ErrInvalidName = errors.New("skills: invalid skill name")
	// ErrUnknown reports a name no discovered skill has (or one whose file
	// changed or went away since discovery).
	ErrUnknown = errors.New("skills: unknown skill")
	// ErrNotModelInvocable reports a skill with disable-model-invocation.
	ErrNotModelInvocable = errors.New("skills: not available for model invocation")
	// ErrNotUserInvocable reports a skill with user-invocable: false.
	ErrNotUserInvocable = errors.New("skills: not available for user invocation")
)

// Options configures discovery. The zero value is the default roots with
// the default limits.
type Options struct {
	// ConfigHome is the user's configuration directory, holding
	// reel/skills; empty means $XDG_CONFIG_HOME, else ~/.config.
	ConfigHome string
	// Home is the user's home directory, holding .agents/skills and
	// .claude/skills; empty means os.UserHomeDir.
	Home string
	// Dirs are further skill roots, searched after the project's and
	// before the user's (relative ones against the cwd).
	Dirs []string
	// NoUser leaves out the user's roots (ConfigHome and Home).
	NoUser bool
	// MaxFileBytes caps one skill file (0: DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxDescription caps a catalog description (0: DefaultMaxDescription;
	// at least 3).
	MaxDescription int
}

// Skill is one discovered skill, as its frontmatter declares it.
type Skill struct {
	// Name is the kebab-case name the skill is called by.
	Name string
	// Description is the frontmatter description, as written.
	Description string
	// WhenToUse is the optional whenToUse hint (never rendered).
	WhenToUse string
	// ModelInvocable is false with disable-model-invocation: true; such a
	// skill is left out of the catalog and refused by the skill tool.
	ModelInvocable bool
	// UserInvocable is false with user-invocable: false; such a skill is
	// no slash command.
	UserInvocable bool
	// Source is one of the Source constants.
	Source string
	// Path is the skill's file: <root>/<dir>/SKILL.md or <root>/<name>.md.
	Path string
	// Dir is the skill's base directory, against which the paths its
	// instructions mention resolve: the SKILL.md's directory, or the root
	// of a flat <name>.md skill.
	Dir string
}

// Problem is a skill file or root that discovery skipped, and why.
type Problem struct {
	// Path is the file or directory at fault.
	Path string
	// Line is the 1-based line of a frontmatter problem, else 0.
	Line int
	// Msg says what is wrong.
	Msg string
}

// String renders the problem as "PATH:LINE: MSG".
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	}
	return p.Path + ": " + p.Msg
}

// Catalog is the skills discovered for one cwd: the winner of each name,
// sorted by name. It is immutable and safe for concurrent use.
type Catalog struct {
	skills   []Skill
	maxFile  int64
	maxDesc  int
	complete bool
}

// root is one directory searched for skills.
type root struct {
	path, source string
	skipSystem   bool // the user's own root: its .system child is not a skill
}

// skillName is the grammar of skill names.
var skillName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`) })

// ValidName reports whether name is a kebab-case skill name.
func ValidName(name string) bool { return skillName().MatchString(name) }

// projectRoot is the nearest directory from cwd up holding ".git", else
// cwd.
func projectRoot(cwd string) string {
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}

// roots lists the directories searched for cwd, in precedence order, each
// once.
func (o Options) roots(cwd string) []root {
	var rs []root
	if cwd != "" {
		pr := projectRoot(cwd)
		rs = append(rs,
			root{path: filepath.Join(pr, ".reel", "skills"), source: SourceProjectReel},
			root{path: filepath.Join(pr, ".dsh", "skills"), source: SourceProjectDsh},
			root{path: filepath.Join(pr, ".agents", "skills"), source: SourceProjectAgents},
			root{path: filepath.Join(pr, ".claude", "skills"), source: SourceProjectClaude},
		)
	}
	for _, d := range o.Dirs {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) && cwd != "" {
			d = filepath.Join(cwd, d)
		}
		rs = append(rs, root{path: filepath.Clean(d), source: SourceCustom})
	}
	if !o.NoUser {
		home := o.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		config := o.ConfigHome
		if config == "" {
			if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
				config = x
			} else if home != "" {
				config = filepath.Join(home, ".config")
			}
		}
		if config != "" {
			rs = append(rs, root{path: filepath.Join(config, "reel", "skills"), source: SourceUserReel, skipSystem: true})
		}
		if home != "" {
			rs = append(rs,
				root{path: filepath.Join(home, ".agents", "skills"), source: SourceUserAgents},
				root{path: filepath.Join(home, ".claude", "skills"), source: SourceUserClaude},
			)
		}
	}
	seen := map[string]bool{}
	out := rs[:0]
	for _, r := range rs {
		if !seen[r.path] {
			seen[r.path] = true
			out = append(out, r)
		}
	}
	return out
}

func (o Options) limits() (int64, int) {
	maxFile, maxDesc := o.MaxFileBytes, o.MaxDescription
	if maxFile <= 0 {
		maxFile = DefaultMaxFileBytes
	}
	if maxDesc <= 0 {
		maxDesc = DefaultMaxDescription
	}
	return maxFile, max(maxDesc, 3)
}

// Discover finds the skills for a session whose cwd is the absolute
// directory cwd: in <project>/.reel/skills, .dsh/skills, .agents/skills
// and .claude/skills (the project being the nearest directory from cwd up
// holding .git, else cwd), then in o.Dirs, then in the user's
// $XDG_CONFIG_HOME/reel/skills, ~/.agents/skills and ~/.claude/skills.
// Each root holds directory skills <name>/SKILL.md and flat skills
// <name>.md. When two skills share a name the earlier root wins; in one
// root the entry whose name sorts first.
//
// Discovery never fails: a file that cannot be used is skipped and
// reported as a Problem (as is a skill another one shadows). A root or a
// file that could not be read for another reason than its absence, or a
// cancelled ctx, leaves the catalog incomplete (see Complete); it still
// holds what was read.
func Discover(ctx context.Context, cwd string, o Options) (*Catalog, []Problem) {
	maxFile, maxDesc := o.limits()
	c := &Catalog{maxFile: maxFile, maxDesc: maxDesc, complete: true}
	var problems []Problem
	byName := map[string]int{}
	for _, r := range o.roots(cwd) {
		found, ps, ok := scanRoot(ctx, r, maxFile)
		problems = append(problems, ps...)
		if !ok {
			c.complete = false
		}
		for _, s := range found {
			if i, dup := byName[s.Name]; dup {
				problems = append(problems, Problem{Path: s.Path, Msg: fmt.Sprintf("skill %q is shadowed by %s", s.Name, c.skills[i].Path)})
				continue
			}
			byName[s.Name] = len(c.skills)
			c.skills = append(c.skills, s)
		}
		if ctx.Err() != nil {
			c.complete = false
			problems = append(problems, Problem{Path: r.path, Msg: "discovery stopped: " + ctx.Err().Error()})
			break
		}
	}
	slices.SortFunc(c.skills, func(a, b Skill) int { return cmp.Compare(a.Name, b.Name) })
	return c, problems
}

// scanRoot reads the skills of one root, in entry-name order; ok is false
// when something could not be read for another reason than its absence.
func scanRoot(ctx context.Context, r root, maxFile int64) (found []Skill, problems []Problem, ok bool) {
	ok = true
	d, err := os.Open(r.path)
	if err != nil {
		if absent(err) {
			return nil, nil, true
		}
		return nil, []Problem{{Path: r.path, Msg: "cannot read skill directory: " + unwrap(err)}}, false
	}
	entries, err := d.ReadDir(MaxEntriesPerRoot + 1)
	_ = d.Close()
	if err != nil && len(entries) == 0 {
		if absent(err) || errors.Is(err, io.EOF) {
			return nil, nil, true
		}
		return nil, []Problem{{Path: r.path, Msg: "cannot read skill directory: " + unwrap(err)}}, false
	}
	if len(entries) > MaxEntriesPerRoot {
		problems = append(problems, Problem{Path: r.path, Msg: fmt.Sprintf("more than %d entries; only %d are searched", MaxEntriesPerRoot, MaxEntriesPerRoot)})
		entries = entries[:MaxEntriesPerRoot]
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if ctx.Err() != nil {
			return found, problems, false
		}
		name := e.Name()
		if r.skipSystem && name == ".system" {
			continue
		}
		full := filepath.Join(r.path, name)
		var file, dir string
		switch t := e.Type(); {
		case t.IsDir():
			file, dir = filepath.Join(full, FileName), full
		case t.IsRegular():
			if !strings.HasSuffix(name, ".md") {
				continue
			}
			file, dir = full, r.path
		case t&fs.ModeSymlink != 0:
			fi, err := os.Stat(full)
			switch {
			case err != nil:
				problems = append(problems, Problem{Path: full, Msg: "cannot follow symbolic link: " + unwrap(err)})
				continue
			case fi.IsDir():
				file, dir = filepath.Join(full, FileName), full
			case fi.Mode().IsRegular() && strings.HasSuffix(name, ".md"):
				file, dir = full, r.path
			default:
				continue
			}
		default:
			continue // FIFOs, sockets, devices
		}
		s, p, readable := readSkill(file, maxFile)
		if p != nil {
			problems = append(problems, *p)
		}
		if !readable {
			ok = false
		}
		if s == nil {
			continue
		}
		s.Source, s.Dir = r.source, dir
		found = append(found, *s)
	}
	return found, problems, ok
}

// readSkill reads and parses one skill file. A missing file is no skill
// and no problem; readable is false for a file that exists but could not
// be read (permissions, I/O).
func readSkill(path string, maxFile int64) (s *Skill, p *Problem, readable bool) {
	raw, _, err := tools.ReadRegularFile(path, maxFile)
	switch {
	case err == nil:
	case absent(err):
		return nil, nil, true
	case errors.Is(err, tools.ErrNotRegular):
		return nil, &Problem{Path: path, Msg: "not a regular file; skipped"}, true
	case errors.Is(err, tools.ErrTooLarge):
		return nil, &Problem{Path: path, Msg: fmt.Sprintf("larger than %d bytes; skipped", maxFile)}, true
	default:
		return nil, &Problem{Path: path, Msg: "cannot read: " + unwrap(err)}, false
	}
	sk, _, err := parseSkill(string(raw))
	if err != nil {
		var fe *FrontmatterError
		if errors.As(err, &fe) {
			return nil, &Problem{Path: path, Line: fe.Line, Msg: fe.Msg}, true
		}
		return nil, &Problem{Path: path, Msg: err.Error()}, true
	}
	sk.Path = path
	return &sk, nil, true
}

// parseSkill parses a skill file's text: its declared skill and its
// instructions (the body, trimmed).
func parseSkill(raw string) (Skill, string, error) {
	h, err := parseHeader(raw)
	if err != nil {
		return Skill{}, "", err
	}
	str := func(key string) (string, bool) {
		v, ok := h.vals[key]
		return v.str, ok && v.kind == kindString && v.str != ""
	}
	name, okName := str("name")
	desc, okDesc := str("description")
	if !okName || !okDesc {
		var missing []string
		line := 1
		for _, k := range []string{"name", "description"} {
			if v, ok := h.vals[k]; ok && (v.kind != kindString || v.str == "") {
				what := v.kind.String()
				if v.kind == kindString {
					what = "empty"
				}
				return Skill{}, "", &FrontmatterError{Line: v.line, Msg: fmt.Sprintf("%q must be a non-empty string, not %s", k, what)}
			} else if !ok {
				missing = append(missing, strquote(k))
			}
		}
		return Skill{}, "", &FrontmatterError{Line: line, Msg: "frontmatter requires " + strings.Join(missing, " and ")}
	}
	if !ValidName(name) {
		return Skill{}, "", &FrontmatterError{Line: h.vals["name"].line, Msg: fmt.Sprintf("invalid skill name %q: use lowercase letters, digits and single hyphens (kebab-case)", name)}
	}
	for _, legacy := range [][2]string{
		{"disableModelInvocation", "disable-model-invocation"},
		{"modelInvocable", "disable-model-invocation"},
		{"userInvocable", "user-invocable"},
	} {
		if v, ok := h.vals[legacy[0]]; ok {
			return Skill{}, "", &FrontmatterError{Line: v.line, Msg: fmt.Sprintf("frontmatter field %q is unsupported; use %q", legacy[0], legacy[1])}
		}
	}
	disable, err := flag(h, "disable-model-invocation")
	if err != nil {
		return Skill{}, "", err
	}
	userOff, err := flag(h, "user-invocable")
	if err != nil {
		return Skill{}, "", err
	}
	s := Skill{Name: name, Description: desc, ModelInvocable: disable != flagTrue, UserInvocable: userOff != flagFalse}
	if w, ok := str("whenToUse"); ok {
		s.WhenToUse = w
	}
	return s, jsrules.Trim(h.body), nil
}

func strquote(s string) string { return `"` + s + `"` }

type tri uint8

const (
	flagAbsent tri = iota
	flagTrue
	flagFalse
)

// flag reads a boolean field as the reference does: a YAML boolean, 1 or
// 0 (number or string), or true/false, yes/no, on/off in any case.
func flag(h header, key string) (tri, error) {
	v, ok := h.vals[key]
	if !ok {
		return flagAbsent, nil
	}
	switch v.kind {
	case kindBool:
		if v.b {
			return flagTrue, nil
		}
		return flagFalse, nil
	case kindNumber:
		switch v.num {
		case 1:
			return flagTrue, nil
		case 0:
			return flagFalse, nil
		}
	case kindString:
		switch strings.ToLower(v.str) {
		case "true", "yes", "on", "1":
			return flagTrue, nil
		case "false", "no", "off", "0":
			return flagFalse, nil
		}
	}
	return flagAbsent, &FrontmatterError{Line: v.line, Msg: fmt.Sprintf("frontmatter field %q must be a boolean", key)}
}

func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func unwrap(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Complete reports whether every root and skill file could be read: an
// incomplete catalog may lack skills that exist, and should not replace a
// catalog the model was shown.
func (c *Catalog) Complete() bool { return c.complete }

// Skills returns every discovered skill, sorted by name.
func (c *Catalog) Skills() []Skill { return slices.Clone(c.skills) }

// ModelVisible returns the skills the catalog message lists and the skill
// tool loads: those without disable-model-invocation, sorted by name.
func (c *Catalog) ModelVisible() []Skill {
	var out []Skill
	for _, s := range c.skills {
		if s.ModelInvocable {
			out = append(out, s)
		}
	}
	return out
}

// UserVisible returns the skills a user may invoke as slash commands:
// those without user-invocable: false, sorted by name.
func (c *Catalog) UserVisible() []Skill {
	var out []Skill
	for _, s := range c.skills {
		if s.UserInvocable {
			out = append(out, s)
		}
	}
	return out
}

// Lookup returns the skill named name.
func (c *Catalog) Lookup(name string) (Skill, bool) {
	i, ok := slices.BinarySearchFunc(c.skills, name, func(s Skill, n string) int { return cmp.Compare(s.Name, n) })
	if !ok {
		return Skill{}, false
	}
	return c.skills[i], true
}

// Load returns what a user's invocation of the skill name (a slash
// command) enters into the conversation: the skill's current instructions
// rendered as the skill tool renders them (see Content). It fails with
// ErrInvalidName, ErrUnknown or ErrNotUserInvocable; the error's message
// is meant for the user.
func (c *Catalog) Load(name string) (string, error) {
	s, body, err := c.load(name, func(s Skill) error {
		if !s.UserInvocable {
			return fmt.Errorf("%w: skill \"%s\" is not available for user invocation", ErrNotUserInvocable, name)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return Content(s, body), nil
}

// load finds name, checks it with allow, reads its file again (a skill's
// body is read at each load, never cached) and checks the fresh skill
// again.
func (c *Catalog) load(name string, allow func(Skill) error) (Skill, string, error) {
	if !ValidName(name) {
		return Skill{}, "", fmt.Errorf("%w: invalid skill name \"%s\"", ErrInvalidName, name)
	}
	unknown := fmt.Errorf("%w: skill \"%s\" is unknown or no longer available", ErrUnknown, name)
	s, ok := c.Lookup(name)
	if !ok {
		return Skill{}, "", unknown
	}
	if err := allow(s); err != nil {
		return Skill{}, "", err
	}
	raw, _, err := tools.ReadRegularFile(s.Path, c.maxFile)
	if err != nil {
		return Skill{}, "", unknown
	}
	fresh, body, err := parseSkill(string(raw))
	if err != nil || fresh.Name != name {
		return Skill{}, "", unknown
	}
	fresh.Source, fresh.Path, fresh.Dir = s.Source, s.Path, s.Dir
	if err := allow(fresh); err != nil {
		return Skill{}, "", err
	}
	return fresh, body, nil
}

// messageOf strips the package prefix of a load error: the text the
// model or the user sees.
func messageOf(err error) string {
	msg := err.Error()
	for _, e := range []error{ErrInvalidName, ErrUnknown, ErrNotModelInvocable, ErrNotUserInvocable} {
		if p := e.Error() + ": "; strings.HasPrefix(msg, p) {
			return msg[len(p):]
		}
	}
	return msg
}
