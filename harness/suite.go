package harness

import (
	"bytes"
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

// Run runs every selected scenario, Jobs at a time (longest first, two
// scenarios serving web pages on the same loopback port never at once),
// and returns the results in name order.
func (s *Suite) Run(ctx context.Context) ([]Result, error) {
	dirs, err := s.Scenarios()
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(dirs))
	q := newRunQueue(longestFirst(dirs), webPorts(dirs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(max(s.Jobs, 1), max(len(dirs), 1)) {
		wg.Go(func() {
			for {
				i, ok := q.next()
				if !ok {
					return
				}
				r := s.RunOne(ctx, dirs[i])
				q.done(i)
				results[i] = r
				if s.Progress != nil {
					mu.Lock()
					s.Progress(r)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return results, nil
}

// runQueue hands out scenarios in order, holding back one whose loopback
// web port a running scenario serves on (it would wait for the port)
// while a later one can run.
type runQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending []int       // scenario indexes not started, in run order
	port    map[int]int // a scenario's web port (absent: none)
	busy    map[int]bool
}

func newRunQueue(order []int, port map[int]int) *runQueue {
	q := &runQueue{pending: order, port: port, busy: map[int]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// next returns the next scenario to run, waiting while every pending one
// needs a busy port; false when none is left.
func (q *runQueue) next() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) > 0 {
		if k, ok := q.pick(); ok {
			i := q.pending[k]
			if p, web := q.port[i]; web {
				q.busy[p] = true
			}
			q.pending = slices.Delete(q.pending, k, k+1)
			return i, true
		}
		q.cond.Wait()
	}
	return 0, false
}

// pick is the place in pending of the first scenario that can start now
// (false: each needs a busy port).
func (q *runQueue) pick() (int, bool) {
	for k, i := range q.pending {
		if p, web := q.port[i]; !web || !q.busy[p] {
			return k, true
		}
	}
	return 0, false
}

// done frees scenario i's port.
func (q *runQueue) done(i int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p, web := q.port[i]; web {
		delete(q.busy, p)
		q.cond.Broadcast()
	}
}

// webPorts are the loopback ports of the scenarios that serve web pages
// (a web/ folder), by index into dirs. A scenario that does not load is
// left out (it fails when run).
func webPorts(dirs []string) map[int]int {
	ports := map[int]int{}
	for i, dir := range dirs {
		if fi, err := os.Stat(filepath.Join(dir, "web")); err != nil || !fi.IsDir() {
			continue
		}
		sc, err := scenario.Load(dir)
		if err != nil || sc.Web == "" {
			continue
		}
		if p, err := webPort(sc); err == nil {
			ports[i] = p
		}
	}
	return ports
}

// longestFirst orders the scenario folders for running, as indexes into
// dirs: the most recorded events first (a scenario's time grows with
// them), so a long scenario does not start last and finish alone while the
// other jobs idle. Ties keep dirs' order.
func longestFirst(dirs []string) []int {
	cost := make([]int, len(dirs))
	for i, dir := range dirs {
		logs, _ := filepath.Glob(filepath.Join(dir, "session*.jsonl"))
		for _, f := range logs {
			if b, err := os.ReadFile(f); err == nil {
				cost[i] += bytes.Count(b, []byte{'\n'})
			}
		}
	}
	order := make([]int, len(dirs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost[b] - cost[a] })
	return order
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
	switch runner.Mode {
	case Replay:
		// Every request is compared whole with the recorded one, the
		// system prompt and tool schemas through the pinned goldens.
		runner.ExtraArgs = append(slices.Clone(runner.ExtraArgs), "--replay-match", "full", "--replay-pins", absPath(s.Snapshots))
	case Refresh:
		// A refresh rewrites the recordings: the requests may change.
		runner.ExtraArgs = append(slices.Clone(runner.ExtraArgs), "--replay-match", "off")
	}
	run, err := runner.Execute(ctx, sc)
	if run != nil {
		res.Wall = run.Wall
		defer os.RemoveAll(run.Temp)
		mismatches, unchecked := RequestMatch(run.Stderr)
		res.Failures = append(res.Failures, mismatches...)
		if runner.Mode == Replay {
			// Every call of a fixture must be comparable: one that is not
			// fails the scenario (the fixture suite has no partial verdict).
			for _, u := range unchecked {
				fail("request matching: %s", u)
			}
		}
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
	if update && sc.Seed == "" {
		// Logs beyond the run's (a child the run no longer makes) are
		// obsolete.
		for i := len(out.Logs); i < len(sc.Sessions); i++ {
			if err := os.Remove(sc.Sessions[i]); err != nil {
				fail("%v", err)
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
var secretPattern = &pattern{expr: `(sk-[A-Za-z0-9_-]{16,}|[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}|(?i:api[_-]?key)["']?\s*[:=]\s*["']?[A-Za-z0-9_-]{16,})`}

// mayHoldSecret reports whether b holds a literal every match of
// secretPattern holds ("sk-", "bearer", "api" "key" with "", "_" or "-"
// between, in any case): the pattern (case-insensitive in part, slow over
// the fixtures' megabytes) runs only on the few files that do.
func mayHoldSecret(b []byte) bool {
	lower := bytes.ToLower(b)
	for _, lit := range []string{"sk-", "bearer", "apikey", "api_key", "api-key"} {
		if bytes.Contains(lower, []byte(lit)) {
			return true
		}
	}
	return false
}

// guard is one named check of the fixtures and goldens as a whole; fn
// returns its problems, each naming the offending file or scenario.
type guard struct {
	name string
	fn   func(s *Suite, fx *fixtureSet) []string
}

// guards are the suite's guards, run in this order.
var guards = []guard{
	{"orphan-folders", guardOrphans},
	{"scenario-loads", guardLoads},
	{"missing-files", guardMissingFiles},
	{"packed-layout", guardPackedLayout},
	{"duplicate-pins", guardDuplicatePins},
	{"unused-goldens", guardUnusedGoldens},
	{"secrets", guardSecrets},
}

// fixtureSet is what the guards look at: the fixtures folder surveyed and
// every scenario in it loaded once.
type fixtureSet struct {
	orphans   []string
	scenarios []*scenario.Scenario
	loadErrs  []error
	// logs are the recorded session logs, per scenario in session order.
	logs []fixtureLog
}

// fixtureLog is one recorded session log of a scenario.
type fixtureLog struct {
	sc   *scenario.Scenario
	path string
	raw  []byte
	err  error // reading it failed
}

func (s *Suite) survey() (*fixtureSet, error) {
	fx := &fixtureSet{}
	var err error
	if fx.orphans, err = scenario.Orphans(s.Fixtures); err != nil {
		return nil, err
	}
	dirs, err := scenario.Discover(s.Fixtures)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		sc, err := scenario.Load(dir)
		if err != nil {
			fx.loadErrs = append(fx.loadErrs, err)
			continue
		}
		fx.scenarios = append(fx.scenarios, sc)
		for _, f := range sc.Sessions {
			raw, err := os.ReadFile(f)
			fx.logs = append(fx.logs, fixtureLog{sc: sc, path: f, raw: raw, err: err})
		}
	}
	return fx, nil
}

// Guard runs the guards over the fixtures and goldens as a whole and returns
// their problems, in guard order, each as "GUARD: PROBLEM": orphan scenario
// folders, scenarios that do not load, missing files (session logs, pinned
// prompts and tool schemas, transcript goldens), logs not in the canonical
// packed layout, duplicate pinned content, goldens no scenario produces, and
// anything that looks like a secret.
func (s *Suite) Guard() []string {
	fx, err := s.survey()
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, g := range guards {
		found := g.fn(s, fx)
		slices.Sort(found)
		for _, p := range found {
			problems = append(problems, g.name+": "+p)
		}
	}
	return problems
}

// guardOrphans: a folder under fixtures/ without an input.json.
func guardOrphans(_ *Suite, fx *fixtureSet) []string {
	var out []string
	for _, o := range fx.orphans {
		out = append(out, fmt.Sprintf("%s: orphan scenario folder (no input.json)", o))
	}
	return out
}

// guardLoads: a scenario folder the loader refuses.
func guardLoads(_ *Suite, fx *fixtureSet) []string {
	var out []string
	for _, err := range fx.loadErrs {
		out = append(out, err.Error())
	}
	return out
}

// guardMissingFiles: a created session without its log, a log that cannot
// be read, a pinned prompt or tool list a log refers to but snapshots/ lacks,
// a scenario without its transcript golden.
func guardMissingFiles(s *Suite, fx *fixtureSet) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, sc := range fx.scenarios {
		opens := 0
		for _, st := range sc.Input.Steps {
			if st.CreatesSession() {
				opens++
			}
		}
		if len(sc.Sessions) < opens {
			add("%s: %d session(s) are created but only %d session log(s) are recorded", sc.Name, opens, len(sc.Sessions))
		}
		if _, ok, _ := readFile(GoldenPath(s.transcripts(), sc.Name, ".jsonl")); !ok {
			add("%s: no transcript golden", sc.Name)
		}
	}
	for _, l := range fx.logs {
		if l.err != nil {
			add("%v", l.err)
			continue
		}
		p, t := refsIn(l.raw)
		for _, n := range p {
			if _, ok, _ := readFile(GoldenPath(s.prompts(), n, ".md")); !ok {
				add("%s: refers to {{prompt:%s}}, which is not pinned", l.path, n)
			}
		}
		for _, n := range t {
			if _, ok, _ := readFile(GoldenPath(s.tools(), n, ".json")); !ok {
				add("%s: refers to {{tools:%s}}, which is not pinned", l.path, n)
			}
		}
	}
	return out
}

// guardPackedLayout: a recorded log not in the canonical packed layout.
func guardPackedLayout(_ *Suite, fx *fixtureSet) []string {
	var out []string
	for _, l := range fx.logs {
		if l.err != nil {
			continue // missing-files reports it
		}
		if err := canonical(l.path, l.raw); err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

// goldens lists the golden files of dir with extension ext.
func goldens(dir, ext string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*_1.snap"+ext))
	return files
}

// guardDuplicatePins: two pinned prompts or tool lists with the same
// content (pinned content is committed once).
func guardDuplicatePins(s *Suite, _ *fixtureSet) []string {
	var out []string
	for _, set := range [][]string{goldens(s.prompts(), ".md"), goldens(s.tools(), ".json")} {
		seen := map[string]string{}
		for _, f := range set {
			b, _ := os.ReadFile(f)
			if prev, dup := seen[string(b)]; dup {
				out = append(out, fmt.Sprintf("%s: same content as %s (pinned content must be committed once)", f, prev))
			}
			seen[string(b)] = f
		}
	}
	return out
}

// guardUnusedGoldens: a pinned prompt, tool list or transcript that no
// scenario produces.
func guardUnusedGoldens(s *Suite, fx *fixtureSet) []string {
	usedPrompts, usedTools, names := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, sc := range fx.scenarios {
		names[sc.Name] = true
	}
	for _, l := range fx.logs {
		p, t := refsIn(l.raw)
		for _, n := range p {
			usedPrompts[n] = true
		}
		for _, n := range t {
			usedTools[n] = true
		}
	}
	var out []string
	for _, c := range []struct {
		dir, ext string
		used     map[string]bool
	}{{s.prompts(), ".md", usedPrompts}, {s.tools(), ".json", usedTools}, {s.transcripts(), ".jsonl", names}} {
		for _, f := range goldens(c.dir, c.ext) {
			if name := strings.TrimSuffix(filepath.Base(f), "_1.snap"+c.ext); !c.used[name] {
				out = append(out, fmt.Sprintf("%s: golden that no scenario produces", f))
			}
		}
	}
	return out
}

// guardSecrets: a file under fixtures/ or snapshots/ holding what looks
// like an API key or bearer token (the problem does not repeat it).
func guardSecrets(s *Suite, _ *fixtureSet) []string {
	var out []string
	for _, root := range []string{s.Fixtures, s.Snapshots} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !mayHoldSecret(b) {
				return nil
			}
			if m := secretPattern.get().Find(b); m != nil {
				out = append(out, fmt.Sprintf("%s: looks like a secret (%q…); never commit keys or tokens", path, m[:min(len(m), 8)]))
			}
			return nil
		})
	}
	return out
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
