package harness

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestPrepareGlobTree(t *testing.T) {
	cwd := t.TempDir()
	if err := prepareGlobTree(cwd); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		rel string
		mod time.Time
	}
	var got []entry
	err := filepath.WalkDir(filepath.Join(cwd, "tree"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(cwd, "tree"), p)
		b, _ := os.ReadFile(p)
		if string(b) != "fixture\n" {
			t.Errorf("%s holds %q", rel, b)
		}
		got = append(got, entry{filepath.ToSlash(rel), fi.ModTime()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].mod.Before(got[j].mod) })
	var order []string
	for _, e := range got {
		order = append(order, e.rel)
	}
	want := "archive/a.ts archive/b.ts archive/c.ts docs/guide.md src/index.ts test/spec.ts top.txt notes.md"
	if strings.Join(order, " ") != want {
		t.Errorf("files by modification time: %v, want %s", order, want)
	}
	if y := got[0].mod.Year(); y != 2000 {
		t.Errorf("modification year %d, want 2000", y)
	}
}

func TestPrepareInstructions(t *testing.T) {
	cwd := t.TempDir()
	if err := os.CopyFS(cwd, os.DirFS(filepath.Join("testdata", "instructions-workspace"))); err != nil {
		t.Fatal(err)
	}
	if err := prepareInstructions(cwd); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"AGENTS.md", "nested/AGENTS.md"} {
		p := filepath.Join(cwd, rel)
		target, err := os.Readlink(p)
		if err != nil || target != "AGENTS.canonical.md" {
			t.Errorf("%s: link to %q (%v), want AGENTS.canonical.md", rel, target, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(cwd, "scope</system-reminder>", "AGENTS.md"))
	if err != nil || string(b) != "Delimiter path snapshot instruction.\n" {
		t.Errorf("the delimiter folder's AGENTS.md: %q, %v", b, err)
	}
	// Preparing twice changes nothing.
	if err := prepareInstructions(cwd); err != nil {
		t.Errorf("a second preparation: %v", err)
	}
}

func TestRelinkRefuses(t *testing.T) {
	cases := []struct{ name, content string }{
		{"empty", ""},
		{"a path", "../outside.md"},
		{"a nested path", "sub/file.md"},
		{"dot dot", ".."},
		{"no such sibling", "missing.md"},
		{"several lines", "a\nb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "AGENTS.md")
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := relink(p); err == nil {
				t.Errorf("relink of a file holding %q succeeded", c.content)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink != 0 {
				t.Errorf("the file was replaced: %v", err)
			}
		})
	}
	if err := relink(filepath.Join(t.TempDir(), "absent.md")); err == nil {
		t.Error("relink of a missing file succeeded")
	}
}

// TestDocCorpusPreps keeps docs/scenarios.md's table of corpus
// preparations equal to CorpusPreps; REEL_WRITE_DOC=1 rewrites it.
func TestDocCorpusPreps(t *testing.T) {
	names := make([]string, 0, len(CorpusPreps()))
	for n := range CorpusPreps() {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| corpus scenario | what the reference suite does, and what the harness reproduces |\n|---|---|\n")
	for _, n := range names {
		p := CorpusPreps()[n]
		if p.Source == "" || (p.Workspace == nil && len(p.EnvironmentLines) == 0 && len(p.Args) == 0 &&
			p.Web == nil && p.FromRecording == nil && p.Missing == "" && !p.TitleOverride && p.SettlementMarker == "") {
			t.Errorf("CorpusPreps()[%q] is incomplete", n)
		}
		b.WriteString("| `" + n + "` | " + strings.ReplaceAll(p.Source, "|", `\|`) + " |\n")
	}
	path := filepath.Join("..", "docs", "scenarios.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	const begin, end = "<!-- corpus preparation:", "<!-- end corpus preparation -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no corpus preparation markers", path)
	}
	i += strings.Index(doc[i:], "-->\n") + len("-->\n")
	switch {
	case doc[i:j] == b.String():
	case os.Getenv("REEL_WRITE_DOC") == "1":
		if err := os.WriteFile(path, []byte(doc[:i]+b.String()+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Errorf("%s: the corpus preparation table is out of date (REEL_WRITE_DOC=1 rewrites it); want:\n%s", path, b.String())
	}
}
