package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/harness/equiv"
	"github.com/reel-agent/reel/harness/normalize"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// reelTools are the tools reel has; a corpus scenario whose recording calls
// anything else is outside reel's vocabulary.
var reelTools = []string{"bash", "read", "read_image", "write", "edit", "glob", "grep", "todo_write", "web_fetch", "skill", "job_output", "job_kill", "lsp",
	// Children, foreground and background (continuable), and the tools
	// that steer the continuable ones.
	"subagent", "subagent_fork", "send_message", "list_agents", "interrupt_agent", "report",
	// Persistent terminals (on with --terminals, see CorpusPreps).
	"terminal_open", "terminal_send", "terminal_read", "terminal_signal", "terminal_list", "terminal_close",
	// The session query tool, offered with --session-query.
	"session_event_read",
	// Code mode's one tool (reel acp --code-mode, package codemode).
	"run_code"}

// Corpus verdicts.
const (
	// VerdictPass: reel's run is equivalent to the recording by every check.
	VerdictPass = "pass"
	// VerdictFail: a check found a difference, or the run broke.
	VerdictFail = "FAIL"
	// VerdictPartial: no difference, but something could not be checked.
	VerdictPartial = "partial"
	// VerdictIneligible: the scenario needs a capability reel lacks.
	VerdictIneligible = "ineligible"
)

// CorpusResult is one corpus scenario's outcome.
type CorpusResult struct {
	Name string
	// Verdict is one of the Verdict constants.
	Verdict string
	// Missing lists the capabilities reel lacks for the scenario, the
	// first one first (ineligible only).
	Missing []string
	// Failures are what differed from the recording, or why the run broke.
	Failures []string
	// Unchecked says what could not be checked (partial, or alongside
	// failures).
	Unchecked []string
	Wall      time.Duration
}

// Ineligible returns the first missing capability, "" when eligible.
func (r CorpusResult) Ineligible() string {
	if len(r.Missing) == 0 {
		return ""
	}
	return r.Missing[0]
}

// CorpusCase is an eligible corpus scenario with what the recording says
// reel must reproduce.
type CorpusCase struct {
	Scenario *scenario.Scenario
	// Mode and Approval are the sandbox settings the recording ran under.
	Mode, Approval string
	// Expected is the recorded wire transcript (stdout.expected.jsonl), nil
	// when the scenario has none.
	Expected []byte
	// Prep is the scenario's preparation (zero when it needs none).
	Prep CorpusPrep
	// WireOnly is set when the recording holds no session log, only its
	// header with placeholders: the reference suite harvests none for a
	// scenario whose prompt is refused before a turn opens (acp.snapshot.ts,
	// `recorded: false, hasModelTurn: false`). Its wire is all there is to
	// compare.
	WireOnly bool
	// TitleModel is set when the recording asked a title model for the
	// session's title (session/title-llm-request): the reference's ACP
	// example mounts one only for the title scenario (its base
	// composition titles sessions by their first words alone), so reel
	// runs the others with --no-title-model.
	TitleModel bool
}

// placeholderID is the session id of a recording's header that stands
// for a log the reference suite did not harvest.
const placeholderID = "{{sessionId}}"

var policyText = &pattern{expr: `Current DSH file policy: ([a-z-]+)`}

