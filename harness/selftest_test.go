package harness_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/harness"
	"github.com/reel-agent/reel/harness/equiv"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// The self-tests run on a small copy of the committed fixtures and goldens
// in t.TempDir(), tamper with it, and check what the suite reports.

// selfScenario is the committed scenario the self-tests copy.
const selfScenario = "text-turn"

// fakeKey looks like an API key; it is planted by a test, never committed
// anywhere else.
const fakeKey = "sk-reelfake0123456789abcdefXYZ"

var pinRef = regexp.MustCompile(`\{\{(prompt|tools):([^}]*)\}\}`)

// tree is a temporary fixtures/ + snapshots/ pair.
type tree struct{ fixtures, snapshots string }

func (tr tree) scenario(name string) string { return filepath.Join(tr.fixtures, name) }
func (tr tree) transcript(name string) string {
	return harness.GoldenPath(filepath.Join(tr.snapshots, "transcripts"), name, ".jsonl")
}
func (tr tree) prompt(name string) string {
	return harness.GoldenPath(filepath.Join(tr.snapshots, "prompts"), name, ".md")
}
func (tr tree) tools(name string) string {
	return harness.GoldenPath(filepath.Join(tr.snapshots, "tools"), name, ".json")
}

// newTree copies the named committed scenarios and exactly the goldens they
// use into a temporary tree.
func newTree(t *testing.T, names ...string) tree {
	t.Helper()
	root := t.TempDir()
	tr := tree{filepath.Join(root, "fixtures"), filepath.Join(root, "snapshots")}
	for _, name := range names {
		if err := os.CopyFS(tr.scenario(name), os.DirFS(filepath.Join("..", "fixtures", name))); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join("..", "snapshots", "transcripts", name+"_1.snap.jsonl"), tr.transcript(name))
		logs, _ := filepath.Glob(filepath.Join(tr.scenario(name), "session*.jsonl"))
		for _, l := range logs {
			for _, m := range pinRef.FindAllStringSubmatch(string(readBytes(t, l)), -1) {
				switch m[1] {
				case "prompt":
					copyFile(t, filepath.Join("..", "snapshots", "prompts", m[2]+"_1.snap.md"), tr.prompt(m[2]))
				case "tools":
					copyFile(t, filepath.Join("..", "snapshots", "tools", m[2]+"_1.snap.json"), tr.tools(m[2]))
				}
			}
		}
	}
	return tr
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	writeBytes(t, dst, readBytes(t, src))
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites a file through f and fails if nothing changed.
func edit(t *testing.T, path string, f func(string) string) {
	t.Helper()
	old := string(readBytes(t, path))
	next := f(old)
	if next == old {
		t.Fatalf("the tampering changed nothing in %s", path)
	}
	writeBytes(t, path, []byte(next))
}

// snapshotTree reads every file under the roots, by path.
func snapshotTree(t *testing.T, roots ...string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			files[p] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func (tr tree) suite(mode harness.Mode, g harness.Golden) *harness.Suite {
	return &harness.Suite{
		Runner:    harness.Runner{Exe: reelExe, Mode: mode},
		Fixtures:  tr.fixtures,
		Snapshots: tr.snapshots,
		Golden:    g,
	}
}

// runSuite runs the suite and returns the scenario failures and the guard
// problems.
func runSuite(t *testing.T, s *harness.Suite) (failures, guard []string) {
	t.Helper()
	results, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal("the suite ran no scenario")
	}
	for _, r := range results {
		for _, f := range r.Failures {
			failures = append(failures, r.Name+": "+f)
		}
	}
	return failures, s.Guard()
}

