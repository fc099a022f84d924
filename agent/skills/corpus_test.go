package skills

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/internal/corpustest"
)

// TestCorpusSkillLoad replays the recording's skill step against reel:
// it rebuilds the recorded workspace from the recording alone (the
// committed SKILL.md files of its workspace seed, and the loaded skill's
// file from its recorded description and instructions), then requires
// the catalog message, its source and the skill tool's result to be the
// recorded bytes (with {{cwd}} for the cwd).
func TestCorpusSkillLoad(t *testing.T) {
	// The corpus is a prerequisite: under CI=true its absence fails.
	corpusSession := filepath.Join(corpustest.Dir(t), "skill-load", "session.jsonl")
	f, err := os.Open(corpusSession)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var catalogText, catalogSource, resultText, callArgs string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type string
			Data json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "user/message":
			var m struct {
				Content []struct{ Text string }
				Source  json.RawMessage
			}
			if json.Unmarshal(ev.Data, &m) == nil && strings.Contains(string(m.Source), `"skill-catalog"`) {
				catalogText, catalogSource = m.Content[0].Text, string(m.Source)
			}
		case "tool/call":
			var c struct{ Name, Arguments string }
			if json.Unmarshal(ev.Data, &c) == nil && c.Name == "skill" {
				callArgs = c.Arguments
			}
		case "tool/result":
			var r struct {
				Message struct {
					Content []struct {
						Content []struct{ Text string }
					}
				}
			}
			if json.Unmarshal(ev.Data, &r) == nil && len(r.Message.Content) > 0 && len(r.Message.Content[0].Content) > 0 {
				resultText = r.Message.Content[0].Content[0].Text
			}
		}
	}
	if catalogText == "" || resultText == "" || callArgs == "" {
		t.Fatal("the recording lacks the catalog, the skill call or its result")
	}
	var args Args
	if err := json.Unmarshal([]byte(callArgs), &args); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	copyTree(t, filepath.Join(filepath.Dir(corpusSession), "workspace"), cwd)
	var entries []Entry
	var src struct{ Entries []Entry }
	if err := json.Unmarshal([]byte(catalogSource), &src); err != nil {
		t.Fatal(err)
	}
	entries = src.Entries
	desc := ""
	for _, e := range entries {
		if e.Name == args.Name {
			desc = e.Description
		}
	}
	_, rest, _ := strings.Cut(resultText, "<skill_instructions>\n")
	body, _, _ := strings.Cut(rest, "\n</skill_instructions>")
	writeFile(t, cwd, filepath.Join(".dsh", "skills", args.Name, "SKILL.md"),
		"---\nname: "+args.Name+"\ndescription: "+desc+"\n---\n\n"+body+"\n")

	c, problems := Discover(context.Background(), cwd, Options{NoUser: true})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if text, ok := c.Message(); !ok || text != catalogText {
		t.Errorf("catalog differs from the recording:\n%s\nrecorded:\n%s", text, catalogText)
	}
	if got := string(c.Source(false).AppendJSON(nil)); got != catalogSource {
		t.Errorf("source differs from the recording:\n%s\nrecorded:\n%s", got, catalogSource)
	}
	res, err := Tool{Options: Options{NoUser: true}}.Run(context.Background(), &tools.Env{Cwd: cwd}, json.RawMessage(callArgs))
	if err != nil || res.IsError {
		t.Fatalf("Run: %v %+v", err, res)
	}
	if got := strings.ReplaceAll(res.Text, cwd, "{{cwd}}"); got != resultText {
		t.Errorf("tool result differs from the recording:\n%s\nrecorded:\n%s", got, resultText)
	}
}
