package harness

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/logcmd"
)

// Main implements `reel snapshot`: it runs the scenario suite through exe
// (reel itself) and prints one progress line per scenario, a summary table
// and the failures' diffs. It returns ErrFailed when anything failed.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, exe string) error {
	fs := flag.NewFlagSet("reel snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	refresh := fs.Bool("refresh", false, "replay, then rewrite the expected logs and goldens from current behaviour (keyless)")
	record := fs.Bool("record", false, "record against a real provider (key from the environment) or, with --standin, the stand-in model")
	useStandin := fs.Bool("standin", false, "with --record: serve each scenario's standin.json from a local stand-in server")
	runPat := fs.String("run", "", "only scenarios whose name matches this regexp")
	jobs := fs.Int("j", runtime.NumCPU(), "scenarios run at once")
	verbose := fs.Bool("v", false, "also print each scenario's session log as a readable conversation")
	fixtures := fs.String("fixtures", "fixtures", "scenario folders")
	snapshots := fs.String("snapshots", "snapshots", "golden files")
	corpus := fs.String("corpus", "", "replay a folder of dsh corpus scenarios instead (see README)")
	provider := fs.String("provider", "deepseek", "with --record (no --standin): provider")
	model := fs.String("model", "", "with --record: model")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("reel snapshot takes no arguments (got %q)", fs.Args())
	}
	var filter *regexp.Regexp
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			return fmt.Errorf("-run: %w", err)
		}
		filter = re
	}
	if *corpus != "" {
		return CorpusMain(ctx, *corpus, exe, filter, *jobs, stdout)
	}
	if fi, err := os.Stat(*fixtures); err != nil || !fi.IsDir() {
		return fmt.Errorf("no scenario folder at %q: run reel snapshot from the repository root, or pass --fixtures DIR (and --snapshots DIR)", *fixtures)
	}
	mode := Replay
	switch {
	case *refresh && *record:
		return fmt.Errorf("--refresh and --record exclude each other")
	case *refresh:
		mode = Refresh
	case *record:
		mode = Record
	}
	suite := &Suite{
		Runner:    Runner{Exe: exe, Mode: mode},
		Fixtures:  *fixtures,
		Snapshots: *snapshots,
		Golden:    FileGolden{Update: mode != Replay},
		Filter:    filter,
		Jobs:      *jobs,
		Standin:   *useStandin,
	}
	if mode == Record && !*useStandin {
		suite.Runner.RecordArgs = []string{"--provider", *provider}
		if *model != "" {
			suite.Runner.RecordArgs = append(suite.Runner.RecordArgs, "--model", *model)
		}
		for _, k := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "REEL_BASE_URL"} {
			if v := os.Getenv(k); v != "" {
				suite.Runner.RecordEnv = append(suite.Runner.RecordEnv, k+"="+v)
			}
		}
	}
	start := time.Now()
	suite.Progress = func(r Result) {
		status := "ok  "
		if !r.OK() {
			status = "FAIL"
		}
		fmt.Fprintf(stdout, "%s %-32s %6.0f ms\n", status, r.Name, float64(r.Wall.Microseconds())/1000)
	}
	results, err := suite.Run(ctx)
	if err != nil {
		return err
	}
	wall := time.Since(start)
	failed := 0
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(stdout)
	fmt.Fprintln(tw, "SCENARIO\tRESULT\tWALL MS")
	for _, r := range results {
		status := "pass"
		if !r.OK() {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\n", r.Name, status, float64(r.Wall.Microseconds())/1000)
	}
	tw.Flush()
	var guard []string
	if filter == nil {
		guard = suite.Guard()
	}
	fmt.Fprintf(stdout, "\n%d scenario(s), %d failed, %d guard problem(s), mode %s, -j %d, %.2f s\n", len(results), failed, len(guard), mode, *jobs, wall.Seconds())
	for _, r := range results {
		for _, f := range r.Failures {
			fmt.Fprintf(stdout, "\n--- FAIL %s\n%s\n", r.Name, f)
		}
	}
	for _, g := range guard {
		fmt.Fprintf(stdout, "\n--- GUARD %s\n", g)
	}
	if *verbose {
		for _, r := range results {
			showConversation(stdout, filepath.Join(*fixtures, r.Name), filepath.Join(*snapshots, "prompts"))
		}
	}
	if failed > 0 || len(guard) > 0 {
		return ErrFailed
	}
	return nil
}

// showConversation prints a scenario's recorded logs as timelines, then
// the full text of every system prompt their headers refer to.
func showConversation(w io.Writer, dir, prompts string) {
	files, _ := filepath.Glob(filepath.Join(dir, "session*.jsonl"))
	for _, f := range files {
		fmt.Fprintf(w, "\n=== %s\n", f)
		if err := logcmd.Run(context.Background(), []string{"show", f}, w, w); err != nil {
			fmt.Fprintf(w, "(cannot show: %v)\n", err)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		names, _ := refsIn(raw)
		seen := map[string]bool{}
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			text, err := os.ReadFile(GoldenPath(prompts, name, ".md"))
			if err != nil {
				fmt.Fprintf(w, "\n--- system prompt %s: not pinned (%v)\n", name, err)
				continue
			}
			fmt.Fprintf(w, "\n--- system prompt {{prompt:%s}}\n%s", name, text)
		}
	}
}

// startStandin serves a scenario's stand-in script and returns its base URL.
func startStandin(ctx context.Context, script string) (string, func(), error) {
	s, err := standin.LoadScript(script)
	if err != nil {
		return "", nil, err
	}
	srv := standin.New(s, slog.New(slog.DiscardHandler))
	addr, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	return "http://" + addr + "/v1", func() { _ = srv.Close() }, nil
}

// readLog reads and validates a JSONL log.
func readLog(path string) (*jsonl.Decoded, error) {
	d, _, err := jsonl.ReadValid(path)
	return d, err
}