// oneContaining returns the first entry containing every want, or "".
func oneContaining(list []string, wants ...string) string {
	for _, s := range list {
		ok := true
		for _, w := range wants {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
	}
	return ""
}

// lastEvent returns the last event of type typ in a log file.
func lastEvent(t *testing.T, path, typ string) sessionlog.Event {
	t.Helper()
	d, err := jsonl.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(d.Events) - 1; i >= 0; i-- {
		if d.Events[i].Type == typ {
			return d.Events[i]
		}
	}
	t.Fatalf("%s has no %s", path, typ)
	return sessionlog.Event{}
}

// unpackFirstRun rewrites the first packed text-chunks row of a log as its
// individual assistant/chunk lines (a valid, non-canonical layout) and
// returns how many events it unpacked.
func unpackFirstRun(t *testing.T, path string) int {
	t.Helper()
	raw := readBytes(t, path)
	d, err := jsonl.Decode(bytes.NewReader(raw), path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, `{"type":"text-chunks",`) {
			continue
		}
		var b []byte
		n := 0
		for j := range d.Events {
			if d.LineOf(j) == i+1 {
				b = d.Events[j].AppendJSON(b)
				b = append(b, '\n')
				n++
			}
		}
		lines[i] = string(b)
		writeBytes(t, path, []byte(strings.Join(lines, "")))
		return n
	}
	t.Fatalf("%s has no text-chunks row", path)
	return 0
}

