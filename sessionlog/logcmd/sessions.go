package logcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// ErrSessionNeeded reports a database holding several sessions given to a
// command that reads one, without --session.
var ErrSessionNeeded = errors.New("pass --session ID")

// SessionError reports a --session the file does not hold (Want set; it
// wraps sessionlog.ErrNotFound) or a database of several sessions read
// without --session (Want empty; it wraps ErrSessionNeeded). IDs are the
// sessions the file holds.
type SessionError struct {
	File string
	Want string
	IDs  []string
}

// maxListedIDs bounds the ids a SessionError names.
const maxListedIDs = 10

func (e *SessionError) Error() string {
	ids := e.IDs
	more := ""
	if len(ids) > maxListedIDs {
		ids, more = ids[:maxListedIDs], fmt.Sprintf(" and %d more", len(e.IDs)-maxListedIDs)
	}
	held := strings.Join(ids, ", ") + more
	if e.Want == "" {
		return fmt.Sprintf("%s holds %s (%s); pass --session ID to pick one (reel log list %s shows them)",
			e.File, plural(len(e.IDs), "session"), held, e.File)
	}
	return fmt.Sprintf("%s: no session %q: %v; it holds %s (%s)", e.File, e.Want, sessionlog.ErrNotFound, plural(len(e.IDs), "session"), held)
}

// Unwrap returns sessionlog.ErrNotFound or ErrSessionNeeded.
func (e *SessionError) Unwrap() error {
	if e.Want != "" {
		return sessionlog.ErrNotFound
	}
	return ErrSessionNeeded
}

// sessionIDs lists the session ids of a database file.
func sessionIDs(path string) ([]string, error) {
	infos, err := sqlite.ListFile(path)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = in.ID
	}
	return ids, nil
}

// dbSession picks the session of a database a command reads: session
// itself, checked to be there, or the only one.
func dbSession(path, session string) (string, error) {
	ids, err := sessionIDs(path)
	if err != nil {
		return "", err
	}
	switch {
	case session != "" && !slices.Contains(ids, session):
		return "", &SessionError{File: path, Want: session, IDs: ids}
	case session != "":
		return session, nil
	case len(ids) == 0:
		return "", fmt.Errorf("%s: %w: the database holds no session", path, sessionlog.ErrNotFound)
	case len(ids) > 1:
		return "", &SessionError{File: path, IDs: ids}
	}
	return ids[0], nil
}

// readSQLite reads one session of a database file. Its file label names
// the session when --session picked it.
func readSQLite(path, session string) (*loaded, error) {
	id, err := dbSession(path, session)
	if err != nil {
		return nil, err
	}
	h, events, err := sqlite.ReadSession(path, id)
	if err != nil {
		return nil, err
	}
	label := path
	if session != "" {
		label = fmt.Sprintf("%s session %s", path, id)
	}
	return &loaded{file: label, header: h, events: events, lineOf: func(seq int) int { return seq + 1 }}, nil
}

// listRow is one session of `reel log list`.
type listRow struct {
	id, created, cwd, events, last, where string
}

// list prints the sessions of a database file, or of a state directory:
// its JSONL logs and its sessions.db. A session that does not load is
// listed with its error, and the errors are returned.
func list(path string, stdout io.Writer) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	var (
		rows []listRow
		errs []error
	)
	add := func(file, session string) {
		r := listRow{id: session, where: filepath.Base(file), created: "-", cwd: "-", events: "-"}
		l, lg, err := seed(file, session)
		if l == nil && err == nil {
			return
		}
		if err != nil {
			errs = append(errs, err)
			r.last = "refused: " + clip(err.Error(), 60)
			rows = append(rows, r)
			return
		}
		r.id, r.created, r.cwd = l.header.ID, time.UnixMilli(l.header.CreatedAt).UTC().Format(time.RFC3339), l.header.Cwd
		r.events = fmt.Sprint(lg.Len())
		r.last = lastState(lg.Events())
		if l.torn != nil {
			r.last += fmt.Sprintf("; torn tail at line %d", l.torn.Line)
		}
		rows = append(rows, r)
	}
	addDB := func(db string) {
		ids, err := sessionIDs(db)
		if err != nil {
			errs = append(errs, err)
			rows = append(rows, listRow{id: "-", where: filepath.Base(db), created: "-", cwd: "-", events: "-", last: "refused: " + clip(err.Error(), 60)})
			return
		}
		for _, id := range ids {
			add(db, id)
		}
	}
	switch {
	case !fi.IsDir() && isSQLite(path):
		addDB(path)
	case !fi.IsDir():
		return fmt.Errorf("%w: reel log list DB|DIR: %s is neither a database (.db, .sqlite) nor a directory", ErrUsage, path)
	default:
		entries, err := os.ReadDir(path)
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || strings.HasPrefix(name, ".") || fileID(name) == "" {
				continue
			}
			add(filepath.Join(path, name), "")
		}
		if db := filepath.Join(path, sqlite.DBName); exists(db) {
			addDB(db)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "%s: no sessions\n", path)
		return errors.Join(errs...)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tEVENTS\tLAST TURN\tCWD\tFILE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.id, r.created, r.events, r.last, r.cwd, r.where)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", plural(len(rows), "session"))
	return errors.Join(errs...)
}

