package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reel-agent/reel/harness/scenario"
)

// Suite runs the scenarios of a fixtures folder.
type Suite struct {
	Runner    Runner
	Fixtures  string // fixtures/
	Snapshots string // snapshots/
	Golden    Golden
	// Filter selects scenarios by name (nil: all).
	Filter *regexp.Regexp
	// Jobs is the number of scenarios run at once (≤1: serial).
	Jobs int
	// Progress, when set, is called as each scenario finishes.
	Progress func(Result)
	// Standin makes record mode serve each scenario's standin.json.
	Standin bool
	// Shard selects a stable share of the filtered scenarios (zero: all).
	Shard Shard
}

// Result is one scenario's outcome.
type Result struct {
	Name string
	Wall time.Duration
	// Failures are readable descriptions of what differed or broke.
	Failures []string
	// Prompts and Tools are the pinned names the run produced.
	Prompts, Tools []string
}

// OK reports whether the scenario passed.
func (r Result) OK() bool { return len(r.Failures) == 0 }

// Dirs of the goldens.
func (s *Suite) transcripts() string { return filepath.Join(s.Snapshots, "transcripts") }
func (s *Suite) prompts() string     { return filepath.Join(s.Snapshots, "prompts") }
func (s *Suite) tools() string       { return filepath.Join(s.Snapshots, "tools") }

// Scenarios lists the scenario folders the filter and the shard select.
func (s *Suite) Scenarios() ([]string, error) {
	dirs, err := scenario.Discover(s.Fixtures)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		name := filepath.Base(d)
		if (s.Filter == nil || s.Filter.MatchString(name)) && s.Shard.Has(name) {
			out = append(out, d)
		}
	}
	return out, nil
}