func TestSuiteSelfCheck(t *testing.T) {
	type want struct {
		// failures: each inner list must be matched by one scenario failure
		// (all substrings); none means the scenarios must pass.
		failures [][]string
		// guard: likewise for guard problems; none means no problems.
		guard [][]string
		// absent: substrings no guard problem may contain (a guard must
		// not repeat the secret it found).
		absent []string
	}
	cases := []struct {
		name   string
		tamper func(t *testing.T, tr tree) want
	}{
		{"untouched", func(t *testing.T, tr tree) want { return want{} }},
		{"tampered transcript golden", func(t *testing.T, tr tree) want {
			edit(t, tr.transcript(selfScenario), func(s string) string {
				return strings.Replace(s, `"stopReason":"end_turn"`, `"stopReason":"max_tokens"`, 1)
			})
			return want{failures: [][]string{{"transcript: ", tr.transcript(selfScenario) + " differs", "@@ line", `- {"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens",`, `+ {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn",`}}}
		}},
		{"tampered session log", func(t *testing.T, tr tree) want {
			path := filepath.Join(tr.scenario(selfScenario), "session.jsonl")
			end := lastEvent(t, path, sessionlog.TypeTurnEnd)
			edit(t, path, func(s string) string {
				return strings.Replace(s, `"reason":{"kind":"completed"}`, `"reason":{"kind":"aborted"}`, 1)
			})
			return want{failures: [][]string{{
				filepath.Join(selfScenario, "session.jsonl"),
				fmt.Sprintf("seq %d (turn/end): data.reason.kind: expected \"aborted\", got \"completed\"", end.Seq),
			}}}
		}},
		{"orphan folder", func(t *testing.T, tr tree) want {
			writeBytes(t, filepath.Join(tr.fixtures, "stray", "notes.md"), []byte("no input.json here\n"))
			return want{guard: [][]string{{filepath.Join(tr.fixtures, "stray") + ": orphan scenario folder"}}}
		}},
		{"duplicate pinned prompt", func(t *testing.T, tr tree) want {
			prompts, _ := filepath.Glob(filepath.Join(tr.snapshots, "prompts", "*_1.snap.md"))
			if len(prompts) == 0 {
				t.Fatal("the scenario pins no prompt")
			}
			dup := tr.prompt("system-copy")
			copyFile(t, prompts[0], dup)
			return want{guard: [][]string{
				{"same content as", "pinned content must be committed once", filepath.Base(dup), filepath.Base(prompts[0])},
				{dup + ": golden that no scenario produces"},
			}}
		}},
		{"planted secret", func(t *testing.T, tr tree) want {
			path := filepath.Join(tr.scenario(selfScenario), "notes.txt")
			writeBytes(t, path, []byte("export DEEPSEEK_API_KEY="+fakeKey+"\n"))
			return want{guard: [][]string{{path + ": looks like a secret"}}, absent: []string{fakeKey}}
		}},
		{"planted secret in a golden", func(t *testing.T, tr tree) want {
			path := tr.transcript(selfScenario)
			edit(t, path, func(s string) string { return s + `{"authorization":"Bearer ` + fakeKey + `"}` + "\n" })
			return want{
				failures: [][]string{{"transcript: ", path + " differs"}},
				guard:    [][]string{{path + ": looks like a secret"}},
				absent:   []string{fakeKey},
			}
		}},
		{"golden no scenario produces", func(t *testing.T, tr tree) want {
			ghost := tr.transcript("ghost")
			writeBytes(t, ghost, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"))
			return want{guard: [][]string{{ghost + ": golden that no scenario produces"}}}
		}},
		{"missing transcript golden", func(t *testing.T, tr tree) want {
			if err := os.Remove(tr.transcript(selfScenario)); err != nil {
				t.Fatal(err)
			}
			return want{
				failures: [][]string{{tr.transcript(selfScenario) + ": no golden yet"}},
				guard:    [][]string{{selfScenario + ": no transcript golden"}},
			}
		}},
		{"non-canonical session log", func(t *testing.T, tr tree) want {
			path := filepath.Join(tr.scenario(selfScenario), "session.jsonl")
			if n := unpackFirstRun(t, path); n != 3 {
				t.Fatalf("unpacked %d deltas, want a run of 3", n)
			}
			return want{
				failures: [][]string{{"logs differ in layout only"}},
				guard:    [][]string{{path + ": not in the canonical packed layout"}},
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTree(t, selfScenario)
			w := c.tamper(t, tr)
			failures, guard := runSuite(t, tr.suite(harness.Replay, harness.FileGolden{}))
			check := func(kind string, got []string, wants [][]string, absent []string) {
				if len(wants) == 0 && len(got) > 0 {
					t.Errorf("unexpected %s:\n%s", kind, strings.Join(got, "\n"))
				}
				for _, ws := range wants {
					if oneContaining(got, ws...) == "" {
						t.Errorf("no %s contains all of %q; got:\n%s", kind, ws, strings.Join(got, "\n---\n"))
					}
				}
				for _, a := range absent {
					if s := oneContaining(got, a); s != "" {
						t.Errorf("a %s repeats %q: %s", kind, a, s)
					}
				}
			}
			check("scenario failure", failures, w.failures, nil)
			check("guard problem", guard, w.guard, w.absent)
		})
	}
}

func TestRefreshRewritesOnlyWhatChanged(t *testing.T) {
	tr := newTree(t, selfScenario)
	prompts, _ := filepath.Glob(filepath.Join(tr.snapshots, "prompts", "*_1.snap.md"))
	if len(prompts) == 0 {
		t.Fatal("the scenario pins no prompt")
	}
	target := prompts[0]
	original := readBytes(t, target)
	// The goldens' side of an intended prompt change: the pinned prompt no
	// longer matches what the agent renders.
	edit(t, target, func(s string) string { return "OUTDATED " + s })

	before := snapshotTree(t, tr.fixtures, tr.snapshots)
	failures, _ := runSuite(t, tr.suite(harness.Refresh, harness.FileGolden{Update: true}))
	if len(failures) > 0 {
		t.Fatalf("refresh failed:\n%s", strings.Join(failures, "\n"))
	}
	after := snapshotTree(t, tr.fixtures, tr.snapshots)

	if got := after[target]; !bytes.Equal(got, original) {
		t.Errorf("refresh did not restore %s from current behaviour:\n%s", target, harness.TextDiff(string(original), string(got)))
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range before {
			if !yield(p) {
				return
			}
		}
	}) {
		if p == target {
			continue
		}
		b, ok := after[p]
		switch {
		case !ok:
			t.Errorf("refresh removed %s", p)
		case !bytes.Equal(b, before[p]):
			t.Errorf("refresh rewrote %s, which did not change", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("refresh created %s", p)
		}
	}

	// The refreshed tree replays clean.
	failures, guard := runSuite(t, tr.suite(harness.Replay, harness.FileGolden{}))
	if len(failures)+len(guard) > 0 {
		t.Errorf("replay after refresh:\n%s", strings.Join(append(failures, guard...), "\n"))
	}
}

func TestReplayDeterministic(t *testing.T) {
	tr := newTree(t, selfScenario)
	sc, err := scenario.Load(tr.scenario(selfScenario))
	if err != nil {
		t.Fatal(err)
	}
	r := harness.Runner{Exe: reelExe, Mode: harness.Replay}
	var outs []*harness.Output
	for range 2 {
		run, err := r.Execute(context.Background(), sc)
		if run != nil {
			t.Cleanup(func() { os.RemoveAll(run.Temp) })
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := harness.Normalize(run)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	a, b := outs[0], outs[1]
	if len(a.Transcript) == 0 || len(a.Logs) == 0 {
		t.Fatalf("the run produced nothing to compare (%d transcript bytes, %d logs)", len(a.Transcript), len(a.Logs))
	}
	if !bytes.Equal(a.Transcript, b.Transcript) {
		t.Errorf("transcripts differ:\n%s", harness.TextDiff(string(a.Transcript), string(b.Transcript)))
	}
	if len(a.Logs) != len(b.Logs) {
		t.Fatalf("%d logs, then %d", len(a.Logs), len(b.Logs))
	}
	for i := range a.Logs {
		if d := harness.LogDiff(fmt.Sprintf("session %d", i), a.Logs[i], b.Logs[i]); d != "" {
			t.Errorf("logs differ: %s", d)
		}
	}
	// Normalization reaches everything run-specific: the goldens match.
	if want := readBytes(t, tr.transcript(selfScenario)); !bytes.Equal(a.Transcript, want) {
		t.Errorf("normalized transcript differs from the golden:\n%s", harness.TextDiff(string(want), string(a.Transcript)))
	}
}

func TestSnapshotCLI(t *testing.T) {
	cases := []struct {
		name    string
		tamper  func(t *testing.T, tr tree) []string // returns wanted output substrings
		wantErr error
	}{
		{"clean", func(t *testing.T, tr tree) []string {
			return []string{"SCENARIO", selfScenario, "pass", "1 scenario(s), 0 failed, 0 guard problem(s), mode replay"}
		}, nil},
		{"tampered prompt golden", func(t *testing.T, tr tree) []string {
			prompts, _ := filepath.Glob(filepath.Join(tr.snapshots, "prompts", "*_1.snap.md"))
			if len(prompts) == 0 {
				t.Fatal("the scenario pins no prompt")
			}
			first, _, _ := strings.Cut(string(readBytes(t, prompts[0])), "\n")
			edit(t, prompts[0], func(s string) string { return "TAMPERED " + s })
			// The replay's request matching reads the pin and refuses the
			// call whose system prompt differs from it.
			return []string{
				"FAIL", "--- FAIL " + selfScenario,
				"turn 1 step 1 system prompt: differ at byte 0", "recorded …\"TAMPERED " + first[:min(len(first), 41)],
			}
		}, harness.ErrFailed},
		{"uncomparable call", func(t *testing.T, tr tree) []string {
			// A recorded header that names its system prompt without the
			// content: the call cannot be compared, and a fixture fails.
			log := filepath.Join(tr.fixtures, selfScenario, "session.jsonl")
			edit(t, log, func(s string) string {
				return regexp.MustCompile(`"system":"\{\{prompt:[^}]*\}\}"`).ReplaceAllString(s, `"system":"{{system}}"`)
			})
			return []string{"FAIL", "--- FAIL " + selfScenario,
				"request matching: model request at turn 1 step 1 of session 1 not compared: system prompt (the recording holds {{system}}, not the content)"}
		}, harness.ErrFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTree(t, selfScenario)
			wants := c.tamper(t, tr)
			var stdout, stderr bytes.Buffer
			err := harness.Main(context.Background(), []string{"--fixtures", tr.fixtures, "--snapshots", tr.snapshots, "-j", "1"}, &stdout, &stderr, reelExe)
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Errorf("reel snapshot = %v, want %v\n%s", err, c.wantErr, stdout.String())
			}
			for _, w := range wants {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, stdout.String())
				}
			}
		})
	}
	// Usage errors are reported, not run.
	for _, args := range [][]string{{"stray"}, {"--refresh", "--record"}, {"-run", "("}, {"--nope"}} {
		var stdout, stderr bytes.Buffer
		if err := harness.Main(context.Background(), args, &stdout, &stderr, reelExe); err == nil || errors.Is(err, harness.ErrFailed) {
			t.Errorf("reel snapshot %q = %v, want a usage error", args, err)
		}
	}
}