// Eligible decides whether reel can replay a corpus scenario and gathers
// what the run needs. missing lists every capability the scenario needs
// that reel lacks, in the order found (input.json's steps, then the
// recorded log); empty means eligible.
func Eligible(dir string) (c *CorpusCase, missing []string, err error) {
	add := func(format string, args ...any) {
		m := fmt.Sprintf(format, args...)
		if !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	sc, err := scenario.Load(dir)
	if errors.Is(err, scenario.ErrUnknownOp) {
		// The corpus's vocabulary grows with the reference: a step reel's
		// vocabulary does not define is outside reel, not a broken run.
		// Keep looking for the rest of what is missing.
		for _, op := range unknownOps(dir) {
			add("uses step %s", op)
		}
		if len(missing) > 0 {
			sc, err = nil, nil
		}
	}
	if err != nil {
		return nil, nil, err
	}
	var logs []string
	if sc != nil {
		for _, st := range sc.Input.Steps {
			// An op of the corpus's vocabulary reel's harness does not
			// drive.
			if !st.Driven() {
				add("uses step %s", st.Op)
			}
		}
		logs = sc.Sessions
	} else {
		logs, _ = filepath.Glob(filepath.Join(dir, "session*.jsonl"))
		sort.Strings(logs)
	}
	if len(logs) == 0 {
		add("has no session.jsonl")
		return nil, missing, nil
	}
	d, err := readLog(logs[0])
	if err != nil {
		return nil, nil, err
	}
	c = &CorpusCase{Scenario: sc, Mode: "danger-full-access", Approval: "on-request", Prep: CorpusPreps()[filepath.Base(dir)]}
	if c.Prep.Missing != "" {
		add("%s", c.Prep.Missing)
	}
	turns := 0
	for i := range d.Events {
		e := &d.Events[i]
		switch {
		case e.Type == sessionlog.TypeTurnStart:
			turns++
		case e.Type == sessionlog.TypeSandboxMode:
			if m, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil {
				c.Mode = m.Mode
			}
		case e.Type == sessionlog.TypeTitleLLMRequest:
			c.TitleModel = true
		case e.Type == sessionlog.TypeUserMessage:
			if m := policyText.get().FindSubmatch(e.Data); m != nil {
				c.Mode = string(m[1])
			}
			if bytes.Contains(e.Data, []byte("Approval prompts are disabled")) {
				c.Approval = "never"
			}
		}
	}
	// What every log records — the top-level session's and each child's
	// own events (a fork child's first seedLength events are its
	// parent's, already read) — must be within what reel does.
	for n, path := range logs {
		l := d
		if n > 0 {
			if l, err = readLog(path); err != nil {
				return nil, nil, err
			}
			if _, child := l.Header.Child(); !child {
				add("records a second top-level session (%s has no parentSession)", filepath.Base(path))
			}
			if _, err := replay.Load(l.Events, ""); err != nil {
				add("has no replayable model script for %s (%v)", filepath.Base(path), err)
			}
		}
		if err := needs(l, add); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if sc == nil {
		return nil, missing, nil
	}
	c.WireOnly = len(d.Events) == 0 && d.Header.ID == placeholderID
	prompts := 0
	for _, st := range sc.Input.Steps {
		if st.IsPrompt() {
			prompts++
		}
	}
	if turns < prompts && !c.WireOnly {
		add("sends %d prompt(s) but recorded %d turn(s): a prompt was handled outside the model (e.g. blocked by a hook)", prompts, turns)
	}
	override := sc.OverridePath
	if c.Prep.TitleOverride {
		override = "" // the title call's, not the conversation's
		if _, err := replay.LoadTitles(d.Events, sc.OverridePath); err != nil {
			add("has no replayable title script (%v)", err)
		}
	}
	if _, err := replay.Load(d.Events, override); err != nil {
		add("has no replayable model script (%v)", err)
	}
	if len(missing) > 0 {
		return nil, missing, nil
	}
	expected, err := os.ReadFile(filepath.Join(dir, "stdout.expected.jsonl"))
	if err == nil {
		c.Expected = expected
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	return c, nil, nil
}

// needs adds, for one recorded log, the capabilities its own events use
// that reel lacks: tools outside reel's vocabulary and records of the
// reference's subagent machinery reel does not write. A child's seed (its first seedLength
// events, copied from its parent) is skipped: the parent's log holds it.
func needs(d *jsonl.Decoded, add func(format string, args ...any)) error {
	own := 0
	if c, ok := d.Header.Child(); ok {
		own = min(max(c.SeedLength, 0), len(d.Events))
	}
	for i := own; i < len(d.Events); i++ {
		e := &d.Events[i]
		switch {
		case e.Type == sessionlog.TypeToolCall:
			tc, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				return err
			}
			if !slices.Contains(reelTools, tc.Name) {
				add("uses tool %s", tc.Name)
			}
		case e.Type == sessionlog.TypeSubagentDescriptor:
			// A child's descriptor, one-shot or continuable: reel writes
			// both.
		case strings.HasPrefix(e.Type, "tool-workflow/"):
			add("records workflow runs (tool-workflow events)")
		case strings.HasPrefix(e.Type, "subagent/"):
			add("records %s events", e.Type)
		}
	}
	return nil
}

// unknownOps lists the ops of dir/input.json that reel's step vocabulary
// does not define, in order, each once. An unreadable input.json yields
// none (scenario.Load reports it).
func unknownOps(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, scenario.InputFile))
	if err != nil {
		return nil
	}
	var in struct {
		Steps []struct {
			Op string `json:"op"`
		} `json:"steps"`
	}
	if json.Unmarshal(b, &in) != nil {
		return nil
	}
	var out []string
	for _, st := range in.Steps {
		if slices.Contains(out, st.Op) {
			continue
		}
		// The loader is the vocabulary's one judge: an op alone in a
		// script is unknown exactly when it says so (a known op may still
		// miss required fields, which is another error).
		probe, _ := json.Marshal(map[string]any{"steps": []any{map[string]string{"op": st.Op}}})
		if _, err := scenario.ParseInput(scenario.InputFile, probe); errors.Is(err, scenario.ErrUnknownOp) {
			out = append(out, st.Op)
		}
	}
	return out
}

