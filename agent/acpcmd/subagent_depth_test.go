package acpcmd_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestSubagentDepthRules holds reel to the reference's depth rules
// (resolveChildDepth against tool-subagent's maxDepth): a child's depth is
// its parent's plus one, and a subagent call whose child would be deeper
// than the limit is an error result, "Error: subagent depth D exceeds
// maxDepth M", made before any session — so the child logs are exactly one
// per admitted generation. Through the real binary, every generation tries
// to delegate once more, with the limit at 1 (the reference's acp-agent
// composition, reel's default) and at 2 (its depth-two overlay).
func TestSubagentDepthRules(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("maxDepth %d", limit), func(t *testing.T) {
			dir, ws, state := workspace(t)
			// Each generation (the root at depth 0) calls subagent; the
			// call at depth limit+1 is refused, then every generation
			// answers on the way back up.
			var rs []standin.Response
			for d := 0; d <= limit; d++ {
				rs = append(rs, standin.Response{ToolCalls: []standin.ToolCall{{ID: fmt.Sprintf("call-d%d", d), Name: "subagent",
					Arguments: jsonArgs(t, map[string]any{"description": "Delegate", "prompt": "Delegate once more."})}}})
			}
			refusal := fmt.Sprintf("Error: subagent depth %d exceeds maxDepth %d", limit+1, limit)
			rs = append(rs, standin.Response{Text: fmt.Sprintf("DEPTH_%d_DONE", limit), Expect: &standin.Expect{LastMessageContains: refusal}})
			for d := limit - 1; d >= 0; d-- {
				rs = append(rs, standin.Response{Text: fmt.Sprintf("DEPTH_%d_DONE", d), Expect: &standin.Expect{LastMessageContains: fmt.Sprintf("DEPTH_%d_DONE", d+1)}})
			}
			url, _ := standinURL(t, &standin.Script{Responses: rs})
			args := []string{"acp", "--state-dir", state, "--mode", "read-only", "--provider", "deepseek", "--base-url", url,
				"--model", "standin", "--no-title-model"}
			if limit != 1 {
				args = append(args, "--max-subagent-depth", fmt.Sprint(limit))
			}
			p := startProc(t, dir, baseEnv(t), args...)
			p.initialize()
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "Delegate as deep as you may."); stop != "end_turn" {
				t.Fatalf("stopReason %q (stderr %s)", stop, p.stderr.String())
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			// One log per generation: the root's and one child per admitted depth.
			logs, _ := filepath.Glob(filepath.Join(state, "*.jsonl"))
			byDepth := map[int]string{0: sid}
			for _, l := range logs {
				d, _, err := jsonl.ReadValid(l)
				if err != nil {
					t.Fatal(err)
				}
				if ch, ok := d.Header.Child(); ok {
					if prev, dup := byDepth[ch.Depth]; dup {
						t.Errorf("two sessions at depth %d: %s and %s", ch.Depth, prev, d.Header.ID)
					}
					byDepth[ch.Depth] = d.Header.ID
				}
			}
			if len(logs) != limit+1 || len(byDepth) != limit+1 {
				t.Fatalf("%d logs at depths %v, want one per depth 0..%d", len(logs), byDepth, limit)
			}
			for d := 0; d <= limit; d++ {
				id, ok := byDepth[d]
				if !ok {
					t.Fatalf("no session at depth %d", d)
				}
				res := toolResultTexts(t, logEvents(t, state, id))
				r := res[fmt.Sprintf("call-d%d", d)]
				want, wantErr := fmt.Sprintf("DEPTH_%d_DONE", d+1), false
				if d == limit {
					want, wantErr = refusal, true
				}
				if r.IsError != wantErr || strings.TrimSpace(r.Text) != want {
					t.Errorf("depth %d's subagent call: (isError %v) %q, want (isError %v) %q", d, r.IsError, r.Text, wantErr, want)
				}
			}
		})
	}
}
