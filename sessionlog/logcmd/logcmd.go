package logcmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reel-agent/reel/internal/termtext"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// ErrUsage reports bad command-line arguments.
var ErrUsage = errors.New("usage")

const usage = `usage: reel log <command> [args]

Inspect, check, convert and repair reel session logs: JSONL files
(.jsonl, .jsonl.zst) and SQLite databases (.db, .sqlite). A database that
holds several sessions (reel acp --store sqlite makes sessions.db in the
state directory) needs --session ID; reel log list shows the ids.
reel log COMMAND -h describes a command, its flags and an example.

commands:
  list DB|DIR                          list the sessions of a database or state directory
  verify FILE...                       check logs against every format rule
  show FILE                            print a readable timeline
  surface FILE                         print the folded surface (--json: as JSON)
  request FILE --turn T --step S       print the request a step sent, as JSON
  encode FILE                          re-encode canonically to stdout
  convert IN OUT                       convert between .jsonl, .jsonl.zst, .db/.sqlite
  repair FILE                          commit crash-repair closers to FILE
%s
Commands that read one log take --session ID to pick a session of a
database. reel log reads no environment variables; reel's default state
directory is $XDG_STATE_HOME/reel/sessions (~/.local/state/reel/sessions).

example:
  reel log list ~/.local/state/reel/sessions
  reel log show ~/.local/state/reel/sessions/sessions.db --session s1
`

// Command is a `reel log` subcommand defined outside this package — by a
// package that logcmd cannot import, such as the harness's `diff` — and
// wired in by the caller of Run. Run gets the arguments after the name; a
// help request (-h, --help) is its to answer, by printing its help to
// stdout and returning flag.ErrHelp or nil.
type Command struct {
	// Name is the subcommand's name.
	Name string
	// Synopsis is its arguments, as the usage lists them.
	Synopsis string
	// Summary is the one-line description in the usage.
	Summary string
	// Run runs it.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// usageText is the usage with the extra commands listed.
func usageText(extra []Command) string {
	var b strings.Builder
	for _, c := range extra {
		fmt.Fprintf(&b, "  %-36s %s\n", c.Name+" "+c.Synopsis, c.Summary)
	}
	return fmt.Sprintf(usage, b.String())
}

// Run executes `reel log ARGS`. -h or --help, alone or after a command,
// prints help to stdout and returns nil. extra adds commands defined
// elsewhere (see Command); a built-in command of the same name wins.
//
// What a log holds is the model's and its tools' text: human output goes
// to stdout, and anything to stderr, through a termtext.Writer, so control
// characters reach the terminal escaped. The machine outputs — request's
// JSON, surface --json, encode's JSONL — are written as they are (JSON
// escapes controls itself; see writeJSON).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, extra ...Command) error {
	errw := termtext.NewWriter(stderr)
	err := run(ctx, args, stdout, errw, extra)
	return flushed(err, errw)
}

// human runs f with stdout escaped for a terminal.
func human(stdout io.Writer, f func(io.Writer) error) error {
	w := termtext.NewWriter(stdout)
	return flushed(f(w), w)
}

