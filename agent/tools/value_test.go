package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadValue(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		offset     int
		want       string
	}{
		{"whole file", "     1\tone\n     2\ttwo", 1, `{"path":"/p","offset":1,"lines":[{"number":1,"text":"one"},{"number":2,"text":"two"}],"totalLines":2}`},
		{"window", "     3\tc\n\n(Showing lines 3-3 of 9. Use offset=4 to read on.)", 3, `{"path":"/p","offset":3,"lines":[{"number":3,"text":"c"}],"totalLines":9}`},
		{"window of at least", "     1\ta\n\n(Showing lines 1-1 of at least 500. Use offset=2 to read on.)", 1, `{"path":"/p","offset":1,"lines":[{"number":1,"text":"a"}],"totalLines":500}`},
		{"empty", "(/p is empty)", 0, `{"path":"/p","offset":1,"lines":[],"totalLines":0}`},
		{"past the end", "(offset 9 is past the end of /p, which has 4 lines)", 9, `{"path":"/p","offset":9,"lines":[],"totalLines":4}`},
		{"tab in a line", "     1\ta\tb", 1, `{"path":"/p","offset":1,"lines":[{"number":1,"text":"a\tb"}],"totalLines":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(readValue("/p", tc.offset, tc.text)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestMarkDenied(t *testing.T) {
	v := MarkDenied(json.RawMessage(`{"kind":"foreground","exitCode":1,"signal":null,"timedOut":false,"aborted":false,"timeoutMs":1,"stdout":{"text":"","truncated":false},"stderr":{"text":"","truncated":false}}`), "read-only")
	if !strings.HasSuffix(string(v), `"sandbox":{"mode":"read-only","denied":true}}`) {
		t.Errorf("got %s", v)
	}
	if bg := `{"kind":"background","jobId":"bash-1"}`; string(MarkDenied(json.RawMessage(bg), "read-only")) != bg {
		t.Error("a background value was marked")
	}
}

// FuzzReadValue: the read value parser takes any text read may show and
// yields JSON whose lines are rows of that text.
func FuzzReadValue(f *testing.F) {
	f.Add(1, "     1\tone\n     2\ttwo")
	f.Add(3, "     3\tc\n\n(Showing lines 3-3 of 9. Use offset=4 to read on.)")
	f.Add(9, "(offset 9 is past the end of /p, which has 4 lines)")
	f.Fuzz(func(t *testing.T, offset int, text string) {
		if !utf8.ValidString(text) {
			return // read shows valid UTF-8 only (validUTF8)
		}
		raw := readValue("/p", offset, text)
		var v struct {
			Lines []struct {
				Number int    `json:"number"`
				Text   string `json:"text"`
			} `json:"lines"`
			TotalLines int `json:"totalLines"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("readValue(%q) = %s: %v", text, raw, err)
		}
		if len(v.Lines) > strings.Count(text, "\n")+1 {
			t.Fatalf("readValue(%q) has %d lines", text, len(v.Lines))
		}
		for _, l := range v.Lines {
			if !strings.Contains(text, "\t"+l.Text) {
				t.Fatalf("readValue(%q) has a line %q the text does not show", text, l.Text)
			}
		}
	})
}