// TestCorpus replays the conformance corpus and checks the verdicts: every
// scenario is judged (no harness error), an ineligible one names what it
// lacks exactly as Eligible does, and the verdict of every scenario is the
// one committed in testdata/corpus-verdicts.txt — so a scenario that starts
// failing, or starts passing, shows up. After an intended change, rewrite
// the file with UPDATE_SNAPS=true go test ./harness -run TestCorpus.
func TestCorpus(t *testing.T) {
	corpusPath := corpustest.Dir(t)
	dirs, err := scenario.Discover(corpusPath)
	if err != nil || len(dirs) == 0 {
		t.Fatalf("the conformance corpus %s holds no scenarios (%v)", corpusPath, err)
	}
	results, err := harness.RunCorpusDir(context.Background(), corpusPath, harness.CorpusOptions{Exe: reelExe, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(dirs) {
		t.Fatalf("%d results for %d corpus scenarios", len(results), len(dirs))
	}
	var table strings.Builder
	eligible := ""
	for i, r := range results {
		if want := filepath.Base(dirs[i]); r.Name != want {
			t.Errorf("result %d is %q, want %q", i, r.Name, want)
		}
		c, missing, err := harness.Eligible(dirs[i])
		switch {
		case err != nil:
			t.Errorf("%s: cannot be judged: %v", r.Name, err)
		case c == nil:
			if r.Verdict != harness.VerdictIneligible || !slices.Equal(r.Missing, missing) || strings.TrimSpace(r.Ineligible()) == "" {
				t.Errorf("%s: %s lacking %q, Eligible says %q", r.Name, r.Verdict, r.Missing, missing)
			}
		default:
			if r.Verdict == harness.VerdictIneligible {
				t.Errorf("%s: eligible but reported ineligible (%s)", r.Name, r.Ineligible())
			}
			if r.Verdict == harness.VerdictFail && len(r.Failures) == 0 || r.Verdict == harness.VerdictPartial && len(r.Unchecked) == 0 {
				t.Errorf("%s: %s without saying why", r.Name, r.Verdict)
			}
			if eligible == "" && r.Verdict == harness.VerdictPass {
				eligible = r.Name
			}
		}
		fmt.Fprintf(&table, "%s %s\n", r.Name, r.Verdict)
	}
	golden := filepath.Join("testdata", "corpus-verdicts.txt")
	if os.Getenv("UPDATE_SNAPS") == "true" {
		writeBytes(t, golden, []byte(table.String()))
	} else if want := string(readBytes(t, golden)); want != table.String() {
		t.Errorf("corpus verdicts differ from %s (UPDATE_SNAPS=true rewrites it):\n%s", golden, harness.TextDiff(want, table.String()))
		for _, r := range results {
			for _, f := range r.Failures {
				t.Logf("%s: %s", r.Name, f)
			}
		}
	}
	if eligible == "" {
		t.Fatal("no corpus scenario passes")
	}
	// The CLI form lists what it ran, and --keep writes reel's side in the
	// layout reel log diff reads, which finds it equivalent too; one
	// passing scenario suffices.
	keep := t.TempDir()
	var stdout, stderr bytes.Buffer
	err = harness.Main(context.Background(), []string{"--corpus", corpusPath, "-run", "^" + regexp.QuoteMeta(eligible) + "$", "-j", "1", "--keep", keep}, &stdout, &stderr, reelExe)
	if err != nil || !strings.Contains(stdout.String(), "1 passed, 0 failed, 0 partial, 0 ineligible") {
		t.Errorf("reel snapshot --corpus -run %s = %v:\n%s", eligible, err, stdout.String())
	}
	for _, f := range []string{"session.jsonl", "stdout.jsonl", "stderr.txt", "report.txt"} {
		if _, err := os.Stat(filepath.Join(keep, eligible, f)); err != nil {
			t.Errorf("--keep: %v", err)
		}
	}
	stdout.Reset()
	if err := equiv.DiffMain(context.Background(), []string{filepath.Join(corpusPath, eligible), filepath.Join(keep, eligible)}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "equivalent") {
		t.Errorf("reel log diff of the kept run = %v:\n%s", err, stdout.String())
	}
	// What the corpus mode refuses.
	for _, args := range [][]string{
		{"--corpus", corpusPath, "--refresh"},
		{"--corpus", corpusPath, "--record"},
		{"--corpus", corpusPath, "--record", "--standin"},
		{"--corpus", corpusPath, "--shard", "1/2"},
		{"--keep", keep},
	} {
		if err := harness.Main(context.Background(), args, &stdout, &stderr, reelExe); err == nil || errors.Is(err, harness.ErrFailed) {
			t.Errorf("reel snapshot %q = %v, want a usage error", args, err)
		}
	}
}
