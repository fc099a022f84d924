package acpcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/reel-agent/reel/agent/lsp"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/acpserver"
	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/hooks"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/llm/openai"
	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/mcp/mcpreplay"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// ErrUsage reports bad command-line arguments.
var ErrUsage = errors.New("usage")

// IO is the process environment a command runs in.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (os.Getenv in main).
	Getenv func(string) string
	// Executable is the path of the running reel binary (for sandbox-exec).
	Executable string
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// Options are the parsed flags of reel acp.
type Options struct {
	StateDir       string
	Store          string
	Compress       bool
	Provider       string
	Model          string
	BaseURL        string
	Replay         []string
	ReplayOverride string
	Mode           string
	Approval       string
	Invariant      bool
	// ChildAfterTurn, HoldForChildren, FailSubagentStart and
	// FailSubagentTurn are agent.Config's.
	ChildAfterTurn, HoldForChildren bool
	// LingerAfterTurn is agent.Config's (a fault switch for tests).
	LingerAfterTurn bool
	// JobWaitSignal is agent.Config's, made absolute against the
	// working directory reel started in.
	JobWaitSignal     string
	FailSubagentStart bool
	FailSubagentTurn  int
	// MissingSandboxRunner is the fault switch sandbox.MissingRunner.
	MissingSandboxRunner bool
	// MaxSubagentDepth is agent.Config.MaxSubagentDepth, 1 to
	// maxSubagentDepth.
	MaxSubagentDepth int
	LogLevel         string
	MaxTokens        int
	// MaxResponseBytes caps one model response in bytes (text, reasoning
	// and tool-call arguments together).
	MaxResponseBytes int
	SessionID        string
	ContextWindow    int
	WriteTimeout     time.Duration
	// ListPageSize is the sessions per session/list page (0: the default).
	ListPageSize int
	// Network is "on" (confined commands may use the network) or "off"
	// (TCP connect and bind denied by Landlock; fails closed below ABI 4).
	Network string
	// Standin is a stand-in script: the agent serves it in process on
	// 127.0.0.1 and talks to it as its model, with no key.
	Standin string
	// InlineBytes caps a bash result before it is spilled (0: the
	// default, 50000).
	InlineBytes int
	// GlobMaxResults caps the paths a glob result shows (0: the default,
	// 100); GlobSample samples a longer result across top-level entries.
	GlobMaxResults int
	GlobSample     bool
	// GlobNoSpill keeps an over-cap glob result from saving its list.
	GlobNoSpill bool
	// Terminals offers the persistent terminal tools (terminal_open, …).
	Terminals bool
	// SessionQuery offers session_event_read (agent.Config.SessionQuery).
	SessionQuery bool
	// LSP turns the lsp tool on with the default servers; LSPServers
	// (JSON, lsp.ParseServer) replace them and turn it on too.
	// LSPMaxLocations and LSPTimeout bound its results and calls (0: the
	// defaults).
	LSP             bool
	LSPServers      []string
	LSPMaxLocations int
	LSPTimeout      time.Duration
	// lsp is the lsp configuration the flags above describe (nil: off).
	lsp *lsp.Config
	// CodeMode offers the model run_code alone (package codemode);
	// CodeCompute, CodeMaxCalls and CodeMaxHeapMB bound each run (0: the
	// defaults).
	CodeMode      bool
	CodeCompute   time.Duration
	CodeMaxCalls  int
	CodeMaxHeapMB int
	// RootMarkers are the file names marking the project root for
	// instruction files (comma-separated on the command line; "": .git).
	RootMarkers string
	// NoInstructions, NoReadGuard and NoRepeatReminders turn the
	// behaviours the README's "What the agent does for you" lists off.
	NoInstructions, NoReadGuard, NoRepeatReminders bool
	// NoSkills turns skills (SKILL.md packs) off.
	NoSkills bool
	// NoTitleModel keeps sessions on their fallback title (the model is
	// not asked for one); ReplayTitleOverride serves the replayed title
	// calls from a file instead of the recorded titles.
	NoTitleModel bool
	// Checkpoints captures the workspace before each turn's first tool
	// call (state dir's sibling "checkpoints") and offers /undo, /rewind
	// and /checkpoints.
	Checkpoints bool
	// RestoreHold is agent.Config's (debug).
	RestoreHold int
	// DebugClock replaces the wall clock of the log's event times with
	// steppingClock's (deterministic recordings).
	DebugClock          bool
	ReplayTitleOverride string
	// Prices is a price file overriding the built-in price table
	// (--prices; acpserver.ParsePrices).
	Prices string
	// ReplayMatch is how much of each model request a replay compares with
	// the recorded one: full, messages or off (replay.MatchModes).
	ReplayMatch string
	// ReplayPins is the folder of pinned prompts and tool lists the
	// recordings' {{prompt:NAME}} and {{tools:NAME}} references name.
	ReplayPins string
	// Hooks and CodexHooks are hook config files of the Claude Code and
	// the Codex dialect (repeatable; relative to the launch directory).
	Hooks, CodexHooks []string
	// ImageInput is "auto" (the model takes images when reel's table of
	// models says so, openai.TakesImages), "on" or "off".
	ImageInput string
	// MCPTrust names the MCP servers whose tools run without asking
	// ("*": all).
	MCPTrust []string
	// ModelList is the comma-separated --models.
	ModelList string
}

