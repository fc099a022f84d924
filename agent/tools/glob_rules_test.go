package tools

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestGlobRules checks the reference agent's glob rules over the tree of
// the fs-glob-sampling scenario: basenames at any depth, anchored
// patterns, modification-time order, the cap and the sampled footer.
func TestGlobRules(t *testing.T) {
	env := newEnv(t)
	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	files := []string{"archive/a.ts", "archive/b.ts", "archive/c.ts", "docs/guide.md", "src/index.ts", "test/spec.ts", "top.txt", "notes.md"}
	for i, f := range files {
		p := writeFile(t, env.Cwd, "tree/"+f, "fixture\n")
		mt := base.Add(time.Duration(i+1) * time.Millisecond)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	const unsaved = "The complete result could not be saved; narrow pattern or path to see more."
	all := "tree/" + strings.Join(files, "\ntree/")
	tests := []struct {
		name   string
		args   map[string]any
		max    int
		sample bool
		want   string
	}{
		{"star is every file", map[string]any{"pattern": "*", "path": "tree"}, 0, false, all},
		{"basename at any depth", map[string]any{"pattern": "*.ts", "path": "tree"}, 0, false,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\ntree/src/index.ts\ntree/test/spec.ts"},
		{"anchored one level", map[string]any{"pattern": "*/*.ts", "path": "tree"}, 0, false,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\ntree/src/index.ts\ntree/test/spec.ts"},
		{"anchored to the path", map[string]any{"pattern": "src/*", "path": "tree"}, 0, false, "tree/src/index.ts"},
		{"anchored misses deeper", map[string]any{"pattern": "tree/*.md"}, 0, false, "tree/notes.md"},
		{"within the cap", map[string]any{"pattern": "*", "path": "tree"}, 8, true, all},
		{"cap takes the oldest", map[string]any{"pattern": "*", "path": "tree"}, 4, false,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\ntree/docs/guide.md\n\n(Showing 4 of 8 paths. " + unsaved + ")"},
		{"sampled like the corpus", map[string]any{"pattern": "*", "path": "tree"}, 4, true,
			"tree/archive/a.ts\ntree/docs/guide.md\ntree/src/index.ts\ntree/test/spec.ts\n\n(Showing 4 of 8 paths, sampled across 4 of the 6 top-level entries " +
				"this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. " + unsaved + ")"},
		{"sampled second round", map[string]any{"pattern": "*", "path": "tree"}, 7, true,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/docs/guide.md\ntree/src/index.ts\ntree/test/spec.ts\ntree/top.txt\ntree/notes.md\n\n(Showing 7 of 8 paths, " +
				"sampled across 6 of the 6 top-level entries this pattern matched instead of taken in modification-time order. " + unsaved + ")"},
		{"flat sample is the head", map[string]any{"pattern": "archive/*", "path": "tree"}, 2, true,
			"tree/archive/a.ts\ntree/archive/b.ts\n\n(Showing 2 of 3 paths, sampled across 1 of the 1 top-level entries this pattern matched instead of taken in modification-time order. " + unsaved + ")"},
		{"one path per entry keeps the plain footer", map[string]any{"pattern": "*", "path": "tree/archive"}, 2, true,
			"tree/archive/a.ts\ntree/archive/b.ts\n\n(Showing 2 of 3 paths. " + unsaved + ")"},
		{"empty", map[string]any{"pattern": "*.rs", "path": "tree"}, 0, false, "No files found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := *env
			// No spill store, as the reference suite's fs-search overlay.
			e.GlobMaxResults, e.GlobSample, e.GlobNoSpill = tc.max, tc.sample, true
			res, err := Glob{}.Run(context.Background(), &e, mustJSON(t, tc.args))
			if err != nil || res.IsError {
				t.Fatalf("%+v, %v", res, err)
			}
			if res.Text != tc.want {
				t.Fatalf("text\n%s\nwant\n%s", res.Text, tc.want)
			}
		})
	}
}

// TestSamplePage checks the round-robin: every top-level entry gets a
// slot before any gets a second, and exhausted entries drop out.
func TestSamplePage(t *testing.T) {
	var hits []globHit
	for _, p := range []string{"a/1", "a/2", "a/3", "a/4", "b/1", "c/1", "c/2"} {
		top, _, _ := strings.Cut(p, "/")
		hits = append(hits, globHit{path: p, top: top})
	}
	tests := []struct {
		n            int
		want         string
		shown, total int
	}{
		{1, "a/1", 1, 3},
		{3, "a/1 b/1 c/1", 3, 3},
		{5, "a/1 a/2 b/1 c/1 c/2", 3, 3},
		{6, "a/1 a/2 a/3 b/1 c/1 c/2", 3, 3},
		{7, "a/1 a/2 a/3 a/4 b/1 c/1 c/2", 3, 3},
		{9, "a/1 a/2 a/3 a/4 b/1 c/1 c/2", 3, 3},
	}
	for _, tc := range tests {
		p := samplePage(hits, tc.n)
		if got := strings.Join(p.items, " "); got != tc.want || p.shown != tc.shown || p.total != tc.total {
			t.Errorf("samplePage(%d) = %q %d/%d, want %q %d/%d", tc.n, got, p.shown, p.total, tc.want, tc.shown, tc.total)
		}
	}
}

// TestFormatGlob checks the footers, the recovery sentence and the byte
// bound on the page.
func TestFormatGlob(t *testing.T) {
	var hits []globHit
	for i := range 6 {
		hits = append(hits, globHit{path: fmt.Sprintf("d%d/%s", i%2, strings.Repeat("x", 10)), top: fmt.Sprintf("d%d", i%2)})
	}
	sortGlobHits(hits)
	tests := []struct {
		name      string
		max       int
		sample    bool
		maxBytes  int
		spillPath string
		wantFoot  string
		wantLines int
	}{
		{"saved", 2, false, 1000, "/s/glob.txt", "(Showing 2 of 6 paths. Full sorted result stored at: /s/glob.txt. Use read with offset/limit, or grep this path to search within it.)", 2},
		{"bytes bound the head", 5, false, 30, "", "(Showing 2 of 6 paths. The complete result could not be saved; narrow pattern or path to see more.)", 2},
		{"bytes bound the sample", 5, true, 30, "", "(Showing 2 of 6 paths, sampled across 2 of the 2 top-level entries this pattern matched instead of taken in modification-time order. " +
			"The complete result could not be saved; narrow pattern or path to see more.)", 2},
		{"bytes bound a result within the cap", 10, false, 30, "", "(Showing 2 of 6 paths. The complete result could not be saved; narrow pattern or path to see more.)", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := formatGlob(hits, tc.max, tc.sample, tc.maxBytes, tc.spillPath)
			body, foot, _ := strings.Cut(text, "\n\n")
			if foot != tc.wantFoot || len(strings.Split(body, "\n")) != tc.wantLines {
				t.Fatalf("text\n%s\nwant %d lines and footer\n%s", text, tc.wantLines, tc.wantFoot)
			}
		})
	}
}

// TestGlobMaxResultsBound checks that GlobMaxResults defaults and never
// passes MaxListEntries.
func TestGlobMaxResultsBound(t *testing.T) {
	for in, want := range map[int]int{0: DefaultGlobMaxResults, -3: DefaultGlobMaxResults, 4: 4, MaxListEntries + 1: MaxListEntries} {
		if got := (&Env{GlobMaxResults: in}).globMaxResults(); got != want {
			t.Errorf("globMaxResults(%d) = %d, want %d", in, got, want)
		}
	}
}
