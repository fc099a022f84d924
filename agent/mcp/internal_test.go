package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestHeadersGoToTheConfiguredHostOnly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{}
	record := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.Header.Values("X-Token")
			mu.Unlock()
		})
	}
	other := httptest.NewServer(record("other"))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
			return
		}
		record("home").ServeHTTP(w, r)
	}))
	defer home.Close()
	c := httpClient(&Options{}, &ServerConfig{URL: home.URL, Headers: []Header{{"X-Token", "a"}, {"X-Token", "b"}}})
	for _, path := range []string{"/", "/go"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", home.URL+path, nil)
		req.Header.Set("X-Token", "from the SDK")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := strings.Join(seen["home"], ","); got != "a,b" {
		t.Errorf("home saw %q", got)
	}
	// The redirect target sees the request's own header, not the
	// configured ones.
	if got := strings.Join(seen["other"], ","); got != "from the SDK" {
		t.Errorf("the redirect target saw %q", got)
	}
}

func TestStderrLogLines(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	h := &funcHandler{f: func(r slog.Record) {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				mu.Lock()
				lines = append(lines, a.Value.String())
				mu.Unlock()
			}
			return true
		})
	}}
	s := stderrLog{log: slog.New(h)}
	s.write([]byte("one\r\ntw"))
	s.write([]byte("o\n\nthree"))
	s.write([]byte(strings.Repeat("x", MaxStderrLineBytes+10) + "\n"))
	s.write([]byte("\xff\xfe bad\n"))
	s.flush()
	if len(lines) < 6 || lines[0] != "one" || lines[1] != "two" || lines[2] != "" {
		t.Fatalf("lines = %.200q", lines)
	}
	// "three" plus the long line's head fill one record, its rest another.
	if !strings.HasPrefix(lines[3], "three") || len(lines[3]) != MaxStderrLineBytes || lines[4] != strings.Repeat("x", 15) || lines[5] != "\uFFFD bad" {
		t.Errorf("lines[3:] = %.100q", lines[3:])
	}
	if s.tailText() == "" || s.droppedBytes() != 0 {
		t.Errorf("tail %q dropped %d", s.tailText(), s.droppedBytes())
	}
}

type funcHandler struct{ f func(slog.Record) }

func (h *funcHandler) Enabled(context.Context, slog.Level) bool      { return true }
func (h *funcHandler) Handle(_ context.Context, r slog.Record) error { h.f(r); return nil }
func (h *funcHandler) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h *funcHandler) WithGroup(string) slog.Handler                 { return h }

func TestInputSchema(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      any
		want    string
		wantErr string
	}{
		{"absent", nil, `{"type":"object"}`, ""},
		{"sorted and unescaped", map[string]any{"type": "object", "description": "a <b> & c", "properties": map[string]any{}}, `{"description":"a <b> & c","properties":{},"type":"object"}`, ""},
		{"not an object", "string schema", "", "not a JSON object"},
		{"array", []any{1}, "", "not a JSON object"},
		{"too big", map[string]any{"type": "object", "description": strings.Repeat("d", MaxSchemaBytes)}, "", "more than the 65536-byte limit"},
		{"unencodable", map[string]any{"f": func() {}}, "", "cannot be encoded"},
	} {
		got, err := inputSchema(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestCandidatesSkip(t *testing.T) {
	srv := &server{cfg: ServerConfig{Name: "s"}, log: slog.New(slog.DiscardHandler)}
	obj := map[string]any{"type": "object"}
	list := []*sdk.Tool{
		nil,
		{Name: "", InputSchema: obj},
		{Name: "b", InputSchema: obj},
		{Name: "a", InputSchema: obj, Description: strings.Repeat("é", MaxDescriptionBytes)},
		{Name: "b", InputSchema: obj},
		{Name: "c", InputSchema: "nope"},
	}
	for i := range MaxTools {
		list = append(list, &sdk.Tool{Name: fmt.Sprintf("t%04d", i), InputSchema: obj})
	}
	s := &Set{byName: map[string]*Tool{}}
	s.assignNames([][]candidate{s.candidates(srv, list)})
	if len(s.tools) != MaxTools {
		t.Fatalf("%d tools, want %d", len(s.tools), MaxTools)
	}
	if s.tools[0].Name() != "mcp__s__a" || s.tools[1].Name() != "mcp__s__b" || s.tools[2].Name() != "mcp__s__t0000" {
		t.Errorf("first tools %q %q %q", s.tools[0].Name(), s.tools[1].Name(), s.tools[2].Name())
	}
	if d := s.tools[0].Schema().Description; len(d) > MaxDescriptionBytes || !strings.HasSuffix(d, "…") || !utf8.ValidString(d) {
		t.Errorf("description of %d bytes", len(d))
	}
	want := []Skipped{
		{"s", "", "the tool has no name"},
		{"s", "b", "the server lists this name more than once"},
		{"s", "c", "its input schema is not a JSON object"},
		{"s", "t0510", "the server offers more than 512 tools"},
		{"s", "t0511", "the server offers more than 512 tools"},
	}
	if !slices.Equal(s.skipped, want) {
		t.Errorf("skipped = %+v\nwant %+v", s.skipped, want)
	}
	if d := s.tools[1].Schema().Description; d != `The tool "b" of the MCP server "s".` {
		t.Errorf("default description %q", d)
	}
}
