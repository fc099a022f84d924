package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/reel-agent/reel/harness/normalize"
	"github.com/reel-agent/reel/harness/scenario"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Output is what a run produced, normalized: the transcript, one log per
// session (pinned) in fixture order — the script's sessions, then its
// child sessions (children.go) — and the pinned content.
type Output struct {
	Transcript []byte
	Logs       [][]byte
	Pinned     *Pinned
}

// Normalize turns a run into comparable output.
func Normalize(run *Run) (*Output, error) {
	tmps := []string{run.Temp}
	if real, err := filepath.EvalSymlinks(run.Temp); err == nil && real != run.Temp {
		tmps = append(tmps, real)
	}
	cwds := run.Cwd
	ids, err := harvestIDs(run)
	if err != nil {
		return nil, err
	}
	raws := make([][]byte, len(ids))
	for i, id := range ids {
		if raw, ok := run.Deleted[i]; ok {
			if err := goneLog(run.StateDir, id); err != nil {
				return nil, fmt.Errorf("session %d at the end of the run: %w", i, err)
			}
			raws[i] = raw
			continue
		}
		if run.Refused[i] {
			continue
		}
		if raws[i], err = harvest(run.StateDir, id); err != nil {
			return nil, fmt.Errorf("session %d (%s): %w", i, id, err)
		}
	}
	// Every session's id is known to the normalizers before any line is
	// rewritten, in fixture order: a text that names a child before its
	// log is read ("started subagent <id>" in its parent's log and on the
	// wire) gets the child's placeholder too.
	tn := normalize.New(normalize.Options{Cwd: cwds, TempDirs: tmps})
	ln := normalize.New(normalize.Options{Cwd: cwds, TempDirs: tmps})
	for _, raw := range raws {
		if header, _, ok := bytes.Cut(raw, []byte("\n")); ok {
			tn.Line(header)
			ln.Line(header)
		}
	}
	tr, err := tn.Transcript(bytes.NewReader(withoutProgress(run.Transcript)))
	if err != nil {
		return nil, fmt.Errorf("normalize transcript: %w", err)
	}
	out := &Output{Transcript: tr, Pinned: newPinned()}
	// One normalizer for every log of the run: an id is the same
	// placeholder in each (a child's parentSession is its parent's id).
	for i, raw := range raws {
		if _, deleted := run.Deleted[i]; run.Refused[i] && !deleted {
			out.Logs = append(out.Logs, nil)
			continue
		}
		st := &pinState{}
		var b bytes.Buffer
		for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			nl := ln.Line(bytes.TrimRight(line, "\n"))
			pl, err := pinLine(nl, st, out.Pinned)
			if err != nil {
				return nil, fmt.Errorf("session %d: pin header: %w", i, err)
			}
			b.Write(pl)
			b.WriteByte('\n')
		}
		out.Logs = append(out.Logs, b.Bytes())
	}
	return out, nil
}