// helpText introduces reel acp's -h output; the flags follow, then
// helpEnv.
const helpText = `usage: reel acp [flags]

Serve the Agent Client Protocol (ACP) on stdin/stdout, for an editor such as
Zed: stdout carries JSON-RPC frames only, diagnostics go to stderr. Every
session is logged durably under --state-dir and can be loaded again. The
model is DeepSeek (default) or OpenAI, with the key from the environment; a
--base-url on a loopback host needs no key, --standin SCRIPT runs a scripted
stand-in model in process (no key, no network), and --replay LOG serves the
model calls recorded in a session log.

flags:
`

// helpEnv lists the environment reel acp reads and gives examples.
const helpEnv = `
environment:
  DEEPSEEK_API_KEY  key for --provider deepseek (not needed for a loopback --base-url or --standin)
  OPENAI_API_KEY    key for --provider openai (likewise)
  REEL_PROVIDER     default of --provider
  REEL_MODEL        default of --model
  REEL_BASE_URL     default of --base-url
  XDG_STATE_HOME    state root: sessions go to $XDG_STATE_HOME/reel/sessions
  HOME              without XDG_STATE_HOME: ~/.local/state/reel/sessions
  The key variables (and REEL_API_KEY) are removed from the environment of
  the commands the agent runs.

examples:
  DEEPSEEK_API_KEY=sk-... reel acp
  reel acp --standin standin.json --state-dir /tmp/reel-state
  reel acp --base-url http://127.0.0.1:8080/v1 --model local-model
`

// DefaultStateDir is $XDG_STATE_HOME/reel/sessions (~/.local/state/reel/sessions).
func DefaultStateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "reel", "sessions")
	}
	home := getenv("HOME")
	if home == "" {
		home = os.TempDir()
	}
	return filepath.Join(home, ".local", "state", "reel", "sessions")
}

