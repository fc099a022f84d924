package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestFallbackTitle: the first five words, cleaned, cut to 40 bytes of
// whole characters.
func TestFallbackTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Reply with exactly TITLE_DONE. Do not use tools.", "Reply with exactly TITLE_DONE. Do"},
		{"Load the editing-cordis-compositions skill, then", "Load the editing-cordis-compositions ski"},
		{"  many\t\tspaces\nand\r\nlines  ", "many spaces and lines"},
		{"\x1b[1mbold\x1b[0m \x1b]0;pwned\x07title", "bold title"},
		{"ünïcödé ünïcödé ünïcödé ünïcödé ünïcödé", "ünïcödé ünïcödé ünïcödé ün"},
		{"日本語のプロンプトです。とても長い文章になります。", "日本語のプロンプトです。と"},
		{"a\u202eevil\u200b b", "aevil b"},
		{"short", "short"},
	} {
		if got := fallbackTitle(c.in); got != c.want {
			t.Errorf("fallbackTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTitleRulesMatchReference: reel's rules give what the reference's
// code gives (testdata/title-rules.json: its normalize.ts run under node).
func TestTitleRulesMatchReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "title-rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct{ In, Fallback, Title string }
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Cases) == 0 {
		t.Fatalf("title-rules.json: %v", err)
	}
	for _, c := range doc.Cases {
		if got := fallbackTitle(c.In); got != c.Fallback {
			t.Errorf("fallbackTitle(%q) = %q, the reference %q", c.In, got, c.Fallback)
		}
		if got := normalizeTitle(c.In, titleMaxBytes); got != c.Title {
			t.Errorf("normalizeTitle(%q) = %q, the reference %q", c.In, got, c.Title)
		}
	}
}

// TestNormalizeTitle: a model's answer becomes one line with no escape
// sequences or controls, at most 80 bytes.
func TestNormalizeTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Late durable session title", "Late durable session title"},
		{"  Title\nwith\nlines  ", "Title with lines"},
		{"\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "red link"},
		{"\x1b]0;unterminated osc swallows the rest", ""},
		{"bell\x07 null\x00 del\x7f c1\u0085", "bell null del c1"},
		{"\u009b31mcsi8 \u009d0;osc8\u0007done", "csi8 done"},
		{"\x1bMesc two-byte", "esc two-byte"},
		{strings.Repeat("word ", 40), strings.TrimSpace(strings.Repeat("word ", 16))},
		{strings.Repeat("é", 50), strings.Repeat("é", 40)},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	} {
		if got := normalizeTitle(c.in, titleMaxBytes); got != c.want {
			t.Errorf("normalizeTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTitleInput: prompts are framed as JSON.stringify writes them.
func TestTitleInput(t *testing.T) {
	got := titleInput([]titleMessage{{Seq: 4, Text: "say \"hi\" <b> & \u2028\n\x01"}})
	want := "Generate the session title from this JSON array of human messages:\n[{\"seq\":4,\"text\":\"say \\\"hi\\\" <b> & \u2028\\n\\u0001\"}]"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(titleSystem, standin.TitlePrompt) {
		t.Errorf("the stand-in recognizes title requests by %q; the system prompt is %q", standin.TitlePrompt, titleSystem)
	}
}

// TestCorpusTitles: every title the reference recorded is what reel's
// rules make: each fallback from its log's first prompt, and each title
// request's system prompt and framed input.
func TestCorpusTitles(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(corpustest.Dir(t), "*", "session*.jsonl"))
	fallbacks := 0
	for _, path := range logs {
		d, err := jsonl.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		prompts := map[int]string{}
		for i := range d.Events {
			e := &d.Events[i]
			switch e.Type {
			case sessionlog.TypeUserMessage:
				m, err := sessionlog.DecodeData[sessionlog.UserMessage](e)
				if err != nil || m.Source.Kind != sessionlog.SourceUser {
					continue
				}
				prompts[e.Seq] = promptText(m)
			case sessionlog.TypeSessionTitle:
				td, err := sessionlog.DecodeData[sessionlog.SessionTitleData](e)
				if err != nil {
					t.Fatal(err)
				}
				if td.Source.Kind != sessionlog.TitleFallback {
					continue
				}
				fallbacks++
				if got := fallbackTitle(prompts[td.MessageSeqs[0]]); got != td.Title {
					t.Errorf("%s seq %d: fallback %q, reel makes %q", path, e.Seq, td.Title, got)
				}
			case sessionlog.TypeTitleLLMRequest:
				rd, err := sessionlog.DecodeData[sessionlog.TitleLLMRequestData](e)
				if err != nil {
					t.Fatal(err)
				}
				seq := rd.MessageSeqs[0]
				if rd.System != titleSystem || rd.MaxTokens != titleMaxTokens || rd.TitleProvider != titleProviderID ||
					rd.Messages[0].Content[0].Text != titleInput([]titleMessage{{Seq: seq, Text: prompts[seq]}}) {
					t.Errorf("%s seq %d: the title request differs from reel's", path, e.Seq)
				}
			}
		}
	}
	if fallbacks < 10 {
		t.Errorf("only %d fallback titles in the corpus", fallbacks)
	}
}

// FuzzNormalizeTitle: whatever a model answers, an accepted title is one
// line of valid UTF-8 without control or invisible characters, within 80
// bytes, and cleaning it again changes nothing.
func FuzzNormalizeTitle(f *testing.F) {
	for _, s := range []string{"Late durable session title", "\x1b[31mred\x1b[0m", "\x1b]0;x\x07y", "a\u202eb", "line\nline", "\u009bm\u009d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := normalizeTitle(s, titleMaxBytes)
		if len(got) > titleMaxBytes || !utf8.ValidString(got) || normalizeTitle(got, titleMaxBytes) != got {
			t.Fatalf("normalizeTitle(%q) = %q", s, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || (r != ' ' && unicode.IsSpace(r)) || titleDirectional().MatchString(string(r)) {
				t.Fatalf("normalizeTitle(%q) = %q holds %U", s, got, r)
			}
		}
	})
}
