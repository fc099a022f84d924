package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reel-agent/reel/harness"
	"github.com/reel-agent/reel/internal/corpustest"
)

// TestCorpusChildLogsTampered replays copies of a corpus recording with
// foreground children through the real binary: the copy as recorded
// passes, and a copy whose child log was changed or dropped fails, the
// difference naming the child.
func TestCorpusChildLogsTampered(t *testing.T) {
	const name = "subagent-multi"
	tests := []struct {
		name, file, old, new string
		// want is the difference expected ("" = pass); … stands for any
		// text without a line break (reel's seqs).
		want string
	}{
		{name: "as recorded"},
		{name: "the child's turn end", file: "session.1.jsonl", old: `"reason":{"kind":"completed"}`, new: `"reason":{"kind":"max-tokens"}`,
			want: "turn ends, child 1: turn 1 (recording seq 41, reel seq …): reason: recording max-tokens, reel completed"},
		{name: "the child's final text", file: "session.2.jsonl", old: `{"type":"text","text":"BETA"}],"source":{"kind":"model"`, new: `{"type":"text","text":"GAMMA"}],"source":{"kind":"model"`,
			want: `assistant text, child 2: turn 1 step 1`},
		{name: "the child's depth", file: "session.2.jsonl", old: `"delegationDepth":1`, new: `"delegationDepth":0`,
			want: "lineage, child 2: header: delegationDepth: recording 0, reel 1"},
		{name: "a child log dropped", file: "session.2.jsonl",
			want: "sessions: recording has 1 child (subagent) session log(s), reel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, name)
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(corpustest.Dir(t), name))); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				path := filepath.Join(dir, tt.file)
				if tt.old == "" {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				} else {
					b := readBytes(t, path)
					if !strings.Contains(string(b), tt.old) {
						t.Fatalf("%s does not hold %q", tt.file, tt.old)
					}
					writeBytes(t, path, []byte(strings.Replace(string(b), tt.old, tt.new, 1)))
				}
			}
			results, err := harness.RunCorpusDir(context.Background(), root, harness.CorpusOptions{Exe: reelExe, Jobs: 1})
			if err != nil || len(results) != 1 {
				t.Fatalf("RunCorpusDir = %v, %v", results, err)
			}
			r := results[0]
			report := strings.Join(append(r.Failures, r.Unchecked...), "\n")
			if tt.want == "" {
				if r.Verdict != harness.VerdictPass {
					t.Fatalf("%s as recorded: %s\n%s", name, r.Verdict, report)
				}
				return
			}
			if r.Verdict != harness.VerdictFail || !regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(tt.want), "…", `[^\n]*`)).MatchString(report) {
				t.Errorf("verdict %s, want FAIL with %q:\n%s", r.Verdict, tt.want, report)
			}
		})
	}
}