// CorpusOptions configure a corpus run.
type CorpusOptions struct {
	// Exe is the reel binary under test.
	Exe string
	// Filter selects scenarios by folder name (nil: all).
	Filter *regexp.Regexp
	// Jobs is how many scenarios run at once.
	Jobs int
	// Keep, when set, is a folder that receives, per scenario, reel's
	// session log(s) (session.jsonl, session.N.jsonl) and wire transcript
	// (stdout.jsonl) with the run's paths as {{cwd}} and {{tmp}}, its
	// stderr (stderr.txt) and the comparison (report.txt) — the layout
	// `reel log diff` reads.
	Keep string
	// Env are extra environment entries of the agent under test (the
	// self-test's REEL_BREAK).
	Env []string
}

// RunCorpus replays one eligible corpus scenario through reel and compares
// the run with the recording (package equiv).
func RunCorpus(ctx context.Context, c *CorpusCase, o CorpusOptions) CorpusResult {
	res := CorpusResult{Name: c.Scenario.Name}
	// The recording's requests are matched by their messages and header
	// reasons; its system prompt and tool schemas are the reference's own.
	args := append([]string{"--mode", c.Mode, "--approval", c.Approval, "--replay-match", "messages"}, c.Prep.Args...)
	if !c.TitleModel {
		args = append(args, "--no-title-model")
	}
	r := Runner{Exe: o.Exe, Mode: Replay, ExtraArgs: args, Prepare: c.prepare, PrepareWeb: c.Prep.Web, Env: o.Env, TitleOverride: c.Prep.TitleOverride,
		SettlementMarker: c.Prep.SettlementMarker}
	run, runErr := r.Execute(ctx, c.Scenario)
	if run != nil {
		res.Wall = run.Wall
		defer os.RemoveAll(run.Temp)
	}
	if run != nil {
		mismatches, unchecked := RequestMatch(run.Stderr)
		res.Failures = append(res.Failures, mismatches...)
		res.Unchecked = append(res.Unchecked, unchecked...)
	}
	if runErr != nil {
		res.Failures = append(res.Failures, runErr.Error())
	}
	if run != nil {
		got, err := reelSide(run)
		if err != nil {
			res.Failures = append(res.Failures, err.Error())
		} else if want, err := recordedSide(c); err != nil {
			res.Failures = append(res.Failures, err.Error())
		} else {
			gotSide := got.side
			if c.WireOnly {
				// reel's log was read (it decodes); there is no recorded
				// log to compare it with.
				want.Logs, gotSide = nil, &equiv.Side{Label: got.side.Label, Wire: got.side.Wire}
			}
			report := equiv.Compare(want, gotSide, equiv.Options{EnvironmentLines: c.Prep.EnvironmentLines})
			res.Failures = append(res.Failures, report.Lines()...)
			res.Unchecked = append(res.Unchecked, report.Unchecked...)
		}
		if o.Keep != "" {
			if err := keepRun(filepath.Join(o.Keep, c.Scenario.Name), run, got, &res); err != nil {
				res.Failures = append(res.Failures, fmt.Sprintf("--keep: %v", err))
			}
		}
	}
	switch {
	case len(res.Failures) > 0:
		res.Verdict = VerdictFail
	case len(res.Unchecked) > 0:
		res.Verdict = VerdictPartial
	default:
		res.Verdict = VerdictPass
	}
	return res
}

