package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGrepRefusesSpecialPaths: grep with path a device, a FIFO or a socket
// returns at once with an error naming it; nothing is read.
func TestGrepRefusesSpecialPaths(t *testing.T) {
	env := newEnv(t)
	sp := specialFiles(t, env.Cwd)
	for _, tc := range []struct{ name, path, kind string }{
		{"/dev/zero", "/dev/zero", "a character device"},
		{"/dev/urandom", "/dev/urandom", "a character device"},
		{"fifo", sp["fifo"], "a named pipe (FIFO)"},
		{"link to fifo", sp["link to fifo"], "a named pipe (FIFO)"},
		{"socket", sp["socket"], "a socket"},
		{"link to /dev/zero", sp["link to /dev/zero"], "a character device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{GrepFilesWithMatches, GrepContent, GrepCount} {
				res, err := noHang(t, "grep "+tc.path, func() (Result, error) {
					return Grep{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "x", "path": tc.path, "output_mode": mode}))
				})
				want := tc.path + " is " + tc.kind + ", not a regular file or a directory; grep searches regular files and directories only"
				if err != nil || !res.IsError || res.Text != want {
					t.Fatalf("%s: %+v, %v; want the error %q", mode, res, err, want)
				}
			}
		})
	}
}

// TestSearchSkipsSpecialFilesInTree: grep and glob over a tree holding a
// FIFO, a socket, links to a FIFO and to /dev/zero, and symbolic link loops
// return; grep searches only the regular files, glob lists the entries
// without descending through any link.
func TestSearchSkipsSpecialFilesInTree(t *testing.T) {
	env := newEnv(t)
	specialFiles(t, env.Cwd)
	writeFile(t, env.Cwd, "x.txt", "a needle\n")
	writeFile(t, env.Cwd, "sub/y.txt", "needle again\n")
	for _, l := range [][2]string{{".", "loop"}, {"sub", "sub/up"}, {"b", "a"}, {"a", "b"}, {"..", "sub/parent"}} {
		if err := os.Symlink(l[0], filepath.Join(env.Cwd, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	res, err := noHang(t, "grep", func() (Result, error) {
		return Grep{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "needle", "output_mode": "content"}))
	})
	if err != nil || res.Text != "sub/y.txt:1:needle again\nx.txt:1:a needle" {
		t.Fatalf("grep: %q, %v", res.Text, err)
	}
	res, err = noHang(t, "glob", func() (Result, error) {
		return Glob{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": "**"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(res.Text, "\n")
	slices.Sort(got)
	want := []string{"a", "b", "loop", "pipe", "pipelink", "sock", "sub/parent", "sub/up", "sub/y.txt", "x.txt", "zerolink"}
	if !slices.Equal(got, want) {
		t.Fatalf("glob ** listed %q, want %q", got, want)
	}
}

// oldGrep is grep's search before it streamed: whole files in memory,
// filepath.WalkDir, line by line. The streaming search must give the same
// results whenever no bound is reached.
func oldGrep(root string, re *regexp.Regexp, mode string) string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		var lines []string
		if len(data) > 0 {
			lines = strings.Split(strings.TrimSuffix(strings.ToValidUTF8(string(data), "\uFFFD"), "\n"), "\n")
		}
		count := 0
		for i, l := range lines {
			l = strings.TrimSuffix(l, "\r")
			if !re.MatchString(l) {
				continue
			}
			count++
			switch mode {
			case GrepFilesWithMatches:
				out = append(out, rel)
				return nil
			case GrepContent:
				out = append(out, fmt.Sprintf("%s:%d:%s", rel, i+1, cutLine(l)))
			}
		}
		if mode == GrepCount && count > 0 {
			out = append(out, fmt.Sprintf("%s:%d", rel, count))
		}
		return nil
	})
	if len(out) == 0 {
		return "No matches found"
	}
	return strings.Join(out, "\n")
}

// TestGrepMatchesOldSearch compares the streaming search (tiny buffers,
// the block pre-filter) with the whole-file search on random trees and
// patterns, anchors and word boundaries included.
func TestGrepMatchesOldSearch(t *testing.T) {
	patterns := []string{"a", "ab", "^a", "a$", `\Aa`, `a\z`, `^$`, `\bxyz\b`, `\Bb`, "(?i)AB", `a\s*b`, `[^b]b`, "(?s)a.b",
		"é", `\x{FFFD}`, "xyz|^b", "a+$", `b\r`, "ab(c|$)", `^\w+$`,
		"(?i)XYZ", `\w+xyz`, "x(?i:YZ)", "(?i)kx", "(?i)xk", `(ab)+x`, "(?:ab){2,}", `\bab\b`, "(?i)b xyz\b", "[xq]y(?:abab)*", `\s?z(?:xyzxyz)?`}
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "b", "ab", "xyz", " ", "\n", "é", "\n\n", "K", "\u212a", "XYZ", "k", "\r\n", "\r", "\xff", "\xe2\x82"}
	type grepCase struct {
		env    *Env
		bounds searchBounds
	}
	var cases []grepCase
	for i := range 150 {
		dir := t.TempDir()
		// Half the trees are valid UTF-8 without "\r": the pre-filter's case.
		kinds := len(pieces) - 4*(i%2)
		for f := range 1 + r.IntN(4) {
			var b strings.Builder
			for range r.IntN(300) {
				b.WriteString(pieces[r.IntN(kinds)])
			}
			writeFile(t, dir, fmt.Sprintf("d%d/f%d.txt", f%2, f), b.String())
		}
		env := &Env{Cwd: dir, SpillDir: t.TempDir()}
		bounds := defaultSearchBounds()
		bounds.buf = []int{8, 16, 100, readChunkBytes}[r.IntN(4)]
		cases = append(cases, grepCase{env, bounds})
	}
	// The trees are drawn in order from one seeded source, then searched
	// in parallel shards (the searches are the slow part under -race).
	compiled := make([]*regexp.Regexp, len(patterns))
	for i, pat := range patterns {
		compiled[i] = regexp.MustCompile(pat)
	}
	const shards = 8
	for s := range shards {
		t.Run(fmt.Sprintf("shard %d", s), func(t *testing.T) {
			t.Parallel()
			for i := s; i < len(cases); i += shards {
				env, bounds := cases[i].env, cases[i].bounds
				for p, pat := range patterns {
					for _, mode := range []string{GrepFilesWithMatches, GrepContent, GrepCount} {
						res, err := runGrep(context.Background(), env, mustJSON(t, map[string]any{"pattern": pat, "output_mode": mode}), bounds)
						if err != nil {
							t.Fatal(err)
						}
						if want := oldGrep(env.Cwd, compiled[p], mode); res.Text != want {
							t.Fatalf("case %d, pattern %q, mode %s, buffer %d:\ngot  %q\nwant %q", i, pat, mode, bounds.buf, res.Text, want)
						}
					}
				}
			}
		})
	}
}