// harvest reads a session's log from the state dir and re-encodes it in the
// canonical layout.
func harvest(stateDir, id string) ([]byte, error) {
	path := filepath.Join(stateDir, id+".jsonl")
	d, _, err := jsonl.ReadValid(path)
	if err != nil {
		return nil, fmt.Errorf("the agent wrote an invalid log: %w", err)
	}
	if d.Torn != nil {
		return nil, fmt.Errorf("%s: torn tail at line %d: the agent did not shut down cleanly", path, d.Torn.Line)
	}
	var b bytes.Buffer
	if err := jsonl.Encode(&b, d.Header, d.Events); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sessionFile is the fixture file name of session i.
func sessionFile(i int) string {
	if i == 0 {
		return scenario.SessionFile
	}
	return fmt.Sprintf("session.%d.jsonl", i)
}

// LogDiff compares an expected and a produced log semantically and
// describes the first difference: the seq, its type, the field, expected
// vs got. It returns "" when the logs are identical.
func LogDiff(name string, want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wd, werr := jsonl.Decode(bytes.NewReader(want), name)
	gd, gerr := jsonl.Decode(bytes.NewReader(got), name)
	if werr != nil || gerr != nil {
		return fmt.Sprintf("%s: logs differ and cannot be decoded (expected: %v; got: %v)", name, werr, gerr)
	}
	if !bytes.Equal(wd.Header.Raw, gd.Header.Raw) {
		return fmt.Sprintf("%s: header differs:\n  expected %s\n  got      %s", name, wd.Header.Raw, gd.Header.Raw)
	}
	n := min(len(wd.Events), len(gd.Events))
	for i := 0; i < n; i++ {
		w, g := &wd.Events[i], &gd.Events[i]
		if d := eventDiff(w, g); d != "" {
			return fmt.Sprintf("%s: seq %d (%s): %s", name, w.Seq, w.Type, d)
		}
	}
	switch {
	case len(wd.Events) > n:
		e := &wd.Events[n]
		return fmt.Sprintf("%s: the run stopped after seq %d; expected seq %d (%s) next: %s", name, n-1, e.Seq, e.Type, clip(string(e.Data)))
	case len(gd.Events) > n:
		e := &gd.Events[n]
		return fmt.Sprintf("%s: the run wrote more than expected, starting with seq %d (%s): %s", name, e.Seq, e.Type, clip(string(e.Data)))
	}
	return fmt.Sprintf("%s: logs differ in layout only (re-encode the fixture canonically)", name)
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func eventDiff(w, g *sessionlog.Event) string {
	if w.Type != g.Type {
		return fmt.Sprintf("type: expected %s, got %s", w.Type, g.Type)
	}
	if !reflect.DeepEqual(w.SurfaceOp, g.SurfaceOp) {
		return fmt.Sprintf("surfaceOp: expected %s, got %s", opString(w.SurfaceOp), opString(g.SurfaceOp))
	}
	if !slices.Equal(w.SourceEventSeqs, g.SourceEventSeqs) {
		return fmt.Sprintf("sourceEventSeqs: expected %v, got %v", w.SourceEventSeqs, g.SourceEventSeqs)
	}
	if bytes.Equal(w.Data, g.Data) {
		return ""
	}
	return "data" + jsonDiff(w.Data, g.Data)
}

func opString(op *sessionlog.SurfaceOp) string {
	if op == nil {
		return "(none)"
	}
	return string(op.AppendJSON(nil))
}

// jsonDiff names the first differing path between two JSON values.
func jsonDiff(a, b json.RawMessage) string {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return fmt.Sprintf(": expected %s, got %s", clip(string(a)), clip(string(b)))
	}
	path, ev, gv := firstDiff(x, y, "")
	ej, _ := json.Marshal(ev)
	gj, _ := json.Marshal(gv)
	return fmt.Sprintf("%s: expected %s, got %s", path, clip(string(ej)), clip(string(gj)))
}

func firstDiff(x, y any, path string) (string, any, any) {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return path, x, y
		}
		keys := make([]string, 0, len(xv)+len(yv))
		for k := range xv {
			keys = append(keys, k)
		}
		for k := range yv {
			if _, ok := xv[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !reflect.DeepEqual(xv[k], yv[k]) {
				return firstDiff(xv[k], yv[k], path+"."+k)
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok {
			return path, x, y
		}
		for i := 0; i < min(len(xv), len(yv)); i++ {
			if !reflect.DeepEqual(xv[i], yv[i]) {
				return firstDiff(xv[i], yv[i], fmt.Sprintf("%s[%d]", path, i))
			}
		}
		if len(xv) != len(yv) {
			return path + " (length)", len(xv), len(yv)
		}
	}
	if path == "" {
		path = " (key order or encoding)"
	}
	return path, x, y
}

// TextDiff is a small line diff for readable failures: the lines only in
// want (-) and only in got (+), with the first differing line number.
func TextDiff(want, got string) string {
	wl := strings.Split(want, "\n")
	gl := strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	j, k := len(wl)-1, len(gl)-1
	for j >= i && k >= i && wl[j] == gl[k] {
		j--
		k--
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d @@\n", i+1)
	for _, l := range wl[i : j+1] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range gl[i : k+1] {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// readFile reads a file, treating a missing file as empty with ok=false.
func readFile(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// canonical checks that a fixture log is in the canonical packed layout:
// decoding and re-encoding it gives the same bytes.
func canonical(path string, raw []byte) error {
	d, err := jsonl.Decode(bytes.NewReader(raw), path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := jsonl.Encode(&b, d.Header, d.Events); err != nil {
		return err
	}
	if !bytes.Equal(b.Bytes(), raw) {
		return fmt.Errorf("%s: not in the canonical packed layout (re-encode with `reel log encode`)", path)
	}
	return nil
}