// prepare runs the scenario's preparation of the run's cwd, if any.
func (c *CorpusCase) prepare(cwd string) error {
	if c.Prep.Workspace != nil {
		if err := c.Prep.Workspace(cwd); err != nil {
			return err
		}
	}
	if c.Prep.FromRecording == nil || len(c.Scenario.Sessions) == 0 {
		return nil
	}
	d, err := readLog(c.Scenario.Sessions[0])
	if err != nil {
		return err
	}
	return c.Prep.FromRecording(d.Events, cwd)
}

// recordedSide is the recording as a comparison side.
func recordedSide(c *CorpusCase) (*equiv.Side, error) {
	s := &equiv.Side{Label: "recording", Wire: c.Expected}
	for _, path := range c.Scenario.Sessions {
		l, err := equiv.LoadLog(path)
		if err != nil {
			return nil, err
		}
		s.Logs = append(s.Logs, l)
	}
	return s, nil
}

// keptSide holds reel's output of one run with its paths replaced: what
// is compared and what --keep writes.
type keptSide struct {
	side   *equiv.Side
	logs   [][]byte
	wire   []byte
	stderr []byte
}

// reelSide reads what reel wrote in a run, with the run's paths replaced
// by the placeholders the recordings use ({{cwd}} for the working
// directory, {{tmp}} for the run's temp root). Nothing else is rewritten:
// ids, times and seqs stay as reel wrote them.
func reelSide(run *Run) (*keptSide, error) {
	paths := runPaths(run)
	wire := []byte(paths.Replace(string(run.Transcript)))
	k := &keptSide{side: &equiv.Side{Label: "reel", Wire: wire}, wire: wire, stderr: run.Stderr}
	ids, err := harvestIDs(run)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if run.Refused[i] {
			continue
		}
		raw, err := harvest(run.StateDir, id)
		if err != nil {
			return nil, fmt.Errorf("session %d (%s): %w", i, id, err)
		}
		b := []byte(paths.Replace(string(raw)))
		l, err := equiv.DecodeLog(sessionFile(i), b)
		if err != nil {
			return nil, fmt.Errorf("session %d: the log with its paths replaced does not decode: %w", i, err)
		}
		k.side.Logs = append(k.side.Logs, l)
		k.logs = append(k.logs, b)
	}
	return k, nil
}