// TestSearchBounds: each bound of grep and glob stops the search where it
// should, and the result names the bound and how to narrow the search.
func TestSearchBounds(t *testing.T) {
	env := newEnv(t)
	for i := range 30 {
		writeFile(t, env.Cwd, fmt.Sprintf("many/f%02d.txt", i), "hit\n")
	}
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "hit %03d\n", i)
	}
	writeFile(t, env.Cwd, "big/big.txt", b.String())
	writeFile(t, env.Cwd, "big/small.txt", "hit\n")
	writeFile(t, env.Cwd, "long/l.txt", "hit"+strings.Repeat("x", 200)+"tail\n"+strings.Repeat("y", 200)+"tail\n")
	small := func(f func(*searchBounds)) searchBounds { b := defaultSearchBounds(); f(&b); return b }
	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		b      searchBounds
		prefix string
		note   string
	}{
		{"grep: entries", "grep", map[string]any{"pattern": "hit", "path": "many"}, small(func(b *searchBounds) { b.entries = 10 }),
			"many/f", "\n\n(grep stopped after visiting 10 files and directories, the most it visits in one call: the rest of the tree was not searched. Narrow the path or glob to search it.)"},
		{"grep: results", "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "content"}, small(func(b *searchBounds) { b.results = 5 }),
			"big/big.txt:1:hit 000\nbig/big.txt:2:hit 001\nbig/big.txt:3:hit 002\nbig/big.txt:4:hit 003\nbig/big.txt:5:hit 004\n\n(grep stopped at 5 results",
			"it collects at most 5 results or 8388608 bytes in one call, so there may be more. Narrow the pattern, path or glob to see the rest.)"},
		{"grep: result bytes", "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "content"}, small(func(b *searchBounds) { b.resultBytes = 40 }),
			"big/big.txt:1:hit 000\n\n(grep stopped at 1 results (22 bytes)", "at most 100000 results or 40 bytes in one call, so there may be more. Narrow the pattern, path or glob to see the rest.)"},
		{"grep: file bytes", "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "count"}, small(func(b *searchBounds) { b.fileBytes = 80 }),
			"big/big.txt:10\nbig/small.txt:1\n\n(1 files were searched only in their first 80 bytes, the most grep reads of one file: big/big.txt. Use bash to search the rest of them.)", ""},
		{"grep: file bytes, cut inside a line", "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "content"}, small(func(b *searchBounds) { b.fileBytes = 12 }),
			"big/big.txt:1:hit 000\nbig/big.txt:2:hit \nbig/small.txt:1:hit\n\n(1 files were searched only in their first 12 bytes, the most grep reads of one file: big/big.txt. Use bash to search the rest of them.)", ""},
		{"grep: total bytes", "grep", map[string]any{"pattern": "hit", "path": "big", "output_mode": "count"}, small(func(b *searchBounds) { b.totalBytes = 800 }),
			"big/big.txt:100\n\n(grep stopped after reading 800 bytes, the most it reads in one call: later files were not searched. Narrow the path or glob to search them.)", ""},
		{"grep: long lines", "grep", map[string]any{"pattern": "hit|tail", "path": "long", "output_mode": "content"}, small(func(b *searchBounds) { b.lineBytes, b.buf = 64, 16 }),
			"long/l.txt:1:hit" + strings.Repeat("x", 200) + "tail\n\n(2 lines longer than 64 bytes were matched in their first 64 bytes only.)", ""},
		{"glob: entries", "glob", map[string]any{"pattern": "**/*.txt", "path": "many"}, small(func(b *searchBounds) { b.entries = 10 }),
			"many/f", "\n\n(glob stopped after visiting 10 files and directories, the most it visits in one call: the rest of the tree was not searched. Narrow the pattern or path to search it.)"},
		{"glob: results", "glob", map[string]any{"pattern": "**/*.txt", "path": "many"}, small(func(b *searchBounds) { b.results = 3 }),
			"many/f", "\n\n(glob stopped at 3 matching files, the most it collects in one call, so there are more, and the modification-time order is among these only. Narrow the pattern or path to see the rest.)"},
		{"glob: no match within the entries", "glob", map[string]any{"pattern": "**/*.go"}, small(func(b *searchBounds) { b.entries = 3 }),
			"No files found", "\n\n(glob stopped after visiting 3 files and directories"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := runGrep
			if tc.tool == "glob" {
				run = runGlob
			}
			res, err := run(context.Background(), env, mustJSON(t, tc.args), tc.b)
			if err != nil || res.IsError {
				t.Fatalf("%+v, %v", res, err)
			}
			if !strings.HasPrefix(res.Text, tc.prefix) || !strings.Contains(res.Text, tc.note) {
				t.Fatalf("text\n%s\nwant prefix\n%s\nand\n%s", res.Text, tc.prefix, tc.note)
			}
		})
	}
}