func parse(args []string, env IO) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("reel acp", flag.ContinueOnError)
	fs.StringVar(&o.StateDir, "state-dir", DefaultStateDir(env.Getenv), "directory of session logs")
	fs.StringVar(&o.Store, "store", "jsonl", "session store: jsonl or sqlite")
	fs.BoolVar(&o.Compress, "compress", false, "zstd-compress JSONL session logs")
	fs.StringVar(&o.Provider, "provider", firstNonEmpty(env.Getenv("REEL_PROVIDER"), "deepseek"), "model provider: deepseek or openai ($REEL_PROVIDER)")
	fs.StringVar(&o.Model, "model", env.Getenv("REEL_MODEL"), "model name ($REEL_MODEL; default per provider)")
	fs.StringVar(&o.BaseURL, "base-url", env.Getenv("REEL_BASE_URL"), "OpenAI-compatible base URL ($REEL_BASE_URL; default per provider)")
	fs.Var((*multiFlag)(&o.Replay), "replay", "serve model calls from the recorded session `LOG` instead of a provider (repeat: one per session, in order)")
	fs.StringVar(&o.ReplayOverride, "replay-override", "", "replay.override.json for the first --replay log")
	fs.StringVar(&o.Mode, "mode", string(sandbox.WorkspaceWrite), "default sandbox mode: read-only, workspace-write, danger-full-access")
	fs.StringVar(&o.Approval, "approval", agent.ApprovalOnRequest, "approval policy for sandbox escalation: on-request or never")
	fs.BoolVar(&o.Invariant, "debug-invariant", false, "rebuild every request from the log before sending it and fail on a mismatch")
	fs.BoolVar(&o.ChildAfterTurn, "debug-child-after-turn", false, "a background subagent's activation waits until the parent's turn that started it ended and its turn loop ran out of work: its prompt answered, or held for its children (deterministic recordings)")
	fs.BoolVar(&o.LingerAfterTurn, "debug-linger-after-turn", false, "inject a delay: after each turn a session waits, before it takes its next work or answers its prompt, until its background subagents settled or one waits for it (tests)")
	fs.StringVar(&o.JobWaitSignal, "debug-job-wait-signal", "", "create `FILE` each time a job_output wait has registered as a waiter of a running job, so a job can end right after its wait began (deterministic recordings)")
	fs.IntVar(&o.MaxSubagentDepth, "max-subagent-depth", agent.DefaultMaxSubagentDepth, "how deep subagents may nest: a child at depth d (the root's children are at 1) may start children while d+1 is at most this")
	fs.BoolVar(&o.MissingSandboxRunner, "debug-missing-sandbox-runner", false, "inject a fault: the sandbox runner of every bash command is a file that does not exist, so no command can start (tests)")
	fs.BoolVar(&o.FailSubagentStart, "debug-fail-subagent-start", false, "inject a fault: every subagent fails right after its log is created (tests)")
	fs.IntVar(&o.FailSubagentTurn, "debug-fail-subagent-turn", 0, "inject a fault: a subagent's turn `N` ends with an error before its first step (tests)")
	fs.BoolVar(&o.HoldForChildren, "debug-hold-for-children", false, "a prompt is answered, and a report is taken, only once the background subagents the session started have settled (deterministic recordings)")
	fs.StringVar(&o.LogLevel, "log-level", "warn", "stderr log level: debug, info (adds a line per model request and per session event), warn (default: warnings and errors only), error")
	fs.IntVar(&o.MaxTokens, "max-tokens", 0, "cap on tokens per model response (0: provider default)")
	fs.IntVar(&o.MaxResponseBytes, "max-response-bytes", agent.DefaultMaxResponseBytes, "cap on one model response in bytes (text, reasoning and tool-call arguments); past it the stream is stopped and the step ends as max-tokens")
	fs.IntVar(&o.ContextWindow, "context-window", 0, "model context window in tokens; compaction starts at 80% (0: per-model default)")
	fs.StringVar(&o.SessionID, "session-id", "", "id of the first session/new (lets a script address it)")
	fs.StringVar(&o.Network, "network", "on", "network for confined commands: on, or off (TCP connect/bind denied; needs Landlock ABI 4)")
	fs.DurationVar(&o.WriteTimeout, "write-timeout", acpserver.DefaultWriteTimeout, "a client that does not read a frame within this long is treated as gone")
	fs.IntVar(&o.ListPageSize, "list-page-size", 0, "sessions per session/list page; more pages are reached with nextCursor (0: 50)")
	fs.IntVar(&o.InlineBytes, "inline-bytes", 0, "bash result size shown to the model before it is spilled to a file (0: 50000)")
	fs.IntVar(&o.GlobMaxResults, "glob-max-results", 0, "paths a glob result shows (0: 100; at most 1000)")
	fs.BoolVar(&o.Terminals, "terminals", false, "offer the persistent terminal tools (terminal_open, terminal_send, terminal_read, terminal_signal, terminal_list, terminal_close): a shell on a PTY per terminal, under the session's sandbox mode")
	fs.BoolVar(&o.SessionQuery, "session-query", false, "offer the session query tool session_event_read: the model reads events of its own session's log by seq")
	fs.BoolVar(&o.GlobNoSpill, "glob-no-spill", false, "do not save the whole sorted list of a glob result over --glob-max-results to a spill file")
	fs.BoolVar(&o.GlobSample, "glob-sample", false, "sample a glob result over --glob-max-results across top-level entries instead of showing its first paths by modification time")
	fs.BoolVar(&o.LSP, "lsp", false, "offer the lsp tool (definition, references, implementation, hover) with the default language servers: typescript-language-server and gopls")
	fs.Var((*multiFlag)(&o.LSPServers), "lsp-server", "offer the lsp tool with the language server `JSON` ({\"name\",\"command\",\"args\",\"extensions\":{\".ext\":\"language id\"}}) instead of the defaults (repeatable)")
	fs.IntVar(&o.LSPMaxLocations, "lsp-max-locations", 0, "locations an lsp result lists (0: 100)")
	fs.DurationVar(&o.LSPTimeout, "lsp-timeout", 0, "bound on one lsp call, starting its language server included (0: 60s)")
	fs.BoolVar(&o.CodeMode, "code-mode", false, "offer the model run_code alone: it calls the other tools from JavaScript programs")
	fs.DurationVar(&o.CodeCompute, "code-compute", 0, "JavaScript time one run_code program may use, tool calls not counted (0: 60s)")
	fs.IntVar(&o.CodeMaxCalls, "code-max-calls", 0, "tool calls one run_code program may make (0: 1000)")
	fs.IntVar(&o.CodeMaxHeapMB, "code-max-heap-mb", 0, "MiB the heap may grow while a run_code program runs (0: 512)")
	fs.StringVar(&o.RootMarkers, "instruction-root-markers", "", "comma-separated names marking the project root for AGENTS.md/CLAUDE.md discovery (default .git)")
	fs.BoolVar(&o.NoInstructions, "no-instructions", false, "do not inject AGENTS.md / CLAUDE.md files")
	fs.BoolVar(&o.NoReadGuard, "no-read-guard", false, "let write and edit change files the session has not read")
	fs.BoolVar(&o.NoRepeatReminders, "no-repeat-reminders", false, "no reminders for repeated identical tool calls")
	fs.BoolVar(&o.NoSkills, "no-skills", false, "no skills: no skill catalog, skill packs or skill slash commands")
	fs.BoolVar(&o.Checkpoints, "checkpoints", false, "capture the workspace before each turn's first tool call and offer /undo, /rewind N and /checkpoints")
	fs.BoolVar(&o.DebugClock, "debug-clock", false, "stamp log events with a clock that starts at 2026-01-01T00:00:00Z and advances 1 ms per reading, not the wall clock (deterministic recordings)")
	fs.IntVar(&o.RestoreHold, "debug-restore-hold", 0, "stop every checkpoint restore for good after `N` files, so a test can kill reel in mid-restore")
	fs.BoolVar(&o.NoTitleModel, "no-title-model", false, "title sessions by their first prompt's first words only; do not ask the model for a title after the first turn")
	fs.StringVar(&o.ReplayTitleOverride, "replay-title-override", "", "serve the replayed title calls of the first --replay log from `FILE` (the format of replay.override.json) instead of the recorded titles")
	fs.StringVar(&o.ReplayMatch, "replay-match", replay.MatchFull, "how much of each model request a replay checks against the recorded one before answering: full (header reason, system prompt, tool schemas, messages), messages (header reason and messages; tool results by call id and error flag) or off")
	fs.StringVar(&o.ReplayPins, "replay-pins", "", "folder of pinned prompts and tool lists (prompts/NAME_1.snap.md, tools/NAME_1.snap.json) that the --replay logs' {{prompt:NAME}} and {{tools:NAME}} references name")
	fs.Var((*multiFlag)(&o.Hooks), "hooks", "run the Claude Code hooks of `FILE` (a hooks.json, or a settings.json with a \"hooks\" key; repeatable)")
	fs.Var((*multiFlag)(&o.CodexHooks), "codex-hooks", "run the Codex hooks of `FILE` (a Codex hooks.json; repeatable)")
	fs.StringVar(&o.ModelList, "models", "", "comma-separated `MODELS` an editor may pick per session (its model picker); default: the provider's known models when --model is one of them, else none")
	fs.Var((*multiFlag)(&o.MCPTrust), "mcp-trust", "run the tools of the MCP server `NAME` (as the editor names it) without asking; \"*\" trusts every server (repeatable)")
	fs.StringVar(&o.ImageInput, "image-input", "auto", "whether the model takes images (prompt images, read_image): auto (by model name: deepseek-v4-flash-vision-exp, gpt-4o, gpt-4.1, gpt-5, …), on or off")
	fs.StringVar(&o.Prices, "prices", "", "price table `FILE` for usage_update's cost (docs/cost.md): {\"models\":{NAME:{\"input\",\"cachedInput\",\"output\" per million tokens,\"currency\"}}}, overriding the built-in prices")
	fs.StringVar(&o.Standin, "standin", "", "serve the stand-in script `SCRIPT` (the format of reel standin) in process on 127.0.0.1 and use it as the model; no key needed")
	// The flag package prints nothing itself: a mistake is one line on
	// stderr (from main), and -h is the help, on stdout, with exit 0.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(env.Stdout)
			fmt.Fprint(env.Stdout, helpText)
			fs.PrintDefaults()
			fmt.Fprint(env.Stdout, helpEnv)
			return o, err
		}
		return o, fmt.Errorf("%w: %v (reel acp -h lists the flags)", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("%w: reel acp takes no arguments (got %q)", ErrUsage, fs.Args())
	}
	if o.JobWaitSignal != "" {
		abs, err := filepath.Abs(o.JobWaitSignal)
		if err != nil {
			return o, fmt.Errorf("%w: --debug-job-wait-signal %q: %v", ErrUsage, o.JobWaitSignal, err)
		}
		o.JobWaitSignal = abs
	}
	if !sandbox.ValidMode(o.Mode) {
		return o, fmt.Errorf("%w: --mode %q: want read-only, workspace-write or danger-full-access", ErrUsage, o.Mode)
	}
	if o.Approval != agent.ApprovalOnRequest && o.Approval != agent.ApprovalNever {
		return o, fmt.Errorf("%w: --approval %q: want on-request or never", ErrUsage, o.Approval)
	}
	if o.Network != "on" && o.Network != "off" {
		return o, fmt.Errorf("%w: --network %q: want on or off", ErrUsage, o.Network)
	}
	if o.ImageInput != "auto" && o.ImageInput != "on" && o.ImageInput != "off" {
		return o, fmt.Errorf("%w: --image-input %q: want auto, on or off", ErrUsage, o.ImageInput)
	}
	if o.MaxResponseBytes <= 0 {
		return o, fmt.Errorf("%w: --max-response-bytes %d: want a positive number of bytes", ErrUsage, o.MaxResponseBytes)
	}
	if o.ListPageSize < 0 {
		return o, fmt.Errorf("%w: --list-page-size %d: want 0 (the default) or more", ErrUsage, o.ListPageSize)
	}
	if o.InlineBytes < 0 {
		return o, fmt.Errorf("%w: --inline-bytes %d: want 0 (the default) or more", ErrUsage, o.InlineBytes)
	}
	if o.MaxSubagentDepth < 1 || o.MaxSubagentDepth > maxSubagentDepth {
		return o, fmt.Errorf("%w: --max-subagent-depth %d: want 1 to %d", ErrUsage, o.MaxSubagentDepth, maxSubagentDepth)
	}
	if o.GlobMaxResults < 0 || o.GlobMaxResults > tools.MaxListEntries {
		return o, fmt.Errorf("%w: --glob-max-results %d: want 0 (the default) to %d", ErrUsage, o.GlobMaxResults, tools.MaxListEntries)
	}
	if o.LSP || len(o.LSPServers) > 0 {
		c := &lsp.Config{MaxLocations: o.LSPMaxLocations, Timeout: o.LSPTimeout}
		for _, spec := range o.LSPServers {
			srv, err := lsp.ParseServer(spec)
			if err != nil {
				return o, fmt.Errorf("%w: --lsp-server: %v", ErrUsage, err)
			}
			c.Servers = append(c.Servers, srv)
		}
		if err := c.Check(); err != nil {
			return o, fmt.Errorf("%w: --lsp-server: %v", ErrUsage, err)
		}
		o.lsp = c
	}
	if o.ReplayTitleOverride != "" && len(o.Replay) == 0 {
		return o, fmt.Errorf("%w: --replay-title-override needs --replay", ErrUsage)
	}
	if o.ReplayOverride != "" && len(o.Replay) == 0 {
		return o, fmt.Errorf("%w: --replay-override needs --replay", ErrUsage)
	}
	if !slices.Contains(replay.MatchModes, o.ReplayMatch) {
		return o, fmt.Errorf("%w: --replay-match %q: want full, messages or off", ErrUsage, o.ReplayMatch)
	}
	if o.Standin != "" && len(o.Replay) > 0 {
		return o, fmt.Errorf("%w: --standin and --replay both name the model; give one", ErrUsage)
	}
	if o.Standin != "" && o.BaseURL != "" {
		return o, fmt.Errorf("%w: --standin serves its own base URL; drop --base-url (or $REEL_BASE_URL)", ErrUsage)
	}
	return o, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Logger builds the stderr logger for a level name.
