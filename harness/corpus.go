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
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
)

// reelTools are the tools reel has; a corpus scenario whose recording calls
// anything else is outside reel's vocabulary.
var reelTools = []string{"bash", "read", "write", "edit", "glob", "grep", "todo_write"}

// CorpusResult is one corpus scenario's outcome.
type CorpusResult struct {
	Name string
	// Ineligible says why reel cannot replay it ("" when eligible).
	Ineligible string
	// Failures are what differed from the recording.
	Failures []string
	Wall     time.Duration
}

// CorpusCase is an eligible corpus scenario with what the recording says
// reel must reproduce.
type CorpusCase struct {
	Scenario *scenario.Scenario
	// Mode and Approval are the sandbox settings the recording ran under.
	Mode, Approval string
	// Calls are the recorded tool calls, in order: name and arguments.
	Calls []ToolCall
	// Expected is the recorded wire transcript (stdout.expected.jsonl).
	Expected []byte
}

// ToolCall is one tool call: its name and raw arguments.
type ToolCall struct{ Name, Arguments string }

var policyText = regexp.MustCompile(`Current DSH file policy: ([a-z-]+)`)

// Eligible decides whether reel can replay a corpus scenario and gathers
// what the run must reproduce. A non-empty reason means it cannot.
func Eligible(dir string) (*CorpusCase, string, error) {
	sc, err := scenario.Load(dir)
	var se *scenario.Error
	if errors.Is(err, scenario.ErrUnknownOp) && errors.As(err, &se) {
		// The corpus's vocabulary grows with the reference: a step reel's
		// vocabulary does not define is outside reel, not a broken run.
		return nil, strings.TrimPrefix(err.Error(), filepath.Dir(se.File)+string(filepath.Separator)), nil
	}
	if err != nil {
		return nil, "", err
	}
	for _, st := range sc.Input.Steps {
		// An op of the corpus's vocabulary reel's harness does not drive;
		// and prompts with content blocks (an image), which reel's agent
		// does not send to the model as recorded.
		if !st.Driven() || st.Op == scenario.OpPromptContent {
			return nil, fmt.Sprintf("uses step %s", st.Op), nil
		}
	}
	if len(sc.Sessions) == 0 {
		return nil, "has no session.jsonl", nil
	}
	if len(sc.Sessions) > 1 {
		return nil, "records child (subagent) sessions", nil
	}
	expected, err := os.ReadFile(filepath.Join(dir, "stdout.expected.jsonl"))
	if err != nil {
		return nil, "has no stdout.expected.jsonl", nil
	}
	d, err := readLog(sc.Sessions[0])
	if err != nil {
		return nil, "", err
	}
	c := &CorpusCase{Scenario: sc, Mode: "danger-full-access", Approval: "on-request", Expected: expected}
	prompts, turns := 0, 0
	for _, st := range sc.Input.Steps {
		if st.IsPrompt() {
			prompts++
		}
	}
	for i := range d.Events {
		e := &d.Events[i]
		switch {
		case e.Type == sessionlog.TypeTurnStart:
			turns++
		case e.Type == sessionlog.TypeToolCall:
			tc, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil {
				return nil, "", err
			}
			if !slices.Contains(reelTools, tc.Name) {
				return nil, fmt.Sprintf("uses tool %s", tc.Name), nil
			}
			c.Calls = append(c.Calls, ToolCall{tc.Name, tc.Arguments})
		case strings.HasPrefix(e.Type, "hook/"):
			return nil, "uses hooks", nil
		case strings.HasPrefix(e.Type, "subagent/"), strings.HasPrefix(e.Type, "tool-workflow/"):
			return nil, "uses subagents", nil
		case e.Type == sessionlog.TypeSandboxMode:
			if m, err := sessionlog.DecodeData[sessionlog.SandboxModeData](e); err == nil {
				c.Mode = m.Mode
			}
		case e.Type == sessionlog.TypeUserMessage:
			if m := policyText.FindSubmatch(e.Data); m != nil {
				c.Mode = string(m[1])
			}
			if bytes.Contains(e.Data, []byte("Approval prompts are disabled")) {
				c.Approval = "never"
			}
		}
	}
	if turns < prompts {
		return nil, fmt.Sprintf("sends %d prompt(s) but recorded %d turn(s): a prompt was handled outside the model (e.g. blocked by a hook)", prompts, turns), nil
	}
	if _, err := replay.Load(d.Events, sc.OverridePath); err != nil {
		return nil, fmt.Sprintf("has no replayable model script (%v)", err), nil
	}
	return c, "", nil
}