// flushed flushes w and returns err, or the flush's error if err is nil.
func flushed(err error, w *termtext.Writer) error {
	if ferr := w.Flush(); err == nil {
		return ferr
	}
	return err
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, extra []Command) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText(extra))
		return fmt.Errorf("%w: reel log needs a command", ErrUsage)
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "--help":
		if len(rest) == 1 {
			if c, ok := lookup(rest[0]); ok {
				c.help(stdout)
				return nil
			}
			if x, ok := lookupExtra(extra, rest[0]); ok {
				return human(stdout, func(w io.Writer) error { return helpOK(x.Run(ctx, []string{"-h"}, w, stderr)) })
			}
		}
		fmt.Fprint(stdout, usageText(extra))
		return nil
	}
	c, ok := lookup(name)
	if !ok {
		if x, ok := lookupExtra(extra, name); ok {
			return human(stdout, func(w io.Writer) error { return helpOK(x.Run(ctx, rest, w, stderr)) })
		}
		fmt.Fprint(stderr, usageText(extra))
		return fmt.Errorf("%w: unknown log command %q", ErrUsage, name)
	}
	o, err := c.parse(rest)
	if errors.Is(err, flag.ErrHelp) {
		c.help(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	if c.machine(o) {
		return c.run(ctx, o, stdout)
	}
	return human(stdout, func(w io.Writer) error { return c.run(ctx, o, w) })
}

// machine reports whether the command, as invoked, prints for programs
// (JSON, JSONL) rather than for a human.
func (c *command) machine(o *opts) bool {
	return c.name == "request" || c.name == "encode" || c.surface && o.json
}

// lookupExtra finds an extra command by name.
func lookupExtra(extra []Command, name string) (Command, bool) {
	for _, x := range extra {
		if x.Name == name {
			return x, true
		}
	}
	return Command{}, false
}

// helpOK turns a help request's flag.ErrHelp into success, as for the
// built-in commands.
func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// opts are the parsed arguments of one command.
type opts struct {
	files   []string
	session string
	json    bool
	turn    int
	step    int
}

// command is one `reel log` subcommand and its help.
type command struct {
	name     string
	synopsis string // arguments, for usage errors and help
	summary  string // one paragraph
	example  string
	nfiles   int  // positional arguments wanted; -1: one or more
	surface  bool // has --json
	request  bool // has --turn and --step
	run      func(ctx context.Context, o *opts, stdout io.Writer) error
}

const sessionHelp = "the `ID` of the session to read from a database holding several (see reel log list)"

func commands() []command {
	return []command{
		{name: "list", synopsis: "DB|DIR", nfiles: 1,
			summary: "List the sessions of a SQLite database (a store's sessions.db or a converted .db) or of a state directory (its .jsonl and .jsonl.zst logs and its sessions.db): the id, when it was created, its working directory, its event count and how its last turn stands.",
			example: "reel log list ~/.local/state/reel/sessions",
			run:     func(_ context.Context, o *opts, w io.Writer) error { return list(o.files[0], w) }},
		{name: "verify", synopsis: "FILE|DIR... [--session ID]", nfiles: -1,
			summary: "Check each log (a folder: every .jsonl and .jsonl.zst log in it) against every format rule and report it ok with its event count, a torn tail, or an unfinished turn. A database holding several sessions has each of them checked unless --session picks one. Logs of subagents verified with their parent's are checked against it: each lies within one of the parent's subagent calls, and a fork's copied events are the parent's. Exits non-zero if any log is refused.",
			example: "reel log verify session.jsonl state/sessions.db",
			run:     func(ctx context.Context, o *opts, w io.Writer) error { return verify(ctx, o.files, o.session, w) }},
		{name: "show", synopsis: "FILE [--session ID]", nfiles: 1,
			summary: "Print a readable timeline of one log: a header line, then one line per event (seq, type, a summary of its content), with runs of assistant chunks folded into one line.",
			example: "reel log show state/sessions.db --session s1",
			run:     func(_ context.Context, o *opts, w io.Writer) error { return show(o.files[0], o.session, w) }},
		{name: "surface", synopsis: "FILE [--session ID] [--json]", nfiles: 1, surface: true,
			summary: "Print the folded surface of one log, the messages a next request would be built from: one line per surface seq with its event type and a preview (role and the start of the text, or the tool call id of a result), then the replacements and what each shadowed. --json prints {\"surface\":[seqs],\"replacements\":[...]} for scripts.",
			example: "reel log surface session.jsonl --json",
			run:     func(_ context.Context, o *opts, w io.Writer) error { return surface(o.files[0], o.session, o.json, w) }},
		{name: "request", synopsis: "FILE --turn T --step S [--session ID]", nfiles: 1, request: true,
			summary: "Print, as JSON, the request that step S of turn T sent to the model, rebuilt from the log's request header and surface as they stood when that step began.",
			example: "reel log request session.jsonl --turn 1 --step 2",
			run:     func(_ context.Context, o *opts, w io.Writer) error { return request(o, w) }},
		{name: "encode", synopsis: "FILE [--session ID]", nfiles: 1,
			summary: "Validate one log and re-encode it canonically as JSONL to stdout (the header line, then one line per event).",
			example: "reel log encode state/sessions.db --session s1 > s1.jsonl",
			run:     func(_ context.Context, o *opts, w io.Writer) error { return encode(o.files[0], o.session, w) }},
		{name: "convert", synopsis: "IN OUT [--session ID]", nfiles: 2,
			summary: "Copy one log losslessly to a new file whose extension names the backend: .jsonl, .jsonl.zst, or .db/.sqlite (a single-session database). OUT must not exist; a log with a torn tail must be repaired first. The session lock guarding OUT is held while it is written.",
			example: "reel log convert state/sessions.db s1.jsonl.zst --session s1",
			run: func(ctx context.Context, o *opts, _ io.Writer) error {
				return convert(ctx, o.files[0], o.files[1], o.session)
			}},
		{name: "repair", synopsis: "FILE [--session ID]", nfiles: 1,
			summary: "Commit crash-repair closers to one log: drop a torn tail and append the synthetic events that close an unfinished turn (error tool results, step/end, turn/end interrupted). A JSONL file is replaced atomically; a database session gets the closers in one transaction. A log whose session lock a running reel holds is refused.",
			example: "reel log repair state/sessions.db --session s1",
			run:     func(ctx context.Context, o *opts, w io.Writer) error { return repair(ctx, o.files[0], o.session, w) }},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func (c *command) flags(o *opts) *flag.FlagSet {
	fs := flag.NewFlagSet("reel log "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.name != "list" {
		fs.StringVar(&o.session, "session", "", sessionHelp)
	}
	if c.surface {
		fs.BoolVar(&o.json, "json", false, "print the surface as JSON (the format of reel before the readable listing)")
	}
	if c.request {
		fs.IntVar(&o.turn, "turn", 0, "turn number `T` (1-based)")
		fs.IntVar(&o.step, "step", 0, "step number `S` within the turn (1-based)")
	}
	return fs
}

// parse reads flags and positional arguments in any order.
func (c *command) parse(args []string) (*opts, error) {
	o := &opts{}
	fs := c.flags(o)
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: reel log %s: %v (reel log %s -h shows the flags)", ErrUsage, c.name, err, c.name)
		}
		args = fs.Args()
		if len(args) > 0 {
			o.files = append(o.files, args[0])
			args = args[1:]
		}
	}
	bad := len(o.files) != c.nfiles
	if c.nfiles < 0 {
		bad = len(o.files) == 0
	}
	if c.request && (o.turn < 1 || o.step < 1) {
		bad = true
	}
	if bad {
		return nil, fmt.Errorf("%w: reel log %s %s", ErrUsage, c.name, c.synopsis)
	}
	return o, nil
}

// help prints the command's synopsis, summary, flags and example.
func (c *command) help(w io.Writer) {
	fmt.Fprintf(w, "usage: reel log %s %s\n\n%s\n", c.name, c.synopsis, wrap(c.summary, 76))
	fs := c.flags(&opts{})
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\nexample:\n  %s\n", c.example)
}

// wrap breaks a paragraph into lines of at most width columns.
func wrap(s string, width int) string {
	var b strings.Builder
	col := 0
	for _, word := range strings.Fields(s) {
		if col > 0 && col+1+len([]rune(word)) > width {
			b.WriteByte('\n')
			col = 0
		} else if col > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len([]rune(word))
	}
	return b.String()
}

// plural is "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// loaded is a log read from any backend file, located for error messages.
type loaded struct {
	file    string // the file, and for a database of several sessions the session: "x.db session s1"
	header  sessionlog.Header
	events  []sessionlog.Event
	lineOf  func(seq int) int
	torn    *jsonl.Torn
	goodLen int64
}

// readFile decodes one log of a file of any supported kind (by extension).
// session picks a session of a database; "" accepts the only one. For a
// JSONL file a session other than the file's is a *SessionError.
func readFile(path, session string) (*loaded, error) {
	if isSQLite(path) {
		return readSQLite(path, session)
	}
	d, err := jsonl.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if session != "" && d.Header.ID != session {
		return nil, &SessionError{File: path, Want: session, IDs: []string{d.Header.ID}}
	}
	return &loaded{file: path, header: d.Header, events: d.Events, lineOf: d.LineOf, torn: d.Torn, goodLen: d.GoodBytes}, nil
}

func isSQLite(path string) bool {
	return strings.HasSuffix(path, ".db") || strings.HasSuffix(path, ".sqlite")
}

// locate wraps a validation error with the file and line of its event.
func (l *loaded) locate(err error) error {
	var ee *sessionlog.EventError
	if errors.As(err, &ee) && l.lineOf != nil {
		return &sessionlog.RecordError{File: l.file, Line: l.lineOf(ee.Seq), Err: err}
	}
	return &sessionlog.RecordError{File: l.file, Err: err}
}

// seed reads and validates one log.
func seed(path, session string) (*loaded, *sessionlog.Log, error) {
	l, err := readFile(path, session)
	if err != nil {
		return nil, nil, err
	}
	lg, err := sessionlog.Seed(l.header, l.events)
	if err != nil {
		return nil, nil, l.locate(err)
	}
	return l, lg, nil
}

func verify(_ context.Context, files []string, session string, stdout io.Writer) error {
	files, err := expandDirs(files)
	if err != nil {
		return err
	}
	var errs []error
	var verified []pairLog
	for _, f := range files {
		sessions := []string{session}
		if session == "" && isSQLite(f) {
			ids, err := sessionIDs(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if len(ids) > 1 {
				sessions = ids
			}
		}
		for _, s := range sessions {
			l, lg, err := seed(f, s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			note := ""
			if l.torn != nil {
				note = fmt.Sprintf("; torn tail at line %d (%s, dropped on load: %v)", l.torn.Line, plural(l.torn.Records, "record"), l.torn.Err)
			}
			if c := sessionlog.Repair(lg.Events()); len(c) > 0 {
				note += fmt.Sprintf("; unfinished turn (repair would add %s)", plural(len(c), "closer"))
			}
			fmt.Fprintf(stdout, "%s: ok, %s%s\n", l.file, plural(lg.Len(), "event"), note)
			if !isSQLite(f) {
				verified = append(verified, pairLog{f, l.header, lg.Events()})
			}
		}
	}
	if session == "" {
		errs = append(errs, verifyPairing(verified, stdout))
	}
	return errors.Join(errs...)
}

func encode(path, session string, stdout io.Writer) error {
	l, lg, err := seed(path, session)
	if err != nil {
		return err
	}
	return jsonl.Encode(stdout, l.header, lg.Events())
}

func request(o *opts, stdout io.Writer) error {
	l, err := readFile(o.files[0], o.session)
	if err != nil {
		return err
	}
	req, err := sessionlog.Reconstruct(l.header, l.events, o.turn, o.step)
	if err != nil {
		return l.locate(err)
	}
	return writeJSON(stdout, req)
}

// writeJSON prints v as indented JSON. encoding/json escapes C0 controls
// but leaves DEL, C1 controls and bidi characters raw; termtext.EscapeJSON
// writes those as \uXXXX too, so the output decodes to exactly v and
// carries nothing a terminal acts on.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termtext.EscapeJSON(b.Bytes()))
	return err
}

// showLine is one line of `reel log show` before the columns are sized.
type showLine struct {
	seq        int
	typ, about string
}

func show(path, session string, stdout io.Writer) error {
	l, lg, err := seed(path, session)
	if err != nil {
		return err
	}
	h := l.header
	fmt.Fprintf(stdout, "session %s  created %s  cwd %s\n", h.ID, time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339), h.Cwd)
	if c, ok := h.Child(); ok {
		line := fmt.Sprintf("subagent of %s  depth %d", c.Parent, c.Depth)
		if c.SeedLength > 0 {
			line += fmt.Sprintf("  forked: its first %d events are the parent's", c.SeedLength)
		}
		fmt.Fprintln(stdout, line)
	}
	for _, c := range children(path, h.ID) {
		fmt.Fprintf(stdout, "subagent %s  %s\n", c.id, c.path)
	}
	evs := lg.Events()
	var rows []showLine
	for i := 0; i < len(evs); i++ {
		e := &evs[i]
		if e.Type == sessionlog.TypeAssistantChunk {
			j := i
			for j+1 < len(evs) && evs[j+1].Type == sessionlog.TypeAssistantChunk {
				j++
			}
			rows = append(rows, showLine{e.Seq, e.Type, fmt.Sprintf("%s through seq %d", plural(j-i+1, "chunk"), evs[j].Seq)})
			i = j
			continue
		}
		rows = append(rows, showLine{e.Seq, e.Type, Summary(e)})
	}
	writeShow(stdout, rows)
	return nil
}

// Column widths of `reel log show`: seqs right-aligned in at least
// minSeqWidth columns, types left-aligned in at least minTypeWidth; both
// grow to the longest value in the log, so a long type never shifts the
// summaries of its lines.
const (
	minSeqWidth  = 6
	minTypeWidth = 18
)

func writeShow(w io.Writer, rows []showLine) {
	sw, tw := minSeqWidth, minTypeWidth
	for _, r := range rows {
		sw = max(sw, len(fmt.Sprint(r.seq)))
		tw = max(tw, len([]rune(r.typ)))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%*d  %-*s %s\n", sw, r.seq, tw, r.typ, r.about)
	}
}

// Summary is a one-line human description of an event.
func Summary(e *sessionlog.Event) string {
	op := ""
	if e.SurfaceOp != nil && e.SurfaceOp.Replace {
		op = fmt.Sprintf("[replaces %d…%d] ", e.SurfaceOp.Start, e.SurfaceOp.End)
	}
	switch e.Type {
	case sessionlog.TypeTurnStart, sessionlog.TypeStepStart, sessionlog.TypeStepEnd:
		d, _ := sessionlog.DecodeData[sessionlog.StepData](e)
		if e.Type == sessionlog.TypeTurnStart {
			return fmt.Sprintf("turn %d", d.Turn)
		}
		return fmt.Sprintf("turn %d step %d", d.Turn, d.Step)
	case sessionlog.TypeTurnEnd:
		d, _ := sessionlog.DecodeData[sessionlog.TurnEndData](e)
		s := fmt.Sprintf("turn %d: %s", d.Turn, d.Reason.Kind)
		if d.Reason.Error != nil {
			s += ": " + d.Reason.Error.Message
		}
		return s
	case sessionlog.TypeUserMessage, sessionlog.TypeAssistantMessage, sessionlog.TypeToolResult:
		raw, _ := sessionlog.ProjectMessage(e)
		m, _ := sessionlog.ParseMessage(raw)
		var parts []string
		for _, p := range m.Content {
			switch p.Type {
			case "text":
				parts = append(parts, clip(p.Text, 100))
			case "reasoning":
				parts = append(parts, "(thinking) "+clip(p.Text, 100))
			case "tool-call":
				parts = append(parts, fmt.Sprintf("→ %s %s", p.Name, clip(p.Arguments, 100)))
			case "tool-result":
				var txt string
				for _, c := range p.Content {
					txt += c.Text
				}
				status := "ok"
				if p.IsError {
					status = "error"
				}
				parts = append(parts, fmt.Sprintf("← %s: %s", status, clip(txt, 100)))
			}
		}
		return op + strings.Join(parts, " | ")
	case sessionlog.TypeToolCall:
		d, _ := sessionlog.DecodeData[sessionlog.ToolCallData](e)
		return fmt.Sprintf("%s %s %s", d.CallID, d.Name, clip(d.Arguments, 100))
	case sessionlog.TypeRequestHeader:
		d, _ := sessionlog.DecodeData[sessionlog.RequestHeaderData](e)
		h, _ := sessionlog.ParseRequestHeader(d.Header)
		sys := "no system prompt"
		switch name, pinned := pinnedPrompt(h.System); {
		case pinned:
			// A fixture pins its prompt as {{prompt:NAME}}: its length
			// would be the placeholder's, not the prompt's.
			sys = "system prompt " + name + " (pinned in snapshots/prompts)"
		case h.System != "":
			sys = fmt.Sprintf("system prompt %s: %s", plural(len(h.System), "byte"), clip(firstLine(h.System), 100))
		}
		return fmt.Sprintf("%s (full snapshot; %s)", d.Reason, sys)
	case sessionlog.TypeSandboxMode:
		d, _ := sessionlog.DecodeData[sessionlog.SandboxModeData](e)
		return "mode " + d.Mode
	case sessionlog.TypeApprovalPolicy:
		d, _ := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](e)
		return "policy " + d.Policy
	}
	return clip(string(e.Data), 100)
}

// clip shows newlines as ⏎ and cuts s to n runes, marking a cut with "…".
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// exists reports whether a path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// pinnedPrompt reports whether a header's system prompt is a fixture's
// placeholder {{prompt:NAME}}, and NAME.
func pinnedPrompt(system string) (string, bool) {
	name, ok := strings.CutPrefix(system, "{{prompt:")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, "}}")
	return name, ok && name != "" && !strings.ContainsAny(name, "{}\n")
}

// child is a subagent's log found beside its parent's.
type child struct {
	id, path string
	created  int64
}

// children lists the JSONL logs in the folder of the log at path whose
// header names parent as their parentSession, in creation order (a
// SQLite file and an unreadable sibling contribute none).
func children(path, parent string) []child {
	if isSQLite(path) {
		return nil
	}
	var found []child
	for _, pattern := range []string{"*" + jsonl.ExtRaw, "*" + jsonl.ExtZstd} {
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), pattern))
		for _, f := range files {
			if f == path {
				continue
			}
			h, err := jsonl.ReadHeader(f)
			if err != nil {
				continue
			}
			if c, ok := h.Child(); ok && c.Parent == parent {
				found = append(found, child{h.ID, f, h.CreatedAt})
			}
		}
	}
	slices.SortFunc(found, func(a, b child) int {
		return cmp.Or(cmp.Compare(a.created, b.created), strings.Compare(a.id, b.id))
	})
	return found
}