func Logger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q", ErrUsage, level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// OpenStore opens the session store named by kind in dir.
func OpenStore(dir, kind string, compress bool, log *slog.Logger) (sessionlog.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	switch kind {
	case "jsonl":
		return jsonl.Open(dir, jsonl.Options{Compress: compress, Logger: log})
	case "sqlite":
		return sqlite.Open(dir, sqlite.Options{Logger: log})
	}
	return nil, fmt.Errorf("%w: --store %q: want jsonl or sqlite", ErrUsage, kind)
}

// Run executes reel acp. -h and --help print the help on stdout and
// return nil.
func Run(ctx context.Context, args []string, env IO) error {
	o, err := parse(args, env)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := Logger(env.Stderr, o.LogLevel)
	if err != nil {
		return err
	}
	if err := hideProcess(); err != nil {
		// Without it a confined command may read the key from reel's
		// /proc entries; say so loudly rather than fail the editor.
		log.Error("cannot hide reel's /proc entries from its tools: a command may read the model key from /proc/<reel pid>/environ", "err", err)
	}
	store, err := OpenStore(o.StateDir, o.Store, o.Compress, log)
	if err != nil {
		return err
	}
	defer store.Close()
	cfg := engineConfig(o)
	cfg.Store, cfg.Logger = store, log
	cfg.Hooks, cfg.Notices = loadHooks(o, log)
	acfg := acpserver.Config{Version: Version, WriteTimeout: o.WriteTimeout, Logger: log, ListPageSize: o.ListPageSize}
	if acfg.Prices, err = loadPrices(o.Prices); err != nil {
		return err
	}
	if len(o.Replay) > 0 {
		models, provider, model, logs, err := replayModels(o.Replay, o.ReplayOverride)
		if err != nil {
			return err
		}
		models = models.(replayScripts).matching(o, log)
		if models, err = replayTitles(models, logs, o.ReplayTitleOverride); err != nil {
			return err
		}
		cfg.Models, cfg.Provider, cfg.Model = models, provider, model
		// The MCP servers of a replayed session are its recording's,
		// served in-process to reel's own MCP client: no server is
		// started or called.
		cfg.MCP = mcpreplay.Connector{Logs: logs, Logger: log}
		log.Info("replaying recorded model calls", "logs", o.Replay)
	} else {
		if o.Standin != "" {
			base, stop, err := startStandin(ctx, o.Standin, log)
			if err != nil {
				return err
			}
			defer stop()
			o.BaseURL = base
		}
		p, provider, model, missing, err := liveProvider(o, env.Getenv, log)
		if err != nil {
			return err
		}
		if missing != "" {
			// Said at start-up, where the user who launched reel looks;
			// the editor gets auth-required on session/new and prompts.
			fmt.Fprintf(env.Stderr, "reel acp: no API key for --provider %s at %s: set %s (a loopback --base-url or --standin SCRIPT needs none); sessions cannot be created until then\n",
				o.Provider, p.baseURL, missing)
		}
		cfg.Models, cfg.Provider, cfg.Model = agent.SharedModels{Provider: p.llm}, provider, model
		acfg.MissingKey, acfg.KeyVar = missing, p.keyVar
		// reel's loop is the one retry policy: maxModelRetries retries,
		// from RetryDelay doubling, each shown to the editor.
		cfg.RetryDelay = time.Second
	}
	if o.Model != "" {
		cfg.Model = o.Model
	}
	cfg.ImageInput = imageInput(o, cfg.Model)
	cfg.ModelChoices = modelChoices(o, cfg.Model, len(o.Replay) > 0 || o.Standin != "")
	protect := []string{o.StateDir, cfg.SpillDir}
	if cfg.CheckpointDir != "" {
		// The model must not rewrite what a restore brings back.
		protect = append(protect, cfg.CheckpointDir)
	}
	sb := newSandbox(env.Executable, log, o.Network == "on", o.MissingSandboxRunner, protect...)
	cfg.ReasoningEfforts = reasoningEfforts(append([]string{cfg.Model}, cfg.ModelChoices...))
	// Every supervised process tree ends with the agent, and the
	// sandbox's private temp dirs go with it.
	defer sb.Close()
	cfg.Sandbox = sb
	eng, err := agent.New(cfg)
	if err != nil {
		return err
	}
	acfg.Engine = eng
	srv, err := acpserver.New(acfg)
	if err != nil {
		return err
	}
	// The live model's first-use encoding work, and the mapping of the
	// tool schemas of a new session's requests, are done now, in the
	// background, while initialize and session/new are answered (mostly
	// waiting on fsync), not between the first prompt and its request.
	if shared, ok := cfg.Models.(agent.SharedModels); ok {
		if w, ok := shared.Provider.(interface{ Warm() }); ok {
			var warm sync.WaitGroup
			warm.Go(func() {
				w.Warm()
				// The tool schemas of the first requests, mapped now.
				if t, ok := w.(interface{ WarmTools(json.RawMessage) }); ok {
					t.WarmTools(eng.ToolSchemas())
				}
			})
			defer warm.Wait()
		}
	}
	return srv.Serve(ctx, env.Stdin, env.Stdout)
}