// RunCorpus replays one eligible corpus scenario through reel and checks
// the tool calls, the agent's text and the prompt outcomes against the
// recording.
func RunCorpus(ctx context.Context, exe string, c *CorpusCase) CorpusResult {
	res := CorpusResult{Name: c.Scenario.Name}
	r := Runner{Exe: exe, Mode: Replay, ExtraArgs: []string{"--mode", c.Mode, "--approval", c.Approval}}
	run, err := r.Execute(ctx, c.Scenario)
	if run != nil {
		res.Wall = run.Wall
		defer os.RemoveAll(run.Temp)
	}
	if err != nil {
		res.Failures = append(res.Failures, err.Error())
		return res
	}
	var got []ToolCall
	for _, id := range run.SessionIDs {
		d, err := readLog(filepath.Join(run.StateDir, id+".jsonl"))
		if err != nil {
			res.Failures = append(res.Failures, err.Error())
			return res
		}
		for i := range d.Events {
			if d.Events[i].Type == sessionlog.TypeToolCall {
				tc, _ := sessionlog.DecodeData[sessionlog.ToolCallData](&d.Events[i])
				got = append(got, ToolCall{tc.Name, tc.Arguments})
			}
		}
	}
	if !slices.Equal(got, c.Calls) {
		res.Failures = append(res.Failures, fmt.Sprintf("tool calls differ:\n  recorded %v\n  reel     %v", c.Calls, got))
	}
	wantText, wantStops := wireSummary(c.Expected)
	gotText, gotStops := wireSummary(run.Transcript)
	if wantText != gotText {
		res.Failures = append(res.Failures, fmt.Sprintf("agent text differs:\n  recorded %q\n  reel     %q", wantText, gotText))
	}
	if !slices.Equal(wantStops, gotStops) {
		res.Failures = append(res.Failures, fmt.Sprintf("prompt outcomes differ:\n  recorded %v\n  reel     %v", wantStops, gotStops))
	}
	return res
}

// wireSummary extracts, from a wire transcript, the agent's message text
// (all agent_message_chunk text, concatenated) and the outcome of every
// session/prompt answer in order (the stop reason, or "error").
func wireSummary(transcript []byte) (string, []string) {
	var text strings.Builder
	var stops []string
	for _, line := range bytes.Split(transcript, []byte("\n")) {
		var f struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					Content       struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
			Result *struct {
				StopReason *string `json:"stopReason"`
			} `json:"result"`
			Error *json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		switch {
		case f.Method == "session/update" && f.Params.Update.SessionUpdate == "agent_message_chunk":
			text.WriteString(f.Params.Update.Content.Text)
		case f.Method == "" && f.Result != nil && f.Result.StopReason != nil:
			stops = append(stops, *f.Result.StopReason)
		case f.Method == "" && f.Error != nil:
			stops = append(stops, "error")
		}
	}
	return text.String(), stops
}

// CorpusMain implements `reel snapshot --corpus DIR`: every scenario is
// listed as passed, failed or ineligible with the reason; it returns
// ErrFailed if an eligible scenario failed.
func CorpusMain(ctx context.Context, dir, exe string, filter *regexp.Regexp, jobs int, stdout io.Writer) error {
	results, err := RunCorpusDir(ctx, dir, exe, filter, jobs)
	if err != nil {
		return err
	}
	if filter != nil && len(results) == 0 {
		return fmt.Errorf("snapshot --corpus: -run %q matches none of the corpus scenarios in %s", filter.String(), dir)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CORPUS SCENARIO\tRESULT\tWALL MS\tNOTE")
	failed, passed, skipped := 0, 0, 0
	for _, r := range results {
		switch {
		case r.Ineligible != "":
			skipped++
			fmt.Fprintf(tw, "%s\tineligible\t\t%s\n", r.Name, r.Ineligible)
		case len(r.Failures) > 0:
			failed++
			fmt.Fprintf(tw, "%s\tFAIL\t%.0f\t%s\n", r.Name, float64(r.Wall.Microseconds())/1000, firstLine(r.Failures[0]))
		default:
			passed++
			fmt.Fprintf(tw, "%s\tpass\t%.0f\t\n", r.Name, float64(r.Wall.Microseconds())/1000)
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\n%d passed, %d failed, %d ineligible\n", passed, failed, skipped)
	for _, r := range results {
		for _, f := range r.Failures {
			fmt.Fprintf(stdout, "\n--- FAIL %s\n%s\n", r.Name, f)
		}
	}
	if failed > 0 {
		return ErrFailed
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// RunCorpusDir runs every scenario folder under dir (jobs at a time).
func RunCorpusDir(ctx context.Context, dir, exe string, filter *regexp.Regexp, jobs int) ([]CorpusResult, error) {
	dirs, err := scenario.Discover(dir)
	if err != nil {
		return nil, err
	}
	var sel []string
	for _, d := range dirs {
		if filter == nil || filter.MatchString(filepath.Base(d)) {
			sel = append(sel, d)
		}
	}
	results := make([]CorpusResult, len(sel))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for i, d := range sel {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, why, err := Eligible(d)
			switch {
			case err != nil:
				results[i] = CorpusResult{Name: filepath.Base(d), Failures: []string{err.Error()}}
			case why != "":
				results[i] = CorpusResult{Name: filepath.Base(d), Ineligible: why}
			default:
				results[i] = RunCorpus(ctx, exe, c)
			}
		}()
	}
	wg.Wait()
	return results, nil
}
