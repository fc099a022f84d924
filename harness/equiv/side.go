package equiv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Side is one run of a scenario as the check sees it: the session logs it
// wrote (session 0 first) and the agent's stdout, the JSON-RPC frames a
// client received. A nil Wire means the run has no transcript; the wire
// checks are then reported as unchecked.
type Side struct {
	// Label names the side in messages ("recording", "reel", a file name).
	Label string
	// Logs are the session logs, in session order.
	Logs []*Log
	// Wire is the agent's stdout, one frame per line.
	Wire []byte
	// AutomationOnly marks a Wire the reference's automation-only
	// transport recorded (a corpus scenario's stdout.expected.jsonl): it
	// carries answers and agent_message_chunk frames but no tool-call,
	// thought, plan, title, command or usage updates. As the side under
	// test such a wire's session updates are reported unchecked (see
	// UpdateRules).
	AutomationOnly bool
	// Temp are literal directories (the run's temp root) that stand for
	// {{tmp}} in tool output; each log's header cwd stands for {{cwd}}.
	Temp []string
}

// Log is one session log.
type Log struct {
	// Name is where the log came from (a file path), for messages.
	Name   string
	Header sessionlog.Header
	Events []sessionlog.Event
}

// Sentinel errors of the loaders.
var (
	// ErrNoLog reports a folder holding no session log.
	ErrNoLog = errors.New("equiv: no session log")
)

// LoadLog reads and validates one JSONL session log (.jsonl or .jsonl.zst)
// with every format rule.
func LoadLog(path string) (*Log, error) {
	d, _, err := jsonl.ReadValid(path)
	if err != nil {
		return nil, err
	}
	return &Log{Name: path, Header: d.Header, Events: d.Events}, nil
}

// DecodeLog decodes and validates a JSONL session log held in memory.
func DecodeLog(name string, raw []byte) (*Log, error) {
	d, err := jsonl.Decode(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	if _, err := sessionlog.Seed(d.Header, d.Events); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Log{Name: name, Header: d.Header, Events: d.Events}, nil
}

// Wire files a folder may hold, in the order LoadDir looks for them: the
// corpus's recorded transcript, and the transcript `reel snapshot --corpus
// --keep` writes.
var wireFiles = []string{automationWire, "stdout.jsonl"}

// automationWire is the corpus's recorded transcript, written by the
// reference's automation-only transport.
const automationWire = "stdout.expected.jsonl"

// LoadDir loads a scenario folder as a Side: session.jsonl, then
// session.1.jsonl, session.2.jsonl, … (as far as they go without a gap),
// and the transcript stdout.expected.jsonl or stdout.jsonl when present.
// It is the layout of a corpus scenario and of a folder written by
// `reel snapshot --corpus --keep`.
func LoadDir(dir string) (*Side, error) {
	s := &Side{Label: dir}
	for i := 0; ; i++ {
		name := "session.jsonl"
		if i > 0 {
			name = "session." + strconv.Itoa(i) + ".jsonl"
		}
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
		l, err := LoadLog(path)
		if err != nil {
			return nil, err
		}
		s.Logs = append(s.Logs, l)
	}
	if len(s.Logs) == 0 {
		return nil, fmt.Errorf("%w in %s (want session.jsonl)", ErrNoLog, dir)
	}
	for _, name := range wireFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Wire, s.AutomationOnly = b, name == automationWire
		break
	}
	return s, nil
}

// Load loads a Side from a path: a folder (LoadDir) or a single log file.
func Load(path string) (*Side, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return LoadDir(path)
	}
	l, err := LoadLog(path)
	if err != nil {
		return nil, err
	}
	return &Side{Label: path, Logs: []*Log{l}}, nil
}

// Placeholders for run-specific paths in compared text.
const (
	cwdToken = "{{cwd}}"
	tmpToken = "{{tmp}}"
)

// pather replaces a side's run-specific paths with placeholders.
type pather struct{ pairs []string }

// newPather builds the replacements of one log: its header cwd (and the
// cwd with symbolic links resolved) becomes {{cwd}}, the side's temp dirs
// {{tmp}}. Longer literals are replaced first.
func newPather(cwd string, temp []string) *pather {
	type pair struct{ old, new string }
	var ps []pair
	add := func(old, new string) {
		if old == "" || old == new || old == "/" {
			return
		}
		ps = append(ps, pair{old, new})
		if r, err := filepath.EvalSymlinks(old); err == nil && r != old {
			ps = append(ps, pair{r, new})
		}
	}
	add(cwd, cwdToken)
	for _, t := range temp {
		add(t, tmpToken)
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	p := &pather{}
	for _, x := range ps {
		p.pairs = append(p.pairs, x.old, x.new)
	}
	return p
}

// apply replaces the paths in s.
func (p *pather) apply(s string) string {
	if p == nil || len(p.pairs) == 0 {
		return s
	}
	return strings.NewReplacer(p.pairs...).Replace(s)
}