// engineConfig is the engine configuration the flags in o describe (the
// store, logger, models and sandbox are added by the caller).
func engineConfig(o Options) agent.Config {
	cfg := agent.Config{
		Mode: sandbox.Mode(o.Mode), Approval: o.Approval,
		Invariant: o.Invariant, MaxTokens: o.MaxTokens, MaxResponseBytes: o.MaxResponseBytes, FirstSessionID: o.SessionID,
		ContextWindow:  o.ContextWindow,
		SpillDir:       filepath.Join(filepath.Dir(o.StateDir), "spill"),
		Attachments:    attachments(o),
		MaxInlineBytes: o.InlineBytes, DisableReadGuard: o.NoReadGuard, DisableRepeatReminders: o.NoRepeatReminders,
		Terminals:      o.Terminals,
		GlobMaxResults: o.GlobMaxResults, GlobSample: o.GlobSample, GlobNoSpill: o.GlobNoSpill, SessionQuery: o.SessionQuery,
		Instructions:  agent.InstructionConfig{Disabled: o.NoInstructions},
		DisableSkills: o.NoSkills, NetworkOff: o.Network == "off", DisableTitleModel: o.NoTitleModel,
		MCPTrusted: o.MCPTrust, ChildAfterTurn: o.ChildAfterTurn, HoldForChildren: o.HoldForChildren, LingerAfterTurn: o.LingerAfterTurn, JobWaitSignal: o.JobWaitSignal,
		FailSubagentStart: o.FailSubagentStart, FailSubagentTurn: o.FailSubagentTurn, MaxSubagentDepth: o.MaxSubagentDepth,
		CodeMode: o.CodeMode, CodeLimits: codemode.Limits{Compute: o.CodeCompute, MaxCalls: o.CodeMaxCalls, MaxHeap: uint64(max(o.CodeMaxHeapMB, 0)) << 20},
	}
	if o.DebugClock {
		cfg.Now = steppingClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	if o.Checkpoints {
		cfg.CheckpointDir = filepath.Join(filepath.Dir(o.StateDir), "checkpoints")
		cfg.RestoreHold = o.RestoreHold
	}
	if o.lsp != nil {
		// Checked when the flags were parsed.
		cfg.LSP, _ = lsp.NewTool(*o.lsp)
	}
	if o.RootMarkers != "" {
		cfg.Instructions.RootMarkers = strings.Split(o.RootMarkers, ",")
	}
	return cfg
}

// attachments is the store of prompt and read_image images: beside the
// sessions and spill directories (the state dir's sibling "attachments"),
// whichever store holds the logs.
func attachments(o Options) *sessionlog.Attachments {
	return sessionlog.NewAttachments(filepath.Join(filepath.Dir(o.StateDir), "attachments"))
}

// imageInput decides whether model takes images: --image-input on or off,
// else reel's table of models.
func imageInput(o Options, model string) bool {
	switch o.ImageInput {
	case "on":
		return true
	case "off":
		return false
	}
	return openai.TakesImages(model)
}

// loadHooks loads the hook configs the flags name, in order (Claude Code
// files first). A file that cannot be used is reported on stderr and as a
// notice to each session, and the agent goes on without its hooks.
func loadHooks(o Options, log *slog.Logger) ([]agent.Hook, []string) {
	var out []agent.Hook
	var notices []string
	files := []struct {
		paths   []string
		dialect hooks.Dialect
		flag    string
	}{{o.Hooks, hooks.ClaudeCode, "--hooks"}, {o.CodexHooks, hooks.Codex, "--codex-hooks"}}
	for _, f := range files {
		for _, path := range f.paths {
			b, warnings, err := hooks.Load(path, f.dialect, hooks.Options{})
			if err != nil {
				msg := fmt.Sprintf("%s %s: %v — none of its hooks run", f.flag, path, err)
				log.Error("hook config not loaded", "flag", f.flag, "file", path, "err", err)
				notices = append(notices, msg)
				continue
			}
			for _, w := range warnings {
				log.Warn("hook config", "flag", f.flag, "file", path, "warning", w)
				notices = append(notices, fmt.Sprintf("%s %s: %s", f.flag, path, w))
			}
			log.Info("hooks loaded", "flag", f.flag, "file", path, "dialect", string(f.dialect))
			out = append(out, b)
		}
	}
	return out, notices
}

// Version is reel's version string.
const Version = "0.1.0"

// replayScripts holds one script per session, in opening order, and each
// session's title-call script.
type replayScripts struct {
	scripts, titles [][]replay.Entry
	// wants are each log's recorded requests by turn and step.
	wants []map[string]*replay.Want
	// ids are the recorded logs' session ids.
	ids []string
	// match and pins configure each provider's request matching (empty
	// match: none); log hears of what a call could not compare.
	match, pins string
	log         *slog.Logger
}

// matching configures the request matching of every replayed session.
func (r replayScripts) matching(o Options, log *slog.Logger) replayScripts {
	r.match, r.pins, r.log = o.ReplayMatch, o.ReplayPins, log
	return r
}

// RecordedID implements the engine's recordedIDs: a replayed session
// takes its recording's id, which the recorded texts and
// arguments (send_message's subagent_id) name.
//
// A fixture's ids are normalized ({{sessionId2}}): a child still takes
// it, as the model's recorded arguments name it so; a top-level session
// does not (its id is the client's, and paths named after it would change
// length).
func (r replayScripts) RecordedID(index int, child bool) string {
	if index >= len(r.ids) || (!child && strings.HasPrefix(r.ids[index], "{{")) {
		return ""
	}
	return r.ids[index]
}

// ForSession implements agent.Models.
func (r replayScripts) ForSession(index int, cwd string, done int) (llm.Provider, error) {
	if index >= len(r.scripts) {
		return nil, fmt.Errorf("replay: session %d was opened, but only %d recorded log(s) were given with --replay", index+1, len(r.scripts))
	}
	p := replay.New(r.scripts[index], done, cwd).WithWants(r.wants[index])
	if r.match != "" && r.match != replay.MatchOff {
		log := r.log
		p.WithMatcher(&replay.Matcher{Mode: r.match, Cwd: cwd, Pins: r.pins}, func(where string, what []string) {
			if log != nil {
				// The snapshot harness reads this line: the scenario is partial.
				log.Warn("replay: request not compared", "session", index+1, "call", where, "what", strings.Join(what, "; "))
			}
		}, func(err *replay.MismatchError) {
			if log != nil {
				// The snapshot harness reads this line: the scenario fails with it.
				log.Error("replay: request mismatch", "session", index+1, "call", err.Where, "diff", err.Error())
			}
		})
	}
	if index < len(r.titles) {
		p.WithTitles(r.titles[index])
	}
	return p, nil
}

// replayTitles gives each replayed session the title calls its log
// recorded (the first log's from override, when given).
func replayTitles(m agent.Models, logs [][]sessionlog.Event, override string) (agent.Models, error) {
	r, ok := m.(replayScripts)
	if !ok {
		return m, nil
	}
	for i, events := range logs {
		ov := ""
		if i == 0 {
			ov = override
		}
		t, err := replay.LoadTitles(events, ov)
		if err != nil {
			return nil, fmt.Errorf("--replay-title-override: %w", err)
		}
		r.titles = append(r.titles, t)
	}
	return r, nil
}

// replayModels loads the recorded logs and takes the call config (provider,
// model) from the first request header of the first log; events are the
// logs' events, in order.
func replayModels(logs []string, override string) (_ agent.Models, provider, model string, events [][]sessionlog.Event, _ error) {
	var r replayScripts
	provider, model = "replay", "replay"
	for i, path := range logs {
		d, _, err := jsonl.ReadValid(path)
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("--replay: %w", err) // the error names the file and line
		}
		events = append(events, d.Events)
		ov := ""
		if i == 0 {
			ov = override
		}
		script, wants, err := replay.LoadWithWants(d.Header, d.Events, ov)
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("--replay: %s: %w", path, err)
		}
		r.scripts = append(r.scripts, script)
		r.wants = append(r.wants, wants)
		r.ids = append(r.ids, d.Header.ID)
		if i == 0 {
			if p, m, ok := recordedConfig(d.Events); ok {
				provider, model = p, m
			}
		}
	}
	return r, provider, model, events, nil
}

