package harness

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Shard selects a stable share of the scenarios: scenario names are hashed
// (FNV-1a, 32 bit) and a name belongs to shard Index (1-based) of Count
// when hash mod Count == Index-1. The zero Shard selects everything.
type Shard struct {
	// Index is the 1-based shard number, 1 ≤ Index ≤ Count.
	Index int
	// Count is the number of shards; 0 means "not sharded".
	Count int
}

// ParseShard parses a --shard value "K/N" (1 ≤ K ≤ N).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %q: want K/N, e.g. 2/4 (shard K of N, K from 1)", s)
	}
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("--shard %q: K and N must be integers, e.g. 2/4", s)
	case ni < 1:
		return Shard{}, fmt.Errorf("--shard %q: N must be at least 1", s)
	case ki < 1 || ki > ni:
		return Shard{}, fmt.Errorf("--shard %q: K must be between 1 and N (%d)", s, ni)
	}
	return Shard{Index: ki, Count: ni}, nil
}

// Has reports whether the scenario called name belongs to the shard.
func (s Shard) Has(name string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32()%uint32(s.Count)) == s.Index-1
}

// String returns the shard in --shard form ("" for the zero Shard).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// FailureGroup is one cause of failure and the scenarios it affects.
type FailureGroup struct {
	// Text describes the failure; for a group of several scenarios the
	// scenario name in it is replaced by "<scenario>" and seq numbers of
	// a log diff by "N".
	Text string
	// Scenarios lists, in result order and without repeats, the affected
	// scenarios.
	Scenarios []string
}

// seqPattern matches the event position a log diff starts with.
var seqPattern = &pattern{expr: `seq \d+ \(`}

// causeKey is a failure's text with what is particular to one scenario (its
// name and the seq of a differing event) taken out, so that one prompt or
// tool-schema change reads the same in every scenario it breaks.
func causeKey(scenarioName, failure string) string {
	key := failure
	if rest, ok := strings.CutPrefix(key, scenarioName+": "); ok {
		key = "<scenario>: " + rest
	}
	key = strings.ReplaceAll(key, scenarioName+"/", "<scenario>/")
	key = strings.ReplaceAll(key, "/"+scenarioName+"_1.snap", "/<scenario>_1.snap")
	return seqPattern.get().ReplaceAllString(key, "seq N (")
}

// GroupFailures groups the results' failures by cause: failures whose text
// is the same once the scenario's name and event seq are taken out form
// one group. Groups are in order of first appearance; a group of one
// scenario keeps the failure's original text.
func GroupFailures(results []Result) []FailureGroup {
	var groups []FailureGroup
	at := map[string]int{}
	for _, r := range results {
		for _, f := range r.Failures {
			key := causeKey(r.Name, f)
			i, ok := at[key]
			if !ok {
				at[key] = len(groups)
				groups = append(groups, FailureGroup{Text: f, Scenarios: []string{r.Name}})
				continue
			}
			g := &groups[i]
			if g.Scenarios[len(g.Scenarios)-1] != r.Name {
				g.Scenarios = append(g.Scenarios, r.Name)
				g.Text = key
			}
		}
	}
	return groups
}

// printFailures writes the grouped failures: each cause once, followed by
// the scenarios it affects.
func printFailures(w io.Writer, results []Result) {
	for _, g := range GroupFailures(results) {
		text := strings.TrimRight(g.Text, "\n")
		if len(g.Scenarios) == 1 {
			fmt.Fprintf(w, "\n--- FAIL %s\n%s\n", g.Scenarios[0], text)
			continue
		}
		fmt.Fprintf(w, "\n--- FAIL %d scenarios, one cause\n%s\naffects %d scenarios: %s\n", len(g.Scenarios), text, len(g.Scenarios), strings.Join(g.Scenarios, ", "))
	}
}

// refreshCommand is the command that rewrites the expected outputs of the
// scenarios a run selected.
func refreshCommand(runPat, fixtures, snapshots string) string {
	cmd := "go run ./cmd/reel snapshot --refresh"
	if runPat != "" {
		cmd += " -run " + shellQuote(runPat)
	}
	if fixtures != "fixtures" {
		cmd += " --fixtures " + shellQuote(fixtures)
	}
	if snapshots != "snapshots" {
		cmd += " --snapshots " + shellQuote(snapshots)
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// junitSuite is the root of a JUnit XML report.
type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

// junitCase is one scenario of a JUnit XML report.
type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

// junitFailure says why a scenario failed; Text holds every failure's
// full text (diffs included), as CDATA so the diff stays readable in the
// file.
type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// xmlText replaces what XML 1.0 cannot carry (most control characters,
// such as a terminal escape in a tool's output, and invalid UTF-8) with
// U+FFFD.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == utf8.RuneError, r >= 0xFFFE && r <= 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return utf8.RuneError
		}
		return r
	}, s)
}

// JUnit renders results as a JUnit XML document: one testsuite, one
// testcase per scenario (a failing one carries a failure whose message is
// the first line of its first failure and whose text is every failure in
// full), plus a testcase "guard" holding the guard problems when the run
// checked them (guarded).
func JUnit(results []Result, guard []string, guarded bool, wall time.Duration) ([]byte, error) {
	seconds := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
	s := junitSuite{Name: "reel snapshot", Time: seconds(wall)}
	add := func(name, class string, wall time.Duration, failures []string) {
		c := junitCase{Name: name, Classname: class, Time: seconds(wall)}
		if len(failures) > 0 {
			msg, _, _ := strings.Cut(failures[0], "\n")
			c.Failure = &junitFailure{Message: xmlText(msg), Type: "snapshot", Text: xmlText(strings.Join(failures, "\n\n"))}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	for _, r := range results {
		add(r.Name, "reel.snapshot", r.Wall, r.Failures)
	}
	if guarded {
		add("guard", "reel.snapshot.guard", 0, guard)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("junit: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// WriteJUnit writes the JUnit XML report to path atomically (a temporary
// file in the same folder, then a rename).
func WriteJUnit(path string, results []Result, guard []string, guarded bool, wall time.Duration) error {
	data, err := JUnit(results, guard, guarded, wall)
	if err != nil {
		return err
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
