package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/internal/termtext"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/logcmd"
)

// snapshotSummary is the paragraph `reel snapshot -h` starts with.
const snapshotSummary = `usage: reel snapshot [flags]

Runs the scenario suite: every folder under fixtures/ (layout and file
formats: docs/scenarios.md) is played through this reel binary over ACP by a
scripted client, and its stdout transcript, session logs, system prompts and
tool schemas are compared with the committed expectations (fixtures/*/
session*.jsonl, snapshots/). The default, replay, needs no key and no
network: model calls are served from the fixture's own log. --refresh
replays and then rewrites the expected files from current behaviour (the
fix after an intended change); --record re-records against a real provider,
or with --standin against each scenario's scripted stand-in model. Failures
are grouped by cause, and a failing run ends with the command that
refreshes. --corpus DIR instead replays the reference system's recordings
and judges each run's equivalence with its recording: pass, FAIL (with the
differences), partial (with what was not checked) or ineligible (with what
reel lacks). Exit status: 0 all passed, 1 anything failed or a usage error.

flags:
`

// snapshotTrailer is the part of `reel snapshot -h` after the flags.
const snapshotTrailer = `
environment:
  DEEPSEEK_API_KEY  with --record (no --standin) and --provider deepseek: the key
  OPENAI_API_KEY    with --record (no --standin) and --provider openai: the key
  REEL_BASE_URL     with --record (no --standin): the provider's base URL
  (replay and --refresh read no variables; --record --standin needs no key)
  go test ./harness/ runs the same suite and reads REEL_SNAPSHOT=replay|refresh|record
  and UPDATE_SNAPS=true (rewrite goldens) or UPDATE_SNAPS=clean (drop obsolete ones).

examples:
  go run ./cmd/reel snapshot                          replay everything, keyless
  go run ./cmd/reel snapshot -run 'cancel' -v         some scenarios, with their conversations
  go run ./cmd/reel snapshot --refresh                accept the current behaviour
  go run ./cmd/reel snapshot --record --standin -run text-turn
  go run ./cmd/reel snapshot --shard 2/4 --junit snapshot.xml   one of four CI machines

See docs/scenarios.md for input.json, standin.json and replay.override.json.
`

// parseFlags parses args with fs. A help request prints summary, the flags
// and trailer to stdout and returns flag.ErrHelp (the caller exits 0); a
// parse error is returned wrapped, naming the command.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, summary, trailer string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, summary)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fmt.Fprint(stdout, trailer)
		return flag.ErrHelp
	}
	if err != nil {
		return fmt.Errorf("%s: %w (run `%s -h` for the flags)", strings.TrimPrefix(fs.Name(), "reel "), err, fs.Name())
	}
	return nil
}