// recordedConfig returns provider and model of the first request header.
func recordedConfig(events []sessionlog.Event) (string, string, bool) {
	for i := range events {
		if events[i].Type != sessionlog.TypeRequestHeader {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&events[i])
		if err != nil {
			return "", "", false
		}
		h, err := sessionlog.ParseRequestHeader(d.Header)
		if err != nil {
			return "", "", false
		}
		var c struct{ Provider, Model string }
		if json.Unmarshal(h.Config, &c) != nil || c.Provider == "" {
			return "", "", false
		}
		return c.Provider, c.Model, true
	}
	return "", "", false
}

// live is a live provider and the base URL it calls.
type live struct {
	llm     llm.Provider
	baseURL string
	// keyVar is the environment variable the key comes from, "" when the
	// endpoint needs none (the stand-in, a loopback server without one).
	keyVar string
}

// liveProvider builds the OpenAI-compatible provider named by o.Provider.
// The key comes from the provider's environment variable and is never
// logged. A base URL on a loopback host needs no key: without one a
// placeholder is sent. missing names the key variable when a remote
// endpoint has no key; the provider then fails every call.
func liveProvider(o Options, getenv func(string) string, log *slog.Logger) (p live, provider, model, missing string, err error) {
	var cfg openai.Config
	switch o.Provider {
	case "deepseek":
		cfg = openai.DeepSeek()
	case "openai":
		cfg = openai.OpenAI()
	default:
		return live{}, "", "", "", fmt.Errorf("%w: --provider %q: want deepseek or openai", ErrUsage, o.Provider)
	}
	if o.BaseURL != "" {
		cfg.BaseURL = o.BaseURL
	}
	if o.Model != "" {
		cfg.Model = o.Model
	}
	cfg.Logger = log
	cfg.LookupEnv = func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	}
	cfg.ImageInput, cfg.Images = imageInput(o, cfg.Model), attachments(o)
	// One attempt per call: the agent loop retries (and tells the editor);
	// retrying here as well multiplied the requests.
	cfg.MaxAttempts = 1
	local, err := loopbackURL(cfg.BaseURL)
	if err != nil {
		return live{}, "", "", "", err
	}
	keyVar := cfg.KeyEnv
	if o.Standin != "" || local && getenv(cfg.KeyEnv) == "" {
		// The stand-in never sees a real key, even when one is set.
		cfg.APIKey, keyVar = localKey, ""
	}
	op, err := openai.New(cfg)
	if err != nil {
		// Without a key the agent still serves sessions (load, list);
		// new sessions and prompts fail with auth-required, and a model
		// call would fail with this error.
		log.Warn("no model available", "err", err)
		return live{unavailable{err}, cfg.BaseURL, keyVar}, o.Provider, cfg.Model, cfg.KeyEnv, nil
	}
	return live{op, cfg.BaseURL, keyVar}, o.Provider, cfg.Model, "", nil
}