// runPaths replaces a run's cwd and temp root, as written and with
// symbolic links resolved, longest first. The harness makes both, so they
// hold no character JSON escapes.
func runPaths(run *Run) *strings.Replacer {
	type pair struct{ old, new string }
	var ps []pair
	for _, p := range []pair{{run.Cwd, normalize.Cwd}, {run.Temp, "{{tmp}}"}} {
		ps = append(ps, p)
		if real, err := filepath.EvalSymlinks(p.old); err == nil && real != p.old {
			ps = append(ps, pair{real, p.new})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	var args []string
	for _, p := range ps {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// keepRun writes reel's output of one run to dir (see CorpusOptions.Keep).
func keepRun(dir string, run *Run, k *keptSide, res *CorpusResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, b []byte) error { return writeAtomic(filepath.Join(dir, name), b) }
	if k == nil {
		// The output could not be normalized: keep it raw.
		k = &keptSide{wire: run.Transcript, stderr: run.Stderr}
	}
	for i, b := range k.logs {
		if err := write(sessionFile(i), b); err != nil {
			return err
		}
	}
	if err := write("stdout.jsonl", k.wire); err != nil {
		return err
	}
	if err := write("stderr.txt", k.stderr); err != nil {
		return err
	}
	var rep strings.Builder
	for _, f := range res.Failures {
		rep.WriteString(f + "\n")
	}
	for _, u := range res.Unchecked {
		rep.WriteString("unchecked: " + u + "\n")
	}
	return write("report.txt", []byte(rep.String()))
}

// CorpusMain implements `reel snapshot --corpus DIR`: every scenario is
// listed as pass, FAIL (with the differences), partial (with what was not
// checked) or ineligible (with the first capability reel lacks; verbose
// lists them all), then the ineligible ones are grouped by that
// capability. It returns ErrFailed if a scenario failed.
func CorpusMain(ctx context.Context, dir string, o CorpusOptions, verbose bool, stdout io.Writer) error {
	results, err := RunCorpusDir(ctx, dir, o)
	if err != nil {
		return err
	}
	if o.Filter != nil && len(results) == 0 {
		return fmt.Errorf("snapshot --corpus: -run %q matches none of the corpus scenarios in %s", o.Filter.String(), dir)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CORPUS SCENARIO\tRESULT\tWALL MS\tNOTE")
	n := map[string]int{}
	for _, r := range results {
		n[r.Verdict]++
		note, wall := "", fmt.Sprintf("%.0f", float64(r.Wall.Microseconds())/1000)
		switch r.Verdict {
		case VerdictIneligible:
			note, wall = r.Ineligible(), ""
		case VerdictFail:
			note = firstLine(r.Failures[0])
		case VerdictPartial:
			note = "not checked: " + firstLine(r.Unchecked[0])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Verdict, wall, clipNote(note))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\n%d passed, %d failed, %d partial, %d ineligible\n", n[VerdictPass], n[VerdictFail], n[VerdictPartial], n[VerdictIneligible])
	printIneligible(stdout, results)
	for _, r := range results {
		switch r.Verdict {
		case VerdictFail:
			fmt.Fprintf(stdout, "\n--- FAIL %s\n", r.Name)
			for _, f := range r.Failures {
				fmt.Fprintln(stdout, f)
			}
			for _, u := range r.Unchecked {
				fmt.Fprintln(stdout, "unchecked: "+u)
			}
		case VerdictPartial:
			fmt.Fprintf(stdout, "\n--- PARTIAL %s\n", r.Name)
			for _, u := range r.Unchecked {
				fmt.Fprintln(stdout, "unchecked: "+u)
			}
		case VerdictIneligible:
			if verbose {
				fmt.Fprintf(stdout, "\n--- INELIGIBLE %s\n", r.Name)
				for _, m := range r.Missing {
					fmt.Fprintln(stdout, m)
				}
			}
		}
	}
	if o.Keep != "" {
		fmt.Fprintf(stdout, "\nreel's logs and transcripts are in %s (compare one with: reel log diff %s %s)\n",
			o.Keep, filepath.Join(dir, "SCENARIO"), filepath.Join(o.Keep, "SCENARIO"))
	}
	if n[VerdictFail] > 0 {
		return ErrFailed
	}
	return nil
}

// printIneligible groups the ineligible scenarios by their first missing
// capability.
func printIneligible(w io.Writer, results []CorpusResult) {
	var order []string
	by := map[string][]string{}
	for _, r := range results {
		if r.Verdict != VerdictIneligible {
			continue
		}
		k := r.Ineligible()
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r.Name)
	}
	if len(order) == 0 {
		return
	}
	sort.SliceStable(order, func(i, j int) bool { return len(by[order[i]]) > len(by[order[j]]) })
	fmt.Fprintln(w, "\nineligible, by the first capability reel lacks:")
	for _, k := range order {
		fmt.Fprintf(w, "  %s (%d): %s\n", k, len(by[k]), strings.Join(by[k], ", "))
	}
}

// clipNote keeps the table's note column to one readable width.
func clipNote(s string) string {
	const width = 150
	if r := []rune(s); len(r) > width {
		return string(r[:width]) + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// RunCorpusDir runs every scenario folder under dir (o.Jobs at a time) and
// returns the results in folder-name order.
func RunCorpusDir(ctx context.Context, dir string, o CorpusOptions) ([]CorpusResult, error) {
	dirs, err := scenario.Discover(dir)
	if err != nil {
		return nil, err
	}
	var sel []string
	for _, d := range dirs {
		if o.Filter == nil || o.Filter.MatchString(filepath.Base(d)) {
			sel = append(sel, d)
		}
	}
	results := make([]CorpusResult, len(sel))
	sem := make(chan struct{}, max(o.Jobs, 1))
	var wg sync.WaitGroup
	for i, d := range sel {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, missing, err := Eligible(d)
			switch {
			case err != nil:
				results[i] = CorpusResult{Name: filepath.Base(d), Verdict: VerdictFail, Failures: []string{err.Error()}}
			case len(missing) > 0:
				results[i] = CorpusResult{Name: filepath.Base(d), Verdict: VerdictIneligible, Missing: missing}
			default:
				results[i] = RunCorpus(ctx, c, o)
			}
		}()
	}
	wg.Wait()
	return results, nil
}