// lastState says how a log's last turn stands: "turn 3 completed", "turn 2
// unfinished (repair would add 2 closers)", "no turns".
func lastState(evs []sessionlog.Event) string {
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		switch e.Type {
		case sessionlog.TypeTurnEnd:
			d, _ := sessionlog.DecodeData[sessionlog.TurnEndData](e)
			s := fmt.Sprintf("turn %d %s", d.Turn, d.Reason.Kind)
			if d.Reason.Error != nil {
				s += ": " + clip(d.Reason.Error.Message, 40)
			}
			return s
		case sessionlog.TypeTurnStart:
			d, _ := sessionlog.DecodeData[sessionlog.StepData](e)
			s := fmt.Sprintf("turn %d unfinished", d.Turn)
			if c := sessionlog.Repair(evs); len(c) > 0 {
				s += fmt.Sprintf(" (repair would add %s)", plural(len(c), "closer"))
			}
			return s
		}
	}
	return "no turns"
}

// surface prints the folded surface: as JSON with asJSON (the shape of
// sessionlog.Fold), otherwise one line per surface seq and one per
// replacement.
func surface(path, session string, asJSON bool, stdout io.Writer) error {
	_, lg, err := seed(path, session)
	if err != nil {
		return err
	}
	evs := lg.Events()
	f, err := sessionlog.FoldSurface(evs)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(stdout, f)
	}
	rows := make([]showLine, 0, len(f.Seqs))
	for _, seq := range f.Seqs {
		e := &evs[seq]
		rows = append(rows, showLine{seq, e.Type, Preview(e)})
	}
	fmt.Fprintf(stdout, "surface: %s\n", plural(len(f.Seqs), "message"))
	writeShow(stdout, rows)
	if len(f.Replacements) == 0 {
		fmt.Fprintln(stdout, "replacements: none")
		return nil
	}
	fmt.Fprintf(stdout, "replacements: %d\n", len(f.Replacements))
	for _, r := range f.Replacements {
		fmt.Fprintf(stdout, "%*d  replaces seqs %d…%d, shadowing %s\n", minSeqWidth, r.Seq, r.Start, r.End, joinInts(r.Shadowed))
	}
	return nil
}

// previewLen is how many runes of text a surface preview shows.
const previewLen = 60

// Preview is a short description of a surface event's message: its role
// and the start of its text, "(thinking)" for reasoning, the tool calls it
// makes, and for a tool result the call id it answers.
func Preview(e *sessionlog.Event) string {
	raw, err := sessionlog.ProjectMessage(e)
	if err != nil {
		return clip(string(e.Data), previewLen)
	}
	m, err := sessionlog.ParseMessage(raw)
	if err != nil {
		return clip(string(raw), previewLen)
	}
	parts := []string{m.Role + ":"}
	for _, p := range m.Content {
		switch p.Type {
		case "text":
			if t := strings.TrimSpace(p.Text); t != "" {
				parts = append(parts, clip(t, previewLen))
			}
		case "reasoning":
			parts = append(parts, "(thinking)")
		case "tool-call":
			parts = append(parts, fmt.Sprintf("→ %s %s", p.Name, p.ID))
		case "tool-result":
			var txt string
			for _, c := range p.Content {
				txt += c.Text
			}
			status := "ok"
			if p.IsError {
				status = "error"
			}
			parts = append(parts, fmt.Sprintf("← %s %s: %s", p.ToolCallID, status, clip(strings.TrimSpace(txt), previewLen)))
		}
	}
	s := strings.Join(parts, " ")
	if e.SurfaceOp != nil && e.SurfaceOp.Replace {
		s = fmt.Sprintf("[replaces %d…%d] ", e.SurfaceOp.Start, e.SurfaceOp.End) + s
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// outKinds are the output extensions convert knows, for its refusal.
const outKinds = ".jsonl, .jsonl.zst, .db, .sqlite"

// checkOut refuses an output file whose extension names no backend.
func checkOut(path string) error {
	if isSQLite(path) || strings.HasSuffix(path, jsonl.ExtRaw) || strings.HasSuffix(path, jsonl.ExtZstd) {
		return nil
	}
	return fmt.Errorf("%w: convert: %s: unknown output extension %q; want one of %s", ErrUsage, path, filepath.Ext(path), outKinds)
}