// localKey is the placeholder key sent to a loopback endpoint when the
// environment has none (servers that ignore keys still often want one).
const localKey = "local"

// loopbackURL reports whether base names a loopback host (127.0.0.0/8,
// ::1 or localhost), which needs no API key.
func loopbackURL(base string) (bool, error) {
	u, err := url.Parse(base)
	if err != nil {
		return false, fmt.Errorf("%w: --base-url %q: %w", ErrUsage, base, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return false, fmt.Errorf("%w: --base-url %q: want an absolute URL such as http://127.0.0.1:8080/v1", ErrUsage, base)
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback(), nil
}

// startStandin serves the stand-in script at path on 127.0.0.1 and
// returns its base URL and the function that stops it.
func startStandin(ctx context.Context, path string, log *slog.Logger) (string, func(), error) {
	script, err := standin.LoadScript(path)
	if err != nil {
		return "", nil, fmt.Errorf("--standin: %w", err)
	}
	srv := standin.New(script, log.With("component", "standin"))
	addr, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("--standin: %w", err)
	}
	log.Info("serving the stand-in model in process", "script", path, "addr", addr)
	return "http://" + addr + "/v1", func() {
		if err := srv.Close(); err != nil {
			log.Warn("stand-in server", "err", err)
		}
	}, nil
}

// unavailable is the provider of an agent started without a usable model
// configuration: every call fails with the configuration error.
type unavailable struct{ err error }

func (u unavailable) Stream(context.Context, llm.Request) (llm.Stream, error) {
	return nil, &llm.ProviderError{Code: llm.CodeAuth, Message: u.err.Error(), Err: u.err}
}

// knownModels are the models of each provider an editor is offered by
// default (--models replaces them).
var knownModels = map[string][]string{
	"deepseek": {"deepseek-chat", "deepseek-reasoner"},
	"openai":   {"gpt-4.1", "gpt-4.1-mini"},
}

// modelChoices are the models a session may switch to: --models (with the
// session's default model first), else the provider's known models when
// the default is one of them; a replay or a stand-in offers none unless
// --models asks.
func modelChoices(o Options, model string, scripted bool) []string {
	if o.ModelList == "" {
		known := knownModels[o.Provider]
		if scripted || !slices.Contains(known, model) {
			return nil
		}
		return slices.Clone(known)
	}
	out := []string{model}
	for _, m := range strings.Split(o.ModelList, ",") {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// maxSubagentDepth bounds --max-subagent-depth: every level is a session
// of its own, with its log and its model calls.
const maxSubagentDepth = 16

// steppingClock returns a clock that reads start, then start + 1 ms, + 2 ms,
// … at each reading: event times that depend on the order of the events
// alone, not on when they happened. It is safe for concurrent use.
func steppingClock(start time.Time) func() time.Time {
	var ticks atomic.Int64
	return func() time.Time {
		return start.Add(time.Duration(ticks.Add(1)-1) * time.Millisecond)
	}
}
