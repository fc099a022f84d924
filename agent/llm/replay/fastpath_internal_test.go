package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// sent is the request reel sends for a recorded want: the recorded
// messages and the pinned (or recorded) system prompt and tool list, the
// tools compact as a header holds them.
func sent(t *testing.T, pins string, w *Want) llm.Request {
	t.Helper()
	resolve := func(v, dir, ext string) string {
		kind, name, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(v, "{{"), "}}"), ":")
		if !ok || !strings.HasPrefix(v, "{{") || kind == "" {
			return v
		}
		b, err := os.ReadFile(filepath.Join(pins, dir, name+"_1.snap"+ext))
		if err != nil {
			return v // not pinned in snapshots/: both paths leave it unchecked
		}
		return string(b)
	}
	tools := string(w.Header.Tools)
	var ref string
	if json.Unmarshal(w.Header.Tools, &ref) == nil {
		tools = resolve(ref, "tools", ".json")
	}
	var compact bytes.Buffer
	if tools != "" {
		if err := json.Compact(&compact, []byte(tools)); err != nil {
			t.Fatal(err)
		}
	}
	return llm.Request{
		Purpose: w.Purpose, HeaderReason: w.Reason, MaxTokens: w.MaxTokens,
		System:   resolve(w.Header.System, "prompts", ".md"),
		Tools:    compact.Bytes(),
		Messages: slices.Clone(w.Messages),
	}
}

// bump changes a letter of raw (a copy): the first after the first
// occurrence of after, or with after "" the last.
func bump(raw []byte, after string) []byte {
	out := bytes.Clone(raw)
	from := bytes.Index(out, []byte(after))
	if from < 0 {
		return out
	}
	for k := from + len(after); k < len(out); k++ {
		i := k
		if after == "" {
			i = len(out) - 1 - k
		}
		if out[i] >= 'a' && out[i] <= 'y' {
			out[i]++
			break
		}
	}
	return out
}

// TestCheckFastPathsAgree is the differential test of Check's fast paths
// (messages with the recorded bytes, or a pair that agreed at an earlier
// call, are not parsed; a tool list sent as the recorded one compacted is
// not compacted again): over every recorded call of the fixture logs, one
// matcher per log and mode, as recorded, as sent (its own ids) and with one message (the first, middle
// or last: its text, its role or its last letter), the tools, or their spacing changed, Check with them and Check comparing
// everything (exhaustive) return the same verdict, notes and differences.
func TestCheckFastPathsAgree(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "*", "session*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture logs (%v)", err)
	}
	pins := filepath.Join("..", "..", "..", "snapshots")
	calls, variants, refused := 0, 0, 0
	for _, f := range files {
		d, err := jsonl.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wants, err := Wants(d.Header, d.Events)
		if err != nil {
			continue // a refused log (the crash and legacy fixtures)
		}
		for _, mode := range []string{MatchFull, MatchMessages} {
			fast := &Matcher{Mode: mode, Cwd: d.Header.Cwd, Pins: pins}
			slow := &Matcher{Mode: mode, Cwd: d.Header.Cwd, Pins: pins, exhaustive: true}
			for key, w := range wants {
				calls++
				recorded := sent(t, pins, w)
				// What reel sends has its own ids where the recording
				// has placeholders: the bytes differ, the messages agree.
				req := recorded
				req.Messages = make([]json.RawMessage, len(recorded.Messages))
				for i, m := range recorded.Messages {
					req.Messages[i] = bytes.ReplaceAll(m, []byte(`"{{id:`), []byte(`"msg-`))
				}
				reqs := []llm.Request{recorded, req}
				n := len(req.Messages)
				for _, i := range slices.Compact([]int{0, n / 2, n - 1}) {
					if i < 0 {
						continue
					}
					for _, after := range []string{"", `"text":"`, `"role":"`} {
						r := req
						r.Messages = slices.Clone(req.Messages)
						r.Messages[i] = bump(r.Messages[i], after)
						reqs = append(reqs, r)
					}
				}
				if len(req.Tools) > 0 {
					r := req
					r.Tools = bump(req.Tools, "")
					reqs = append(reqs, r)
					var spaced bytes.Buffer
					_ = json.Indent(&spaced, req.Tools, "", " ")
					r.Tools = spaced.Bytes()
					reqs = append(reqs, r)
				}
				for _, r := range reqs {
					variants++
					u1, e1 := fast.Check(key, w, r)
					u2, e2 := slow.Check(key, w, r)
					if e2 != nil {
						refused++
					}
					if !slices.Equal(u1, u2) || fmt.Sprint(e1) != fmt.Sprint(e2) {
						t.Fatalf("%s %s %s: fast paths: %v %v\nexhaustive: %v %v", f, mode, key, u1, e1, u2, e2)
					}
				}
			}
		}
	}
	if calls < 100 {
		t.Fatalf("only %d recorded calls", calls)
	}
	if refused == 0 || refused == variants {
		t.Fatalf("%d of %d requests refused: the variants do not exercise both verdicts", refused, variants)
	}
	t.Logf("%d recorded calls, %d requests compared, %d refused", calls, variants, refused)
}

// BenchmarkCheckFixtures checks every recorded call of each fixture log
// in step order, sent with reel's own ids, through a fresh matcher per log
// (one replaying process): with the fast paths (fast) and comparing
// everything (old).
func BenchmarkCheckFixtures(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "*", "session*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture logs (%v)", err)
	}
	pins := filepath.Join("..", "..", "..", "snapshots")
	type call struct {
		w   *Want
		req llm.Request
	}
	type log struct {
		cwd   string
		calls []call
	}
	var logs []log
	t := &testing.T{}
	for _, f := range files {
		d, err := jsonl.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		wants, err := Wants(d.Header, d.Events)
		if err != nil {
			continue
		}
		l := log{cwd: d.Header.Cwd}
		for _, w := range wants {
			req := sent(t, pins, w)
			for i, m := range req.Messages {
				req.Messages[i] = bytes.ReplaceAll(m, []byte(`"{{id:`), []byte(`"msg-`))
			}
			l.calls = append(l.calls, call{w, req})
		}
		slices.SortFunc(l.calls, func(a, b call) int {
			if a.w.Turn != b.w.Turn {
				return a.w.Turn - b.w.Turn
			}
			return a.w.Step - b.w.Step
		})
		logs = append(logs, l)
	}
	for _, exhaustive := range []bool{false, true} {
		name := map[bool]string{false: "fast", true: "old"}[exhaustive]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range logs {
					m := &Matcher{Mode: MatchFull, Cwd: l.cwd, Pins: pins, exhaustive: exhaustive}
					for _, c := range l.calls {
						_, _ = m.Check("", c.w, c.req)
					}
				}
			}
		})
	}
}