// TestGrepCancelMidScan: a cancel in the middle of one large file, or of a
// walk, ends grep with ctx's error (not with the results so far).
func TestGrepCancelMidScan(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env.Cwd, "big.txt", strings.Repeat("a\n", 16<<20))
	for i := range 200 {
		writeFile(t, env.Cwd, fmt.Sprintf("tree/f%03d.txt", i), "a\n")
	}
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"within a file", map[string]any{"pattern": "b", "path": "big.txt", "output_mode": "content"}},
		{"within a file, files_with_matches", map[string]any{"pattern": "^b", "path": "big.txt"}},
		{"between files", map[string]any{"pattern": "b", "path": "tree"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := &flippingCtx{Context: context.Background(), after: 20}
			_, err := Grep{}.Run(ctx, env, mustJSON(t, tc.args))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
		})
	}
}

// TestGrepMemoryBounded: content-mode grep over a 24 MiB one-line file and
// a 20 MiB file of short lines allocates a few buffers, not the files.
func TestGrepMemoryBounded(t *testing.T) {
	env := newEnv(t)
	f, err := os.Create(filepath.Join(env.Cwd, "oneline.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// 24 MiB in one line and 20 MiB of lines: each file is more than the
	// 16 MiB bound, so holding either whole (or allocating afresh for
	// each block read) fails; REEL_SOAK=1 runs 50 MiB and 40 MiB (7 CPU-s
	// under -race -cover, where every block of the scan costs atomic
	// coverage counts).
	mib, lines := 24, 1<<20
	if os.Getenv("REEL_SOAK") == "1" {
		mib, lines = 50, 2<<20
	}
	chunk := []byte(strings.Repeat("abcdefgh", 1<<17))
	for range mib {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, env.Cwd, "lines.txt", strings.Repeat("the quick brown fox\n", lines))
	for _, pat := range []string{"abc", "zzz", "(?i)QUICK BROWN dog"} {
		var res Result
		var err error
		alloc := allocated(func() {
			res, err = Grep{}.Run(context.Background(), env, mustJSON(t, map[string]any{"pattern": pat, "output_mode": "content"}))
		})
		if err != nil {
			t.Fatal(err)
		}
		if limit := uint64(16 << 20); alloc > limit {
			t.Errorf("grep %q allocated %d bytes, want at most %d; result %.200q", pat, alloc, limit, res.Text)
		}
	}
}

// BenchmarkGrepTree greps a generated tree of 400 files of 128 KiB (50 MiB)
// in content mode, for a literal and for a case-insensitive pattern.
func BenchmarkGrepTree(b *testing.B) {
	dir := b.TempDir()
	var buf bytes.Buffer
	for i := 0; buf.Len() < 128<<10; i++ {
		fmt.Fprintf(&buf, "func f%d(x int) int { return x * %d } // the quick brown fox\n", i, i)
	}
	for i := range 400 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%20), fmt.Sprintf("f%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := &Env{Cwd: dir, SpillDir: filepath.Join(b.TempDir(), "spill")}
	for _, pat := range []string{"lazy dog", "(?i)LAZY DOG"} {
		raw, _ := json.Marshal(map[string]any{"pattern": pat, "output_mode": "content"})
		b.Run(pat, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(400 * int64(buf.Len()))
			for b.Loop() {
				if res, err := (Grep{}).Run(context.Background(), env, raw); err != nil || res.Text != "No matches found" {
					b.Fatal(res.Text, err)
				}
			}
		})
	}
}
