package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/openai/openai-go/v3"
)

// encodeTools is the wire encoding of tools.
func encodeTools(t *testing.T, tools []sdk.ChatCompletionToolUnionParam) []byte {
	t.Helper()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestToolsCacheMatchesChatTools: the cache gives exactly what chatTools
// maps, for every tool list the suite pins (compacted, as the log holds
// them, and indented), asked in turns so that each miss replaces the entry
// and each repeat hits it; a list that fails to map fails every time and
// leaves the entry alone.
func TestToolsCacheMatchesChatTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "snapshots", "tools", "*.json"))
	if err != nil || len(files) < 2 {
		t.Fatalf("pinned tool lists: %v, %v", files, err)
	}
	var lists []json.RawMessage
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		lists = append(lists, raw, compact.Bytes())
	}
	c := &toolsCache{}
	for round := range 2 {
		for i, raw := range lists {
			want, err := chatTools(raw)
			if err != nil {
				t.Fatal(err)
			}
			for try := range 2 {
				got, err := c.get(raw)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := encodeTools(t, got), encodeTools(t, want); !bytes.Equal(g, w) {
					t.Fatalf("round %d list %d try %d: cached tools differ:\n%s\nwant\n%s", round, i, try, g, w)
				}
			}
		}
	}
	bad := json.RawMessage(`[{"name":"x","parameters":{},"extra":1}]`)
	for range 2 {
		if _, err := c.get(bad); err == nil {
			t.Fatal("a tool with an unknown member mapped")
		}
	}
	got, err := c.get(lists[len(lists)-1])
	if err != nil || !bytes.Equal(encodeTools(t, got), encodeTools(t, must(chatTools(lists[len(lists)-1])))) {
		t.Fatalf("after a failed list the cache gives %v, %v", got, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestWarmToolsPrimesTheCache: after WarmTools the provider's cache holds
// the schemas' mapping, which a request with the same bytes takes.
func TestWarmToolsPrimesTheCache(t *testing.T) {
	p, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p.WarmTools(json.RawMessage(warmTools))
	c := p.cfg.tools
	if !bytes.Equal(c.raw, []byte(warmTools)) || len(c.tools) != 1 {
		t.Fatalf("after WarmTools the cache holds %q (%d tools)", c.raw, len(c.tools))
	}
}
