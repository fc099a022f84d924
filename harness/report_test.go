package harness

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	cases := []struct {
		in      string
		want    Shard
		wantErr string // fragment of the error; "" for success
	}{
		{"1/1", Shard{1, 1}, ""},
		{"2/4", Shard{2, 4}, ""},
		{"4/4", Shard{4, 4}, ""},
		{" 3 / 8 ", Shard{3, 8}, ""},
		{"0/4", Shard{}, "K must be between 1 and N (4)"},
		{"5/4", Shard{}, "K must be between 1 and N (4)"},
		{"-1/4", Shard{}, "K must be between 1 and N"},
		{"1/0", Shard{}, "N must be at least 1"},
		{"1/-2", Shard{}, "N must be at least 1"},
		{"2", Shard{}, "want K/N"},
		{"", Shard{}, "want K/N"},
		{"a/4", Shard{}, "must be integers"},
		{"1/b", Shard{}, "must be integers"},
		{"1/2/3", Shard{}, "must be integers"},
		{"1.5/2", Shard{}, "must be integers"},
	}
	for _, c := range cases {
		got, err := ParseShard(c.in)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("ParseShard(%q) = %v, want %v", c.in, err, c.want)
		case c.wantErr == "" && got != c.want:
			t.Errorf("ParseShard(%q) = %v, want %v", c.in, got, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("ParseShard(%q) = %v, %v; want an error containing %q", c.in, got, err, c.wantErr)
		case c.wantErr != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", c.in)):
			t.Errorf("ParseShard(%q) error %q does not name the value", c.in, err)
		}
	}
}

// TestShardsPartition checks that for every N the shards 1/N … N/N select
// each scenario exactly once, both for names alone and through
// Suite.Scenarios on a fixtures folder, and that the assignment is stable.
func TestShardsPartition(t *testing.T) {
	names := []string{"approval-never", "cancel", "text-turn", "two-sessions", "x"}
	for i := range 300 {
		names = append(names, fmt.Sprintf("scenario-%03d", i))
	}
	for n := 1; n <= 9; n++ {
		sizes := make([]int, n)
		for _, name := range names {
			owners := 0
			for k := 1; k <= n; k++ {
				if (Shard{k, n}).Has(name) {
					owners++
					sizes[k-1]++
				}
			}
			if owners != 1 {
				t.Fatalf("N=%d: %q belongs to %d shards, want exactly 1", n, name, owners)
			}
		}
		for k, size := range sizes {
			if n > 1 && size == 0 {
				t.Errorf("N=%d: shard %d of %d scenarios is empty (the hash does not spread)", n, k+1, len(names))
			}
		}
	}
	// Stable: the assignment is a function of the name alone (FNV-1a).
	if got := (Shard{2, 3}).Has("text-turn"); got != (Shard{2, 3}).Has("text-turn") {
		t.Fatal("shard assignment is not deterministic")
	}
	if !(Shard{}).Has("anything") || !(Shard{1, 1}).Has("anything") {
		t.Error("the zero shard and 1/1 must select everything")
	}

	fixtures := t.TempDir()
	for _, name := range names[:40] {
		writeTestFile(t, filepath.Join(fixtures, name, "input.json"), `{"steps":[{"op":"initialize"}]}`)
	}
	all, err := (&Suite{Fixtures: fixtures}).Scenarios()
	if err != nil || len(all) != 40 {
		t.Fatalf("Scenarios() = %d, %v; want 40", len(all), err)
	}
	for n := 1; n <= 5; n++ {
		var union []string
		for k := 1; k <= n; k++ {
			part, err := (&Suite{Fixtures: fixtures, Shard: Shard{k, n}}).Scenarios()
			if err != nil {
				t.Fatal(err)
			}
			union = append(union, part...)
		}
		slices.Sort(union)
		if !slices.Equal(union, all) {
			t.Errorf("N=%d: the shards' union (%d) is not the scenario set (%d) exactly", n, len(union), len(all))
		}
	}
}

