package equiv

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// TestTitleCheck: the title check fails a log whose titles or title
// request differ from the recording's in any compared way, and passes one
// whose differences are what it does not compare (the request's route and
// place, the seqs themselves).
func TestTitleCheck(t *testing.T) {
	path := filepath.Join(corpustest.Dir(t), "session-title-after-turn", "session.jsonl")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := DecodeLog("recording", raw)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	// drop removes the lines holding s (the last event only: seqs stay
	// contiguous); sub replaces old by new in every line.
	drop := func(s string) func([][]byte) [][]byte {
		return func(ls [][]byte) [][]byte {
			var out [][]byte
			for _, l := range ls {
				if !bytes.Contains(l, []byte(s)) {
					out = append(out, l)
				}
			}
			return out
		}
	}
	sub := func(old, new string) func([][]byte) [][]byte {
		return func(ls [][]byte) [][]byte {
			out := make([][]byte, len(ls))
			for i, l := range ls {
				out[i] = bytes.ReplaceAll(l, []byte(old), []byte(new))
			}
			return out
		}
	}
	for _, c := range []struct {
		name   string
		mutate func([][]byte) [][]byte
		want   string // "" for no difference
	}{
		{"same", func(ls [][]byte) [][]byte { return ls }, ""},
		{"another route", sub(`"route":{"provider":"title-replay"`, `"route":{"provider":"deepseek-official"`), ""},
		{"no titles", sub(`"type":"session/title",`, `"type":"x/dropped",`), "recording writes 2 title(s)"},
		{"no model title", drop(`"kind":"provider"`), "writes 2 title(s)"},
		{"wrong fallback", sub(`"title":"Reply with exactly TITLE_DONE. Do"`, `"title":"Reply with exactly TITLE_DONE."`), "fallback title"},
		{"wrong model title", sub(`"title":"Late durable session title"`, `"title":"Late durable title"`), "provider title"},
		{"source", sub(`"source":{"kind":"fallback"}`, `"source":{"kind":"user"}`), "source: recording fallback"},
		{"another prompt", sub(`"messageSeqs":[4],"source":{"kind":"fallback"}`, `"messageSeqs":[5],"source":{"kind":"fallback"}`), "made from"},
		{"no request", sub(`"type":"session/title-llm-request"`, `"type":"x/dropped"`), "asks a title model 1 time(s)"},
		{"system prompt", sub(`Use the language of the messages.`, `Use English.`), "system prompt"},
		{"max tokens", sub(`"maxTokens":32`, `"maxTokens":64`), "maxTokens"},
		{"framed prompt", sub(`Do not use tools.\"}]`, `Do not use tool.\"}]`), "messages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := append(bytes.Join(c.mutate(lines), []byte("\n")), '\n')
			got, err := DecodeLog("reel", b)
			if err != nil {
				t.Fatal(err)
			}
			r := Compare(&Side{Label: "recording", Logs: []*Log{want}}, &Side{Label: "reel", Logs: []*Log{got}}, Options{})
			var titles []string
			for _, d := range r.Diffs {
				if d.Check == "titles" {
					titles = append(titles, d.Where+": "+d.What)
				}
			}
			switch {
			case c.want == "" && len(titles) > 0:
				t.Errorf("want no title difference, got %q", titles)
			case c.want != "" && !strings.Contains(strings.Join(titles, "\n"), c.want):
				t.Errorf("want a title difference mentioning %q, got %q", c.want, titles)
			}
		})
	}
}