// Run runs every selected scenario, Jobs at a time, in name order of results.
func (s *Suite) Run(ctx context.Context) ([]Result, error) {
	dirs, err := s.Scenarios()
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(dirs))
	jobs := max(s.Jobs, 1)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, dir := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := s.RunOne(ctx, dir)
			results[i] = r
			if s.Progress != nil {
				mu.Lock()
				s.Progress(r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results, nil
}

// RunOne runs one scenario folder and checks (or, in refresh and record
// mode, rewrites) its expected outputs.
func (s *Suite) RunOne(ctx context.Context, dir string) Result {
	res := Result{Name: filepath.Base(dir)}
	fail := func(format string, args ...any) { res.Failures = append(res.Failures, fmt.Sprintf(format, args...)) }
	sc, err := scenario.Load(dir)
	if err != nil {
		fail("%v", err)
		return res
	}
	runner := s.Runner
	if runner.Mode == Record && s.Standin && sc.Standin == "" && !sendsPrompts(sc) {
		// No model is ever called: any provider configuration will do.
		runner.RecordArgs = []string{"--provider", "deepseek", "--model", "none"}
		runner.RecordEnv = []string{"DEEPSEEK_API_KEY=unused"}
	} else if runner.Mode == Record && s.Standin {
		if sc.Standin == "" {
			fail("%s: --standin needs a standin.json in the scenario folder", sc.Name)
			return res
		}
		url, stop, err := startStandin(ctx, sc.Standin)
		if err != nil {
			fail("%s: stand-in: %v", sc.Name, err)
			return res
		}
		defer stop()
		runner.StandinURL = url
		runner.RecordArgs = []string{"--provider", "deepseek", "--model", "standin"}
		runner.RecordEnv = []string{"DEEPSEEK_API_KEY=standin"}
	}
	run, err := runner.Execute(ctx, sc)
	if run != nil {
		res.Wall = run.Wall
		defer os.RemoveAll(run.Temp)
	}
	if err != nil {
		fail("%v", err)
		return res
	}
	out, err := Normalize(run)
	if err != nil {
		fail("%s: %v", sc.Name, err)
		return res
	}
	update := s.Runner.Mode == Refresh || s.Runner.Mode == Record
	for i, got := range out.Logs {
		if got == nil {
			continue // a refused load: nothing was written
		}
		path := filepath.Join(dir, sessionFile(i))
		if update {
			if err := writeAtomic(path, got); err != nil {
				fail("%v", err)
			}
			continue
		}
		want, ok, err := readFile(path)
		switch {
		case err != nil:
			fail("%v", err)
		case !ok:
			fail("%s: missing (record the scenario)", path)
		default:
			if d := LogDiff(filepath.Join(sc.Name, sessionFile(i)), want, got); d != "" {
				fail("%s%s", d, s.promptDiff(want, got))
			}
		}
	}
	if !update && len(sc.Sessions) > len(out.Logs) && sc.Seed == "" {
		fail("%s: the fixture has %d session log(s), the run opened %d", sc.Name, len(sc.Sessions), len(out.Logs))
	}
	if err := s.Golden.Match(s.transcripts(), sc.Name, ".jsonl", out.Transcript); err != nil {
		fail("transcript: %v", err)
	}
	for _, name := range sortedKeys(out.Pinned.Prompts) {
		res.Prompts = append(res.Prompts, name)
		if err := s.Golden.Match(s.prompts(), name, ".md", []byte(out.Pinned.Prompts[name])); err != nil {
			fail("system prompt: %v", err)
		}
	}
	for _, name := range sortedKeys(out.Pinned.Tools) {
		res.Tools = append(res.Tools, name)
		if err := s.Golden.Match(s.tools(), name, ".json", out.Pinned.Tools[name]); err != nil {
			fail("tool schemas: %v", err)
		}
	}
	return res
}

// promptDiff explains a prompt reference that moved: the pinned prompt the
// fixture expects against the one the run pinned.
func (s *Suite) promptDiff(want, got []byte) string {
	wp, _ := refsIn(want)
	gp, _ := refsIn(got)
	for i := 0; i < min(len(wp), len(gp)); i++ {
		if wp[i] != gp[i] {
			a, _, _ := readFile(GoldenPath(s.prompts(), wp[i], ".md"))
			b, _, _ := readFile(GoldenPath(s.prompts(), gp[i], ".md"))
			return fmt.Sprintf("\nsystem prompt %s → %s:\n%s", wp[i], gp[i], TextDiff(string(a), string(b)))
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// secretPattern matches what looks like an API key or bearer token.
var secretPattern = regexp.MustCompile(`(sk-[A-Za-z0-9_-]{16,}|[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}|(?i:api[_-]?key)["']?\s*[:=]\s*["']?[A-Za-z0-9_-]{16,})`)

// Guard checks the fixtures and goldens as a whole: orphan scenario
// folders, missing files, non-canonical logs, duplicate pinned content,
// goldens no scenario produces, and anything that looks like a secret.
func (s *Suite) Guard() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	orphans, err := scenario.Orphans(s.Fixtures)
	if err != nil {
		return []string{err.Error()}
	}
	for _, o := range orphans {
		add("%s: orphan scenario folder (no input.json)", o)
	}
	dirs, err := scenario.Discover(s.Fixtures)
	if err != nil {
		return []string{err.Error()}
	}
	usedPrompts, usedTools, names := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, dir := range dirs {
		sc, err := scenario.Load(dir)
		if err != nil {
			add("%v", err)
			continue
		}
		names[sc.Name] = true
		opens := 0
		for _, st := range sc.Input.Steps {
			if st.Op == scenario.OpNewSession {
				opens++
			}
		}
		if len(sc.Sessions) < opens {
			add("%s: %d session(s) are created but only %d session log(s) are recorded", sc.Name, opens, len(sc.Sessions))
		}
		for _, f := range sc.Sessions {
			raw, err := os.ReadFile(f)
			if err != nil {
				add("%v", err)
				continue
			}
			if err := canonical(f, raw); err != nil {
				add("%v", err)
			}
			p, t := refsIn(raw)
			for _, n := range p {
				usedPrompts[n] = true
				if _, ok, _ := readFile(GoldenPath(s.prompts(), n, ".md")); !ok {
					add("%s: refers to {{prompt:%s}}, which is not pinned", f, n)
				}
			}
			for _, n := range t {
				usedTools[n] = true
				if _, ok, _ := readFile(GoldenPath(s.tools(), n, ".json")); !ok {
					add("%s: refers to {{tools:%s}}, which is not pinned", f, n)
				}
			}
		}
		if _, ok, _ := readFile(GoldenPath(s.transcripts(), sc.Name, ".jsonl")); !ok {
			add("%s: no transcript golden", sc.Name)
		}
	}
	seen := map[string]string{}
	check := func(dir, ext string, used map[string]bool) {
		files, _ := filepath.Glob(filepath.Join(dir, "*_1.snap"+ext))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), "_1.snap"+ext)
			if !used[name] {
				add("%s: golden that no scenario produces", f)
			}
			b, _ := os.ReadFile(f)
			if prev, dup := seen[string(b)]; dup && ext != ".jsonl" {
				add("%s: same content as %s (pinned content must be committed once)", f, prev)
			}
			seen[string(b)] = f
		}
	}
	check(s.prompts(), ".md", usedPrompts)
	check(s.tools(), ".json", usedTools)
	check(s.transcripts(), ".jsonl", names)
	for _, root := range []string{s.Fixtures, s.Snapshots} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if m := secretPattern.Find(b); m != nil {
				add("%s: looks like a secret (%q…); never commit keys or tokens", path, m[:min(len(m), 8)])
			}
			return nil
		})
	}
	slices.Sort(problems)
	return problems
}

// ErrFailed reports a suite with failing scenarios or guards.
var ErrFailed = errors.New("snapshot suite failed")

func sendsPrompts(sc *scenario.Scenario) bool {
	for _, st := range sc.Input.Steps {
		if st.IsPrompt() {
			return true
		}
	}
	return false
}