func TestGroupFailures(t *testing.T) {
	promptDiff := "system prompt: snapshots/prompts/p_1.snap.md differs:\n@@ line 3 @@\n- old\n+ new\n"
	cases := []struct {
		name    string
		results []Result
		want    []FailureGroup
	}{
		{"none", []Result{{Name: "a"}, {Name: "b"}}, nil},
		{"one prompt diff in three scenarios", []Result{
			{Name: "a", Failures: []string{promptDiff}},
			{Name: "b"},
			{Name: "c", Failures: []string{promptDiff}},
			{Name: "d", Failures: []string{promptDiff}},
		}, []FailureGroup{{Text: promptDiff, Scenarios: []string{"a", "c", "d"}}}},
		{"log diffs differing only by scenario and seq", []Result{
			{Name: "a", Failures: []string{"a/session.jsonl: seq 3 (request): data.tools: expected 1, got 2"}},
			{Name: "b", Failures: []string{"b/session.jsonl: seq 7 (request): data.tools: expected 1, got 2"}},
		}, []FailureGroup{{Text: "<scenario>/session.jsonl: seq N (request): data.tools: expected 1, got 2", Scenarios: []string{"a", "b"}}}},
		{"different causes stay apart, in order of appearance", []Result{
			{Name: "a", Failures: []string{"transcript: snapshots/transcripts/a_1.snap.jsonl differs:\n- x\n+ y", promptDiff}},
			{Name: "b", Failures: []string{promptDiff, "transcript: snapshots/transcripts/b_1.snap.jsonl differs:\n- p\n+ q"}},
		}, []FailureGroup{
			{Text: "transcript: snapshots/transcripts/a_1.snap.jsonl differs:\n- x\n+ y", Scenarios: []string{"a"}},
			{Text: promptDiff, Scenarios: []string{"a", "b"}},
			{Text: "transcript: snapshots/transcripts/b_1.snap.jsonl differs:\n- p\n+ q", Scenarios: []string{"b"}},
		}},
		{"a broken binary fails every scenario the same way", []Result{
			{Name: "a", Failures: []string{"a: start /x/reel: no such file or directory"}},
			{Name: "b", Failures: []string{"b: start /x/reel: no such file or directory"}},
		}, []FailureGroup{{Text: "<scenario>: start /x/reel: no such file or directory", Scenarios: []string{"a", "b"}}}},
		{"a name inside a word is left alone", []Result{
			{Name: "a", Failures: []string{"a: data: x"}},
			{Name: "b", Failures: []string{"b: data: y"}},
		}, []FailureGroup{{Text: "a: data: x", Scenarios: []string{"a"}}, {Text: "b: data: y", Scenarios: []string{"b"}}}},
		{"one scenario with the same cause twice is listed once", []Result{
			{Name: "a", Failures: []string{"a/session.jsonl: seq 1 (x): y", "a/session.jsonl: seq 2 (x): y"}},
		}, []FailureGroup{{Text: "a/session.jsonl: seq 1 (x): y", Scenarios: []string{"a"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := GroupFailures(c.results)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("GroupFailures:\n got  %q\n want %q", got, c.want)
			}
		})
	}

	var out bytes.Buffer
	printFailures(&out, []Result{{Name: "a", Failures: []string{promptDiff}}, {Name: "b", Failures: []string{promptDiff}}, {Name: "c", Failures: []string{"boom"}}})
	want := "\n--- FAIL 2 scenarios, one cause\n" + promptDiff + "affects 2 scenarios: a, b\n\n--- FAIL c\nboom\n"
	if out.String() != want {
		t.Errorf("printFailures:\n got  %q\n want %q", out.String(), want)
	}
	if n := strings.Count(out.String(), "@@ line 3 @@"); n != 1 {
		t.Errorf("the shared diff is printed %d times, want once", n)
	}
}

func TestRefreshCommand(t *testing.T) {
	cases := []struct {
		run, fixtures, snapshots, want string
	}{
		{"", "fixtures", "snapshots", "go run ./cmd/reel snapshot --refresh"},
		{"text-turn", "fixtures", "snapshots", "go run ./cmd/reel snapshot --refresh -run text-turn"},
		{"turn|cancel", "fixtures", "snapshots", "go run ./cmd/reel snapshot --refresh -run 'turn|cancel'"},
		{"it's", "fixtures", "snapshots", `go run ./cmd/reel snapshot --refresh -run 'it'\''s'`},
		{"", "/tmp/fx", "/tmp/s s", "go run ./cmd/reel snapshot --refresh --fixtures /tmp/fx --snapshots '/tmp/s s'"},
	}
	for _, c := range cases {
		if got := refreshCommand(c.run, c.fixtures, c.snapshots); got != c.want {
			t.Errorf("refreshCommand(%q, %q, %q) = %q, want %q", c.run, c.fixtures, c.snapshots, got, c.want)
		}
	}
}

// parsedSuite is the JUnit document as a CI system reads it.
type parsedSuite struct {
	XMLName  xml.Name `xml:"testsuite"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Time     float64  `xml:"time,attr"`
	Cases    []struct {
		Name      string  `xml:"name,attr"`
		Classname string  `xml:"classname,attr"`
		Time      float64 `xml:"time,attr"`
		Failure   *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
	} `xml:"testcase"`
}

func TestJUnit(t *testing.T) {
	diff := "system prompt: p_1.snap.md differs:\n@@ line 1 @@\n- <old> & \"x\" ]]> y\n+ new\x1b[0m\n"
	results := []Result{
		{Name: "a", Wall: 1500 * time.Millisecond},
		{Name: "b", Wall: 20 * time.Millisecond, Failures: []string{diff, "transcript: differs"}},
		{Name: "c"},
	}
	cases := []struct {
		name         string
		guard        []string
		guarded      bool
		wantTests    int
		wantFailures int
	}{
		{"guard not checked", nil, false, 3, 1},
		{"guard checked, clean", nil, true, 4, 1},
		{"guard problems", []string{"fx/orphan: orphan scenario folder"}, true, 4, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out", "junit.xml")
			if err := WriteJUnit(path, results, c.guard, c.guarded, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var s parsedSuite
			if err := xml.Unmarshal(raw, &s); err != nil {
				t.Fatalf("the report is not XML a CI system can read: %v\n%s", err, raw)
			}
			if s.Name != "reel snapshot" || s.Tests != c.wantTests || s.Failures != c.wantFailures || len(s.Cases) != c.wantTests || s.Time != 2 {
				t.Fatalf("testsuite %q tests=%d failures=%d cases=%d time=%v; want tests=%d failures=%d time=2\n%s",
					s.Name, s.Tests, s.Failures, len(s.Cases), s.Time, c.wantTests, c.wantFailures, raw)
			}
			for i, r := range results {
				tc := s.Cases[i]
				if tc.Name != r.Name || tc.Classname != "reel.snapshot" || tc.Time != r.Wall.Seconds() {
					t.Errorf("testcase %d = %q %q %v, want %q reel.snapshot %v", i, tc.Name, tc.Classname, tc.Time, r.Name, r.Wall.Seconds())
				}
				if (tc.Failure != nil) != !r.OK() {
					t.Errorf("testcase %s: failure %v, want failing=%v", r.Name, tc.Failure, !r.OK())
				}
			}
			f := s.Cases[1].Failure
			if f == nil {
				t.Fatal("scenario b has no failure element")
			}
			if f.Message != "system prompt: p_1.snap.md differs:" {
				t.Errorf("failure message = %q, want the first line of the first failure", f.Message)
			}
			wantText := strings.ReplaceAll(diff, "\x1b", "\uFFFD") + "\n\ntranscript: differs"
			if f.Text != wantText {
				t.Errorf("failure text = %q, want %q", f.Text, wantText)
			}
			if c.guarded {
				g := s.Cases[len(s.Cases)-1]
				if g.Name != "guard" || (g.Failure != nil) != (len(c.guard) > 0) {
					t.Errorf("guard testcase = %q failure %v, want failing=%v", g.Name, g.Failure, len(c.guard) > 0)
				}
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".tmp-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
	// A report that cannot be written names the path.
	blocker := filepath.Join(t.TempDir(), "file")
	writeTestFile(t, blocker, "x")
	err := WriteJUnit(filepath.Join(blocker, "junit.xml"), results, nil, false, 0)
	if err == nil || !strings.Contains(err.Error(), blocker) {
		t.Errorf("WriteJUnit under a file = %v, want an error naming the path", err)
	}
}

// TestMainUsage covers what `reel snapshot` refuses or answers before it
// runs anything: help, a -run that selects nothing, a malformed --shard.
func TestMainUsage(t *testing.T) {
	fixtures := t.TempDir()
	for _, name := range []string{"alpha", "beta", "gamma"} {
		writeTestFile(t, filepath.Join(fixtures, name, "input.json"), `{"steps":[{"op":"initialize"}]}`)
	}
	empty := t.TempDir()
	cases := []struct {
		name       string
		args       []string
		wantErr    error  // errors.Is target, or nil for "any error"
		wantMsg    string // fragment of the error ("" for none)
		wantStdout string // fragment of stdout
	}{
		{"-h", []string{"-h"}, flag.ErrHelp, "", "usage: reel snapshot"},
		{"--help", []string{"--help"}, flag.ErrHelp, "", "docs/scenarios.md"},
		{"help names the flags", []string{"-h"}, flag.ErrHelp, "", "-shard K/N"},
		{"help names the env vars", []string{"-h"}, flag.ErrHelp, "", "DEEPSEEK_API_KEY"},
		{"help gives an example", []string{"-h"}, flag.ErrHelp, "", "go run ./cmd/reel snapshot --refresh"},
		{"-run matching nothing", []string{"--fixtures", fixtures, "-run", "nosuchthing"}, nil, `-run "nosuchthing" matches none of the 3 scenarios in ` + fixtures, ""},
		{"-run in an empty folder", []string{"--fixtures", empty, "-run", "x"}, nil, "holds no scenario folders", ""},
		{"bad shard", []string{"--fixtures", fixtures, "--shard", "3/2"}, nil, `--shard "3/2": K must be between 1 and N (2)`, ""},
		{"shard not K/N", []string{"--fixtures", fixtures, "--shard", "two"}, nil, `--shard "two": want K/N`, ""},
		{"unknown flag", []string{"--nope"}, nil, "snapshot: flag provided but not defined: -nope (run `reel snapshot -h`", ""},
		{"-run matching no corpus scenario", []string{"--corpus", fixtures, "-run", "nosuchthing"}, nil, `-run "nosuchthing" matches none of the corpus scenarios in ` + fixtures, ""},
		{"shard with corpus", []string{"--corpus", fixtures, "--shard", "1/2"}, nil, "apply to the fixtures suite", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), c.args, &stdout, &stderr, "/nonexistent/reel")
			switch {
			case err == nil:
				t.Fatalf("Main(%q) = nil, want an error", c.args)
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Errorf("Main(%q) = %v, want %v", c.args, err, c.wantErr)
			case c.wantErr == nil && (errors.Is(err, flag.ErrHelp) || errors.Is(err, ErrFailed)):
				t.Errorf("Main(%q) = %v, want a usage error", c.args, err)
			case !strings.Contains(err.Error(), c.wantMsg):
				t.Errorf("Main(%q) = %q, want it to contain %q", c.args, err, c.wantMsg)
			}
			if !strings.Contains(stdout.String(), c.wantStdout) {
				t.Errorf("Main(%q) stdout lacks %q:\n%s", c.args, c.wantStdout, stdout.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("Main(%q) wrote to stderr: %q", c.args, stderr.String())
			}
		})
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
