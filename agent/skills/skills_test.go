package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/tools"
)

// writeFile writes content to dir/rel, making the directories.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func skillFile(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\nBody of " + name + ".\n"
}

// isolated returns options that see no real user directory: home and
// config are fresh temporary directories.
func isolated(t *testing.T) (Options, string, string) {
	t.Helper()
	home, config := t.TempDir(), t.TempDir()
	return Options{Home: home, ConfigHome: config}, home, config
}

func names(ss []Skill) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func TestDiscoverPlaces(t *testing.T) {
	type place struct {
		base string // "project", "sub" (a directory below the project), "home", "config", "custom"
		rel  string
	}
	cases := []struct {
		name   string
		at     place
		git    bool // the project has .git
		cwdSub bool // the session cwd is project/sub/dir
		source string
		flat   bool
		found  bool
	}{
		{"reel project", place{"project", ".reel/skills/s/SKILL.md"}, false, false, SourceProjectReel, false, true},
		{"dsh project", place{"project", ".dsh/skills/s/SKILL.md"}, false, false, SourceProjectDsh, false, true},
		{"agents project", place{"project", ".agents/skills/s/SKILL.md"}, false, false, SourceProjectAgents, false, true},
		{"claude project", place{"project", ".claude/skills/s/SKILL.md"}, false, false, SourceProjectClaude, false, true},
		{"project root found from a subdirectory", place{"project", ".dsh/skills/s/SKILL.md"}, true, true, SourceProjectDsh, false, true},
		{"no .git: only the cwd is searched", place{"project", ".dsh/skills/s/SKILL.md"}, false, true, "", false, false},
		{"intermediate directories are not searched", place{"sub", ".dsh/skills/s/SKILL.md"}, true, true, "", false, false},
		{"flat skill file", place{"project", ".dsh/skills/s.md"}, false, false, SourceProjectDsh, true, true},
		{"nested deeper is not a skill", place{"project", ".dsh/skills/group/s/SKILL.md"}, false, false, "", false, false},
		{"user reel config", place{"config", "reel/skills/s/SKILL.md"}, false, false, SourceUserReel, false, true},
		{"user .system is skipped", place{"config", "reel/skills/.system/SKILL.md"}, false, false, "", false, false},
		{"user agents", place{"home", ".agents/skills/s/SKILL.md"}, false, false, SourceUserAgents, false, true},
		{"user claude", place{"home", ".claude/skills/s/SKILL.md"}, false, false, SourceUserClaude, false, true},
		{"custom dir", place{"custom", "s/SKILL.md"}, false, false, SourceCustom, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, home, config := isolated(t)
			project := t.TempDir()
			custom := t.TempDir()
			o.Dirs = []string{custom}
			if tc.git {
				if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cwd := project
			if tc.cwdSub {
				cwd = filepath.Join(project, "sub", "dir")
				if err := os.MkdirAll(cwd, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			base := map[string]string{"project": project, "sub": filepath.Join(project, "sub"), "home": home, "config": config, "custom": custom}[tc.at.base]
			name := "s"
			if strings.Contains(tc.at.rel, ".system") {
				name = "system-skill"
			}
			p := writeFile(t, base, tc.at.rel, skillFile(name, "A skill."))
			c, problems := Discover(context.Background(), cwd, o)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			got := c.Skills()
			if !tc.found {
				if len(got) != 0 {
					t.Fatalf("found %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("found %d skills, want 1", len(got))
			}
			s := got[0]
			wantDir := filepath.Dir(p) // a flat skill's base is its root, the file's directory too
			if s.Source != tc.source || s.Path != p || s.Dir != wantDir || s.Name != "s" {
				t.Errorf("got %+v, want source %s path %s dir %s", s, tc.source, p, wantDir)
			}
		})
	}
}

func TestDiscoverXDGConfigHome(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	writeFile(t, xdg, "reel/skills/x/SKILL.md", skillFile("x", "From XDG."))
	c, _ := Discover(context.Background(), t.TempDir(), Options{Home: t.TempDir()})
	if s, ok := c.Lookup("x"); !ok || s.Source != SourceUserReel {
		t.Fatalf("Lookup(x) = %+v, %v; want a user-reel skill", s, ok)
	}
	// Without XDG_CONFIG_HOME: ~/.config.
	t.Setenv("XDG_CONFIG_HOME", "")
	home := t.TempDir()
	writeFile(t, home, ".config/reel/skills/y/SKILL.md", skillFile("y", "From ~/.config."))
	c, _ = Discover(context.Background(), t.TempDir(), Options{Home: home})
	if _, ok := c.Lookup("y"); !ok {
		t.Fatal("~/.config/reel/skills not searched")
	}
}

func TestPrecedence(t *testing.T) {
	o, home, config := isolated(t)
	project := t.TempDir()
	custom := t.TempDir()
	o.Dirs = []string{custom}
	places := []struct{ base, rel, source string }{
		{project, ".reel/skills/dup/SKILL.md", SourceProjectReel},
		{project, ".dsh/skills/dup/SKILL.md", SourceProjectDsh},
		{project, ".agents/skills/dup/SKILL.md", SourceProjectAgents},
		{project, ".claude/skills/dup/SKILL.md", SourceProjectClaude},
		{custom, "dup/SKILL.md", SourceCustom},
		{config, "reel/skills/dup/SKILL.md", SourceUserReel},
		{home, ".agents/skills/dup/SKILL.md", SourceUserAgents},
		{home, ".claude/skills/dup/SKILL.md", SourceUserClaude},
	}
	for _, p := range places {
		writeFile(t, p.base, p.rel, skillFile("dup", "From "+p.source+"."))
	}
	// Remove the winners one by one: the next place wins each time.
	for i, p := range places {
		c, problems := Discover(context.Background(), project, o)
		s, ok := c.Lookup("dup")
		if !ok || s.Source != p.source || s.Description != "From "+p.source+"." {
			t.Fatalf("round %d: winner %+v, want %s", i, s, p.source)
		}
		if len(problems) != len(places)-1-i {
			t.Errorf("round %d: %d shadow problems, want %d: %v", i, len(problems), len(places)-1-i, problems)
		}
		for _, pr := range problems {
			if !strings.Contains(pr.Msg, "shadowed by "+s.Path) {
				t.Errorf("problem %v does not name the winner", pr)
			}
		}
		if err := os.RemoveAll(filepath.Dir(filepath.Join(p.base, p.rel))); err != nil {
			t.Fatal(err)
		}
	}
	// In one root, the entry whose name sorts first wins: b/ declares the
	// same name as a/.
	root := t.TempDir()
	writeFile(t, root, "a/SKILL.md", skillFile("same", "From a."))
	writeFile(t, root, "b/SKILL.md", skillFile("same", "From b."))
	writeFile(t, root, "same.md", skillFile("same", "From same.md."))
	c, problems := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if s, _ := c.Lookup("same"); s.Description != "From a." || len(problems) != 2 {
		t.Fatalf("winner %+v, problems %v", s, problems)
	}
}

func TestFrontmatter(t *testing.T) {
	type want struct {
		name, desc, when string
		model, user      bool
		body             string
		errLine          int
		errHas           string
	}
	ok := func(name, desc string) want { return want{name: name, desc: desc, model: true, user: true} }
	cases := []struct {
		name string
		raw  string
		want want
	}{
		{"basic", "---\nname: a\ndescription: Does a.\n---\n\n# A\n\nbody\n", want{name: "a", desc: "Does a.", model: true, user: true, body: "# A\n\nbody"}},
		{"missing name is no skill (the directory name is not used)", "---\ndescription: D\n---\nx", want{errLine: 1, errHas: `requires "name"`}},
		{"missing both", "---\nfoo: bar\n---\n", want{errLine: 1, errHas: `requires "name" and "description"`}},
		{"empty description", "---\nname: a\ndescription: ''\n---\n", want{errLine: 3, errHas: `"description" must be a non-empty string, not empty`}},
		{"numeric name", "---\nname: 123\ndescription: D\n---\n", want{errLine: 2, errHas: `"name" must be a non-empty string, not a number`}},
		{"boolean description", "---\nname: a\ndescription: true\n---\n", want{errLine: 3, errHas: "not a boolean"}},
		{"invalid name", "---\nname: Foo_Bar\ndescription: D\n---\n", want{errLine: 2, errHas: `invalid skill name "Foo_Bar"`}},
		{"double quoted with escapes", "---\nname: \"a\"\ndescription: \"Say \\\"hi\\\"\\tthen\\u00e9 # not a comment\"\n---\n", ok("a", "Say \"hi\"\tthené # not a comment")},
		{"single quoted", "---\nname: 'a'\ndescription: 'It''s: fine'\n---\n", ok("a", "It's: fine")},
		{"quoted over lines", "---\nname: a\ndescription: \"one\n  two\n\n  three\"\n---\n", ok("a", "one two\nthree")},
		{"double quoted escaped line break", "---\nname: a\ndescription: \"one\\\n   two\"\n---\n", ok("a", "onetwo")},
		{"plain over lines", "---\nname: a\ndescription: first line\n  second line\n\n  after a blank\n---\n", ok("a", "first line second line\nafter a blank")},
		{"plain on the next line", "---\nname: a\ndescription:\n  on the next\n  line\n---\n", ok("a", "on the next line")},
		{"folded", "---\nname: a\ndescription: >\n  folded\n  text\n\n  para\n---\n", ok("a", "folded text\npara\n")},
		{"folded strip", "---\nname: a\ndescription: >-\n  folded\n  text\n---\n", ok("a", "folded text")},
		{"literal", "---\nname: a\ndescription: |\n  line one\n    indented\n  line three\n\n---\n", ok("a", "line one\n  indented\nline three\n")},
		{"literal keep", "---\nname: a\ndescription: |+\n  x\n\n---\n", ok("a", "x\n\n")},
		{"comments", "# leading comment\n---\nname: a\ndescription: D\n---\n", want{errLine: 1, errHas: "missing frontmatter"}},
		{"comments inside", "---\n# c\nname: a # the name\ndescription: D   # trailing\n\n---\n", ok("a", "D")},
		{"hash without space is text", "---\nname: a\ndescription: C# and F#\n---\n", ok("a", "C# and F#")},
		{"disable model invocation", "---\nname: a\ndescription: D\ndisable-model-invocation: true\n---\n", want{name: "a", desc: "D", model: false, user: true}},
		{"user-invocable false", "---\nname: a\ndescription: D\nuser-invocable: false\n---\n", want{name: "a", desc: "D", model: true, user: false}},
		{"flag spellings", "---\nname: a\ndescription: D\ndisable-model-invocation: Yes\nuser-invocable: 'OFF'\n---\n", want{name: "a", desc: "D", model: false, user: false}},
		{"flag numbers", "---\nname: a\ndescription: D\ndisable-model-invocation: 1\nuser-invocable: \"0\"\n---\n", want{name: "a", desc: "D", model: false, user: false}},
		{"flag false values", "---\nname: a\ndescription: D\ndisable-model-invocation: off\nuser-invocable: on\n---\n", ok("a", "D")},
		{"bad flag", "---\nname: a\ndescription: D\nuser-invocable: maybe\n---\n", want{errLine: 4, errHas: `"user-invocable" must be a boolean`}},
		{"flag 2", "---\nname: a\ndescription: D\ndisable-model-invocation: 2\n---\n", want{errLine: 4, errHas: "must be a boolean"}},
		{"legacy camel case", "---\nname: a\ndescription: D\nuserInvocable: false\n---\n", want{errLine: 4, errHas: `"userInvocable" is unsupported; use "user-invocable"`}},
		{"legacy modelInvocable", "---\nname: a\ndescription: D\nmodelInvocable: true\n---\n", want{errLine: 4, errHas: `use "disable-model-invocation"`}},
		{"whenToUse", "---\nname: a\ndescription: D\nwhenToUse: Always.\n---\n", want{name: "a", desc: "D", when: "Always.", model: true, user: true}},
		{"CRLF", "---\r\nname: a\r\ndescription: Crlf\r\n  continued\r\n---\r\n\r\nbody\r\n", want{name: "a", desc: "Crlf continued", model: true, user: true, body: "body"}},
		{"BOM", "\uFEFF---\nname: a\ndescription: D\n---\nb", want{name: "a", desc: "D", model: true, user: true, body: "b"}},
		{"closing line at end of file", "---\nname: a\ndescription: D\n---", ok("a", "D")},
		{"missing closing", "---\nname: a\ndescription: D\n\nbody", want{errLine: 1, errHas: "not closed"}},
		{"no frontmatter", "# Just markdown\n", want{errLine: 1, errHas: "missing frontmatter"}},
		{"opening without newline", "---", want{errLine: 1, errHas: "missing frontmatter"}},
		{"empty frontmatter", "---\n---\nbody", want{errLine: 1, errHas: "empty"}},
		{"indented closing is not closing", "---\nname: a\ndescription: D\n ---\n", want{errLine: 1, errHas: "not closed"}},
		{"duplicate key", "---\nname: a\ndescription: D\nname: b\n---\n", want{errLine: 4, errHas: `duplicate key "name" (first on line 2)`}},
		{"colon in plain value", "---\nname: a\ndescription: Use when: always\n---\n", want{errLine: 3, errHas: `cannot contain ": "`}},
		{"url in plain value", "---\nname: a\ndescription: See https://example.com/x\n---\n", ok("a", "See https://example.com/x")},
		{"no colon", "---\nname: a\njust text\n---\n", want{errLine: 3, errHas: `expected "key: value"`}},
		{"top-level list", "---\n- a\n---\n", want{errLine: 2, errHas: "not a list"}},
		{"unexpected indentation", "---\nname: a\n # c\n  description: D\n---\n", want{errLine: 4, errHas: "unexpected indented text"}},
		{"tab indentation", "---\nname: a\n\tdescription: D\n---\n", want{errLine: 3, errHas: "tab"}},
		{"anchor", "---\nname: &n a\ndescription: D\n---\n", want{errLine: 2, errHas: "anchor"}},
		{"alias", "---\nname: a\ndescription: *n\n---\n", want{errLine: 3, errHas: "alias"}},
		{"tag", "---\nname: !!str a\ndescription: D\n---\n", want{errLine: 2, errHas: "tag"}},
		{"unterminated quote", "---\nname: a\ndescription: \"open\n---\n", want{errLine: 3, errHas: "unterminated quoted value"}},
		{"text after quote", "---\nname: 'a' b\ndescription: D\n---\n", want{errLine: 2, errHas: "after the closing quote"}},
		{"bad escape", "---\nname: a\ndescription: \"\\q\"\n---\n", want{errLine: 3, errHas: `unknown escape \q`}},
		{"nested metadata and lists", "---\nname: a\nmetadata:\n  author: me\n  tags: [x, y]\nallowed-tools:\n- Read\n- Grep\nextra:\n  - one\n  - two\nflow: {a: 1,\n  b: 2}\ndescription: D\n---\n", ok("a", "D")},
		{"metadata as name is refused", "---\nname:\n  x: y\ndescription: D\n---\n", want{errLine: 2, errHas: "not a mapping"}},
		{"null name", "---\nname:\ndescription: D\n---\n", want{errLine: 2, errHas: "not null"}},
		{"unterminated flow", "---\nname: a\ndescription: D\ntools: [a, b\n---\n", want{errLine: 4, errHas: "unterminated flow"}},
		{"quoted key", "---\n\"name\": a\n'description': D\n---\n", ok("a", "D")},
		{"body trimmed", "---\nname: a\ndescription: D\n---\n\n\n  text  \n\n\n", want{name: "a", desc: "D", model: true, user: true, body: "text"}},
		{"invalid UTF-8", "---\nname: a\ndescription: bad \xff byte\n---\n", ok("a", "bad \uFFFD byte")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, body, err := parseSkill(tc.raw)
			w := tc.want
			if w.errHas != "" {
				var fe *FrontmatterError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a *FrontmatterError containing %q", err, w.errHas)
				}
				if fe.Line != w.errLine || !strings.Contains(fe.Msg, w.errHas) {
					t.Fatalf("err = line %d %q, want line %d containing %q", fe.Line, fe.Msg, w.errLine, w.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if s.Name != w.name || s.Description != w.desc || s.WhenToUse != w.when || s.ModelInvocable != w.model || s.UserInvocable != w.user {
				t.Fatalf("got %+v, want %+v", s, w)
			}
			if w.body != "" && body != w.body {
				t.Fatalf("body = %q, want %q", body, w.body)
			}
		})
	}
}

// TestMalformedReported: a malformed skill is skipped and reported with
// its file and line; the others still load.
func TestMalformedReported(t *testing.T) {
	root := t.TempDir()
	bad := writeFile(t, root, "bad/SKILL.md", "---\nname: bad\ndescription: Use when: x\n---\n")
	writeFile(t, root, "good/SKILL.md", skillFile("good", "Fine."))
	writeFile(t, root, "README.md", "# Not a skill\n")
	writeFile(t, root, "notes.txt", "ignored: not .md\n")
	if err := os.MkdirAll(filepath.Join(root, "empty-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, problems := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if got := names(c.Skills()); !slices.Equal(got, []string{"good"}) {
		t.Fatalf("skills %v", got)
	}
	if len(problems) != 2 {
		t.Fatalf("problems %v, want bad/SKILL.md and README.md", problems)
	}
	if p := problems[0]; p.Path != filepath.Join(root, "README.md") || p.Line != 1 {
		t.Errorf("problem %v", p)
	}
	if p := problems[1]; p.Path != bad || p.Line != 3 || p.String() != bad+`:3: a plain value cannot contain ": "; quote the value` {
		t.Errorf("problem %q", p.String())
	}
	if !c.Complete() {
		t.Error("a malformed file made the catalog incomplete")
	}
}

// TestHostileFiles: a FIFO, a device, procfs and a huge file named
// SKILL.md are refused promptly, and nothing of them leaks.
func TestHostileFiles(t *testing.T) {
	t.Setenv("REEL_SKILLS_TEST_SECRET", "s3cret-value-should-not-leak")
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := syscall.Mkfifo(mk("fifo/SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", mk("zero/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", mk("environ/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", mk("environ.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere"), mk("dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mk("dir/SKILL.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	huge := skillFile("huge", "Huge.") + strings.Repeat("x", 4096)
	writeFile(t, root, "huge/SKILL.md", huge)
	// A symbolic link to a regular skill directory is followed.
	target := t.TempDir()
	writeFile(t, target, "SKILL.md", skillFile("linked", "Linked."))
	if err := os.Symlink(target, mk("linked")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mk("pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}

	done := make(chan struct{})
	var c *Catalog
	var problems []Problem
	go func() {
		defer close(done)
		c, problems = Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}, MaxFileBytes: 1024})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discover hangs on a hostile file")
	}
	if got := names(c.Skills()); !slices.Equal(got, []string{"linked"}) {
		t.Fatalf("skills %v, want [linked]", got)
	}
	all := ""
	for _, p := range problems {
		all += p.String() + "\n"
	}
	for _, want := range []string{"fifo/SKILL.md: not a regular file", "zero/SKILL.md: not a regular file", "environ/SKILL.md: not a regular file",
		"environ.md: not a regular file", "huge/SKILL.md: larger than 1024 bytes", "dangling: cannot follow symbolic link"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "s3cret") {
		t.Fatal("a problem leaks the environment")
	}
	// Load never reads what discovery refused, and a file swapped for a
	// FIFO after discovery is refused too.
	p := filepath.Join(target, "SKILL.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	go func() { _, err := c.Load("linked"); loaded <- err }()
	select {
	case err := <-loaded:
		if !errors.Is(err, ErrUnknown) {
			t.Fatalf("Load of a swapped FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load hangs on a FIFO")
	}
}

func TestUnreadableRootIncomplete(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	root := t.TempDir()
	writeFile(t, root, "a/SKILL.md", skillFile("a", "A."))
	locked := filepath.Join(root, "a")
	if err := os.Chmod(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	c, problems := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if c.Complete() || len(problems) != 1 {
		t.Fatalf("complete %v, problems %v", c.Complete(), problems)
	}
}

func TestCancelledDiscovery(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/SKILL.md", skillFile("a", "A."))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, problems := Discover(ctx, "", Options{NoUser: true, Dirs: []string{root}})
	if c.Complete() || len(c.Skills()) != 0 || len(problems) == 0 {
		t.Fatalf("cancelled: complete %v, skills %v, problems %v", c.Complete(), c.Skills(), problems)
	}
}

// copyTree copies the directory src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// recordedWorkspace is the skill-load scenario's workspace, with the
// recorded skill names and descriptions.
func recordedWorkspace(t *testing.T) string {
	cwd := t.TempDir()
	copyTree(t, filepath.Join("testdata", "skill-load", "workspace"), cwd)
	return cwd
}

// TestRecordedCatalog: the catalog of the recorded workspace is the
// recorded message, byte for byte, with the recorded source.
func TestRecordedCatalog(t *testing.T) {
	cwd := recordedWorkspace(t)
	c, problems := Discover(context.Background(), cwd, Options{NoUser: true})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "skill-load", "catalog.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text, ok := c.Message()
	if !ok || text != string(want) {
		t.Fatalf("catalog message:\n%s\nwant:\n%s", text, want)
	}
	wantSrc, err := os.ReadFile(filepath.Join("testdata", "skill-load", "source.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Source(false).AppendJSON(nil); string(got) != string(wantSrc) {
		t.Fatalf("source:\n%s\nwant:\n%s", got, wantSrc)
	}
	if got := names(c.ModelVisible()); !slices.Equal(got, []string{"editing-cordis-compositions", "model-only-skill", "snapshot-skill"}) {
		t.Errorf("model-visible %v", got)
	}
	if got := names(c.UserVisible()); !slices.Equal(got, []string{"editing-cordis-compositions", "snapshot-skill", "user-only-skill"}) {
		t.Errorf("user-visible %v", got)
	}
	d, ok := SourceDigest(c.Source(false))
	if !ok || d != c.Digest() {
		t.Errorf("SourceDigest = %q, %v; Digest %q", d, ok, c.Digest())
	}
}

func TestCatalogEmptyAndUpdate(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "hidden/SKILL.md", "---\nname: hidden\ndescription: H.\ndisable-model-invocation: true\n---\n")
	c, _ := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if _, ok := c.Message(); ok {
		t.Fatal("a catalog with no model-visible skill is injected")
	}
	up := c.Update()
	if !strings.Contains(up, "<available_skills>\n</available_skills>") || !strings.Contains(up, "do not use skill names from earlier lists") {
		t.Errorf("empty update:\n%s", up)
	}
	if got := string(c.Source(true).AppendJSON(nil)); got != `{"kind":"skill-catalog","form":"catalog","update":true,"entries":[]}` {
		t.Errorf("update source %s", got)
	}
	writeFile(t, root, "shown/SKILL.md", skillFile("shown", "Shown <b>&</b>."))
	c2, _ := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if c2.Digest() == c.Digest() {
		t.Error("digest unchanged by a new skill")
	}
	if up := c2.Update(); !strings.Contains(up, "- `shown`: Shown &lt;b&gt;&amp;&lt;/b&gt;.\n</available_skills>") {
		t.Errorf("update:\n%s", up)
	}
	if _, ok := SourceDigest(InvocationSource("x")); ok {
		t.Error("SourceDigest accepts another kind")
	}
	if got := string(InvocationSource("shown").AppendJSON(nil)); got != `{"kind":"skill-invocation","name":"shown","form":"instructions"}` {
		t.Errorf("invocation source %s", got)
	}
}

func TestCatalogDescription(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"  a\n\tb\u00a0 c  ", 500, "a b c"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abc..."},
		{"ééééééé", 6, "ééé..."},
		{"a😀bcdefg", 6, "a😀..."}, // 😀 is two UTF-16 units
		{"ab😀cdefg", 6, "ab..."}, // the cut would split 😀: it goes whole
	}
	for _, tc := range cases {
		if got := catalogDescription(tc.in, tc.max); got != tc.want {
			t.Errorf("catalogDescription(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	long := strings.Repeat("word ", 200)
	root := t.TempDir()
	writeFile(t, root, "l/SKILL.md", skillFile("l", long))
	c, _ := Discover(context.Background(), "", Options{NoUser: true, Dirs: []string{root}})
	if e := c.Entries()[0]; len(e.Description) != 500 || !strings.HasSuffix(e.Description, "...") {
		t.Errorf("capped description has %d bytes: %q", len(e.Description), e.Description)
	}
}

func TestToolResultLayout(t *testing.T) {
	cwd := recordedWorkspace(t)
	env := &tools.Env{Cwd: cwd}
	res, err := Tool{Options: Options{NoUser: true}}.Run(context.Background(), env, json.RawMessage(`{"name":"snapshot-skill"}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cwd, ".dsh", "skills", "snapshot-skill")
	want := `<skill_content name="snapshot-skill">
<skill_resources>
Base directory for this skill: ` + dir + `
Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.
</skill_resources>

<skill_instructions>
Follow these snapshot-only instructions.
Resolve referenced resources relative to this skill directory.
</skill_instructions>
</skill_content>`
	if res.IsError || res.Text != want {
		t.Fatalf("result:\n%s\nwant:\n%s", res.Text, want)
	}
	if res.Title != "Load skill snapshot-skill" || res.Kind != tools.KindRead || len(res.Locations) != 1 || res.Locations[0].Path != filepath.Join(dir, "SKILL.md") {
		t.Errorf("result %+v", res)
	}
	// Escaping of the attribute and the directory.
	s := Skill{Name: `a"<&`, Dir: "/x/<y>&"}
	if got := Content(s, "b"); !strings.HasPrefix(got, `<skill_content name="a&quot;&lt;&amp;">`) || !strings.Contains(got, "skill: /x/&lt;y&gt;&amp;\n") {
		t.Errorf("Content escaping:\n%s", got)
	}
}

func TestToolErrors(t *testing.T) {
	cwd := recordedWorkspace(t)
	tool := Tool{Options: Options{NoUser: true}}
	cases := []struct {
		args, text string
	}{
		{`{"name":"no-such-skill"}`, `Error: skill "no-such-skill" is unknown or no longer available`},
		{`{"name":"Bad Name"}`, `Error: invalid skill name "Bad Name"`},
		{`{"name":""}`, `Error: invalid skill name ""`},
		{`{"name":"user-only-skill"}`, `Error: skill "user-only-skill" is not available for model invocation`},
	}
	for _, tc := range cases {
		res, err := tool.Run(context.Background(), &tools.Env{Cwd: cwd}, json.RawMessage(tc.args))
		if err != nil || !res.IsError || res.Text != tc.text {
			t.Errorf("Run(%s) = %q, %v, %v; want %q", tc.args, res.Text, res.IsError, err, tc.text)
		}
	}
	// The model-only skill loads through the tool.
	if res, err := tool.Run(context.Background(), &tools.Env{Cwd: cwd}, json.RawMessage(`{"name":"model-only-skill"}`)); err != nil || res.IsError {
		t.Errorf("model-only-skill: %v %+v", err, res)
	}
	badArgs := []struct{ args, has string }{
		{``, `argument "name": missing`},
		{`{}`, `argument "name": missing`},
		{`{"name":null}`, `argument "name": missing`},
		{`{"name":3}`, "want a string"},
		{`{"Name":"x"}`, "case-sensitive"},
		{`{"name":"a","name":"b"}`, "more than once"},
		{`{"name":"a","extra":1}`, `argument "extra": unknown argument`},
		{`[1]`, "want a JSON object"},
		{`{"name":`, "malformed JSON"},
	}
	for _, tc := range badArgs {
		_, err := tool.Run(context.Background(), &tools.Env{Cwd: cwd}, json.RawMessage(tc.args))
		if !errors.Is(err, tools.ErrInvalidArgs) || !strings.Contains(err.Error(), tc.has) {
			t.Errorf("Run(%s) err = %v, want ErrInvalidArgs containing %q", tc.args, err, tc.has)
		}
	}
	if title, kind, _ := tool.Describe(json.RawMessage(`{"name":"x"}`)); title != "Load skill x" || kind != tools.KindRead {
		t.Errorf("Describe = %q %q", title, kind)
	}
	if got := string(tool.Schema().Parameters); got != `{"type":"object","properties":{"name":{"type":"string","description":"The skill's exact name, as the catalog lists it."}},"required":["name"]}` {
		t.Errorf("schema %s", got)
	}
}

// TestLoad: the slash-command path.
func TestLoad(t *testing.T) {
	cwd := recordedWorkspace(t)
	c, _ := Discover(context.Background(), cwd, Options{NoUser: true})
	text, err := c.Load("user-only-skill")
	if err != nil || !strings.Contains(text, "<skill_instructions>\nFollow these user-only snapshot instructions.\n</skill_instructions>") {
		t.Fatalf("Load(user-only-skill) = %q, %v", text, err)
	}
	if _, err := c.Load("model-only-skill"); !errors.Is(err, ErrNotUserInvocable) || messageOf(err) != `skill "model-only-skill" is not available for user invocation` {
		t.Errorf("Load(model-only-skill) err = %v", err)
	}
	if _, err := c.Load("nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Load(nope) err = %v", err)
	}
	if _, err := c.Load("../x"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Load(../x) err = %v", err)
	}
	// The body is read again at each load; a renamed skill is gone; a
	// skill that turned user-disabled is refused.
	p := filepath.Join(cwd, ".dsh", "skills", "snapshot-skill", "SKILL.md")
	writeFile(t, filepath.Dir(p), "SKILL.md", "---\nname: snapshot-skill\ndescription: D\n---\nNew body.\n")
	if text, err := c.Load("snapshot-skill"); err != nil || !strings.Contains(text, "\nNew body.\n") {
		t.Errorf("reload = %q, %v", text, err)
	}
	writeFile(t, filepath.Dir(p), "SKILL.md", "---\nname: snapshot-skill\ndescription: D\nuser-invocable: false\n---\nx\n")
	if _, err := c.Load("snapshot-skill"); !errors.Is(err, ErrNotUserInvocable) {
		t.Errorf("turned user-disabled: %v", err)
	}
	writeFile(t, filepath.Dir(p), "SKILL.md", skillFile("renamed", "D"))
	if _, err := c.Load("snapshot-skill"); !errors.Is(err, ErrUnknown) {
		t.Errorf("renamed: %v", err)
	}
}

func TestInvokedNames(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"/snapshot-skill do it", []string{"snapshot-skill"}},
		{"please /a-b and /c\n/a-b again", []string{"a-b", "c"}},
		{"/usr/bin 5/8 //x /Bad /x/ x/y", nil},
		{"tab\t/ok\u00a0/nbsp", []string{"ok", "nbsp"}},
	}
	for _, tc := range cases {
		if got := InvokedNames(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("InvokedNames(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
