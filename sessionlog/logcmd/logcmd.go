package logcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// ErrUsage reports bad command-line arguments.
var ErrUsage = errors.New("usage")

const usage = `usage: reel log <command> [args]

commands:
  verify FILE...                       check logs against every format rule
  show FILE                            print a readable timeline
  surface FILE                         print the folded surface as JSON
  request FILE --turn T --step S       print the request a step sent, as JSON
  encode FILE                          re-encode canonically to stdout
  convert IN OUT                       convert between .jsonl, .jsonl.zst, .db/.sqlite
  repair FILE                          commit crash-repair closers to FILE
`

// Run executes `reel log ARGS`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: reel log needs a command", ErrUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "verify":
		return verify(ctx, rest, stdout)
	case "show":
		return withOne(rest, cmd, func(f string) error { return show(f, stdout) })
	case "surface":
		return withOne(rest, cmd, func(f string) error { return surface(f, stdout) })
	case "encode":
		return withOne(rest, cmd, func(f string) error { return encode(f, stdout) })
	case "request":
		return request(rest, stdout, stderr)
	case "convert":
		if len(rest) != 2 {
			return fmt.Errorf("%w: reel log convert IN OUT", ErrUsage)
		}
		return convert(ctx, rest[0], rest[1])
	case "repair":
		return withOne(rest, cmd, func(f string) error { return repair(ctx, f, stdout) })
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown log command %q", ErrUsage, cmd)
}

func withOne(args []string, cmd string, f func(string) error) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: reel log %s FILE", ErrUsage, cmd)
	}
	return f(args[0])
}

// loaded is a log read from any backend file, located for error messages.
type loaded struct {
	file    string
	header  sessionlog.Header
	events  []sessionlog.Event
	lineOf  func(seq int) int
	torn    *jsonl.Torn
	goodLen int64
}

// readFile decodes a log file of any supported kind (by extension).
func readFile(path string) (*loaded, error) {
	if isSQLite(path) {
		return readSQLite(path)
	}
	d, err := jsonl.ReadFile(path)
	if err != nil {
		return nil, err
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

// seed reads and validates a log.
func seed(path string) (*loaded, *sessionlog.Log, error) {
	l, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	lg, err := sessionlog.Seed(l.header, l.events)
	if err != nil {
		return nil, nil, l.locate(err)
	}
	return l, lg, nil
}

func verify(_ context.Context, files []string, stdout io.Writer) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: reel log verify needs at least one FILE", ErrUsage)
	}
	var errs []error
	for _, f := range files {
		l, lg, err := seed(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		note := ""
		if l.torn != nil {
			note = fmt.Sprintf("; torn tail at line %d (%d record(s), dropped on load: %v)", l.torn.Line, l.torn.Records, l.torn.Err)
		}
		if c := sessionlog.Repair(lg.Events()); len(c) > 0 {
			note += fmt.Sprintf("; unfinished turn (repair would add %d closer(s))", len(c))
		}
		fmt.Fprintf(stdout, "%s: ok, %d events%s\n", f, lg.Len(), note)
	}
	return errors.Join(errs...)
}

func encode(path string, stdout io.Writer) error {
	l, lg, err := seed(path)
	if err != nil {
		return err
	}
	return jsonl.Encode(stdout, l.header, lg.Events())
}

func surface(path string, stdout io.Writer) error {
	_, lg, err := seed(path)
	if err != nil {
		return err
	}
	f, err := sessionlog.FoldSurface(lg.Events())
	if err != nil {
		return err
	}
	return writeJSON(stdout, f)
}

func request(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reel log request", flag.ContinueOnError)
	fs.SetOutput(stderr)
	turn := fs.Int("turn", 0, "turn number (1-based)")
	step := fs.Int("step", 0, "step number within the turn (1-based)")
	var files []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		args = fs.Args()
		if len(args) > 0 {
			files = append(files, args[0])
			args = args[1:]
		}
	}
	if len(files) != 1 || *turn < 1 || *step < 1 {
		return fmt.Errorf("%w: reel log request FILE --turn T --step S", ErrUsage)
	}
	l, err := readFile(files[0])
	if err != nil {
		return err
	}
	req, err := sessionlog.Reconstruct(l.header, l.events, *turn, *step)
	if err != nil {
		return l.locate(err)
	}
	return writeJSON(stdout, req)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func show(path string, stdout io.Writer) error {
	l, lg, err := seed(path)
	if err != nil {
		return err
	}
	h := l.header
	fmt.Fprintf(stdout, "session %s  created %s  cwd %s\n", h.ID, time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339), h.Cwd)
	evs := lg.Events()
	for i := 0; i < len(evs); i++ {
		e := &evs[i]
		if e.Type == sessionlog.TypeAssistantChunk {
			j := i
			for j+1 < len(evs) && evs[j+1].Type == sessionlog.TypeAssistantChunk {
				j++
			}
			fmt.Fprintf(stdout, "%6d  %-18s %d chunk(s) through seq %d\n", e.Seq, "assistant/chunk", j-i+1, evs[j].Seq)
			i = j
			continue
		}
		fmt.Fprintf(stdout, "%6d  %-18s %s\n", e.Seq, e.Type, Summary(e))
	}
	return nil
}

// Summary is a one-line human description of an event.
func Summary(e *sessionlog.Event) string {
	clip := func(s string) string {
		s = strings.ReplaceAll(s, "\n", "⏎")
		if r := []rune(s); len(r) > 100 {
			return string(r[:100]) + "…"
		}
		return s
	}
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
				parts = append(parts, clip(p.Text))
			case "reasoning":
				parts = append(parts, "(thinking) "+clip(p.Text))
			case "tool-call":
				parts = append(parts, fmt.Sprintf("→ %s %s", p.Name, clip(p.Arguments)))
			case "tool-result":
				var txt string
				for _, c := range p.Content {
					txt += c.Text
				}
				status := "ok"
				if p.IsError {
					status = "error"
				}
				parts = append(parts, fmt.Sprintf("← %s: %s", status, clip(txt)))
			}
		}
		return op + strings.Join(parts, " | ")
	case sessionlog.TypeToolCall:
		d, _ := sessionlog.DecodeData[sessionlog.ToolCallData](e)
		return fmt.Sprintf("%s %s %s", d.CallID, d.Name, clip(d.Arguments))
	case sessionlog.TypeRequestHeader:
		d, _ := sessionlog.DecodeData[sessionlog.RequestHeaderData](e)
		h, _ := sessionlog.ParseRequestHeader(d.Header)
		sys := "no system prompt"
		if h.System != "" {
			sys = fmt.Sprintf("system prompt %d bytes: %s", len(h.System), clip(firstLine(h.System)))
		}
		return fmt.Sprintf("%s (full snapshot; %s)", d.Reason, sys)
	case sessionlog.TypeSandboxMode:
		d, _ := sessionlog.DecodeData[sessionlog.SandboxModeData](e)
		return "mode " + d.Mode
	case sessionlog.TypeApprovalPolicy:
		d, _ := sessionlog.DecodeData[sessionlog.ApprovalPolicyData](e)
		return "policy " + d.Policy
	}
	return clip(string(e.Data))
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