// Main implements `reel snapshot`: it runs the scenario suite through exe
// (reel itself) and prints one progress line per scenario, a summary table,
// a summary line with counts and time, and the failures grouped by cause.
// It returns ErrFailed when anything failed, and flag.ErrHelp (after
// printing the help to stdout) for -h or --help.
//
// Reports and diffs quote the model's and its tools' text: stdout and
// stderr go through a termtext.Writer, so control characters reach the
// terminal escaped.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, exe string) error {
	out, errw := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	err := mainRun(ctx, args, out, errw, exe)
	for _, w := range []*termtext.Writer{out, errw} {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func mainRun(ctx context.Context, args []string, stdout, stderr io.Writer, exe string) error {
	fs := flag.NewFlagSet("reel snapshot", flag.ContinueOnError)
	refresh := fs.Bool("refresh", false, "replay, then rewrite the expected logs and goldens from current behaviour (keyless)")
	record := fs.Bool("record", false, "record against a real provider (key from the environment) or, with --standin, the stand-in model")
	useStandin := fs.Bool("standin", false, "with --record: serve each scenario's standin.json from a local stand-in server")
	runPat := fs.String("run", "", "only scenarios whose name (folder name) matches this regexp; matching none is an error")
	shardFlag := fs.String("shard", "", "run only shard `K/N` (K from 1): a stable share of the scenarios by name hash, for splitting across CI machines")
	junit := fs.String("junit", "", "also write a JUnit XML report to `FILE` (one testcase per scenario)")
	jobs := fs.Int("j", runtime.NumCPU(), "scenarios run at once")
	verbose := fs.Bool("v", false, "also print each scenario's session log as a readable conversation (with --corpus: every capability an ineligible scenario lacks)")
	fixtures := fs.String("fixtures", "fixtures", "scenario folders")
	snapshots := fs.String("snapshots", "snapshots", "golden files")
	corpus := fs.String("corpus", "", "replay a folder of dsh corpus scenarios instead and check each for equivalence with its recording (see docs/scenarios.md)")
	keep := fs.String("keep", "", "with --corpus: write reel's session logs and transcript of each scenario to `DIR`/<scenario>/ (for reel log diff)")
	provider := fs.String("provider", "deepseek", "with --record (no --standin): provider")
	model := fs.String("model", "", "with --record: model")
	if err := parseFlags(fs, args, stdout, snapshotSummary, snapshotTrailer); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("reel snapshot takes no arguments (got %q); to select scenarios use -run REGEXP", fs.Args())
	}
	var filter *regexp.Regexp
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			return fmt.Errorf("snapshot -run: %w", err)
		}
		filter = re
	}
	var shard Shard
	if *shardFlag != "" {
		var err error
		if shard, err = ParseShard(*shardFlag); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if *corpus != "" {
		switch {
		case *refresh || *record:
			return fmt.Errorf("snapshot: --corpus replays the reference's recordings and compares reel with them; it cannot --refresh or --record them (they are the reference system's output, not reel's)")
		case *useStandin:
			return fmt.Errorf("snapshot: --standin applies to --record of the fixtures suite, not to --corpus")
		case *shardFlag != "" || *junit != "":
			return fmt.Errorf("snapshot: --shard and --junit apply to the fixtures suite, not to --corpus")
		}
		return CorpusMain(ctx, *corpus, CorpusOptions{Exe: exe, Filter: filter, Jobs: *jobs, Keep: *keep}, *verbose, stdout)
	}
	if *keep != "" {
		return fmt.Errorf("snapshot: --keep applies to --corpus (the fixtures suite compares with the committed logs; see --refresh)")
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
	if filter != nil {
		if err := matchesSome(*fixtures, filter); err != nil {
			return err
		}
	}
	if os.Getenv("GOGC") == "" {
		// The harness's garbage is short-lived (a scenario's transcript,
		// logs and their normalized copies), and its collector's CPU is
		// taken from the agents it runs: collect less often (the heap
		// stays a few tens of MB).
		debug.SetGCPercent(400)
	}
	suite := &Suite{
		Runner:    Runner{Exe: exe, Mode: mode, ScratchDir: scratchRoot()},
		Fixtures:  *fixtures,
		Snapshots: *snapshots,
		Golden:    FileGolden{Update: mode != Replay},
		Filter:    filter,
		Jobs:      *jobs,
		Standin:   *useStandin,
		Shard:     shard,
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
	// The guard looks at the fixtures as a whole: only an unfiltered run
	// checks it, and of a sharded run only shard 1.
	guarded := filter == nil && shard.Index <= 1
	var guard []string
	if guarded {
		guard = suite.Guard()
	}
	sharded := ""
	if shard.Count > 0 {
		sharded = ", shard " + shard.String()
	}
	fmt.Fprintf(stdout, "\n%d scenario(s), %d failed, %d guard problem(s), mode %s%s, -j %d, %.2f s\n", len(results), failed, len(guard), mode, sharded, *jobs, wall.Seconds())
	printFailures(stdout, results)
	for _, g := range guard {
		fmt.Fprintf(stdout, "\n--- GUARD %s\n", g)
	}
	if *verbose {
		for _, r := range results {
			showConversation(stdout, filepath.Join(*fixtures, r.Name), filepath.Join(*snapshots, "prompts"))
		}
	}
	if *junit != "" {
		if err := WriteJUnit(*junit, results, guard, guarded, wall); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if failed > 0 && mode == Replay {
		fmt.Fprintf(stdout, "\nIf the changes are intended, accept them with:\n  %s\n", refreshCommand(*runPat, *fixtures, *snapshots))
	}
	if failed > 0 || len(guard) > 0 {
		return ErrFailed
	}
	return nil
}

// matchesSome refuses a -run filter that selects none of the scenarios
// under fixtures, naming the pattern and how many scenarios there are.
func matchesSome(fixtures string, filter *regexp.Regexp) error {
	dirs, err := scenario.Discover(fixtures)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for _, d := range dirs {
		if filter.MatchString(filepath.Base(d)) {
			return nil
		}
	}
	if len(dirs) == 0 {
		return fmt.Errorf("snapshot: -run %q matches nothing: %s holds no scenario folders (folders with an input.json)", filter.String(), fixtures)
	}
	which := fmt.Sprintf("matches none of the %d scenarios", len(dirs))
	if len(dirs) == 1 {
		which = "does not match the only scenario"
	}
	return fmt.Errorf("snapshot: -run %q %s in %s (it is matched against folder names, e.g. %s)", filter.String(), which, fixtures, filepath.Base(dirs[0]))
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
