package mcp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRender(t *testing.T) {
	size := int64(7)
	for _, tt := range []struct {
		name string
		res  *sdk.CallToolResult
		want string
	}{
		{"empty", &sdk.CallToolResult{}, emptyResult},
		{"empty text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{}}}, ""},
		{"texts", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "a\nb"},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"b": 1, "a": "<&>"}}, `{"a":"<&>","b":1}`},
		{"structured duplicated as text", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "{\n  \"a\": 1\n}"}},
			StructuredContent: map[string]any{"a": 1},
		}, "{\n  \"a\": 1\n}"},
		{"structured next to other text", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "done"}},
			StructuredContent: []any{1, 2},
		}, "done\n[structured content]\n[1,2]"},
		{"image without mime", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte("abc")}}}, "[image: no MIME type, 3 bytes; binary data not shown]"},
		{"hostile fields", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "x://\ny", Name: "n\tm", MIMEType: strings.Repeat("m", 300), Size: &size}}},
			"[resource link: n m <x:// y>, " + strings.Repeat("m", maxFieldBytes-3) + "…, 7 bytes]"},
		{"empty resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{}, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "u"}}}}, "[resource: empty]\n[resource: <u>, empty]"},
		{"tool use block", decode(t, `{"content":[{"type":"tool_use","id":"1","name":"x","input":{}}]}`), "[unsupported content block: tool_use]"},
		{"tool result block", decode(t, `{"content":[{"type":"tool_result","toolUseId":"1","content":[]}]}`), "[unsupported content block: tool_result]"},
		{"nil block", &sdk.CallToolResult{Content: []sdk.Content{nil}}, "[empty content block]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(tt.res, 1000); got != tt.want {
				t.Errorf("render = %q, want %q", got, tt.want)
			}
		})
	}
}

// decode decodes a tool result as the SDK's client does.
func decode(t *testing.T, raw string) *sdk.CallToolResult {
	t.Helper()
	var res sdk.CallToolResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func TestCapText(t *testing.T) {
	s := strings.Repeat("é", 5000) // 10000 bytes, two per character
	for _, limit := range []int{0, 512, 513, 1000, 9999} {
		got := capText(s, limit)
		want := max(limit, minResultLimit)
		if len(got) > want || len(got) < want-8 || !utf8.ValidString(got) {
			t.Errorf("limit %d: %d bytes (valid %v)", limit, len(got), utf8.ValidString(got))
		}
		head, tail, ok := strings.Cut(got, "\n\n[… ")
		if !ok || !strings.HasPrefix(s, head) || !strings.Contains(tail, "bytes omitted: the MCP result was 10000 bytes") {
			t.Errorf("limit %d: %q", limit, got)
		}
	}
	if got := capText("short", 10); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

// FuzzRender renders arbitrary tool results: the text is valid UTF-8,
// within the limit, and never holds the base64 of binary data unless the
// result's own text does.
func FuzzRender(f *testing.F) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake image data here"))
	f.Add(`{"content":[{"type":"text","text":"hello"}]}`, uint16(0))
	f.Add(`{"content":[{"type":"image","mimeType":"image/png","data":"`+png+`"}],"isError":true}`, uint16(100))
	f.Add(`{"content":[{"type":"audio","mimeType":"audio/wav","data":"`+png+`"},{"type":"resource","resource":{"uri":"a://b","blob":"`+png+`"}}]}`, uint16(3))
	f.Add(`{"content":[{"type":"resource_link","uri":"file:///x","name":"x","size":12}],"structuredContent":{"a":[1,2,{"b":null}]}}`, uint16(7))
	f.Add(`{"content":[{"type":"text","text":"`+strings.Repeat("ab\\u00e9", 2000)+`"}]}`, uint16(1))
	f.Add(`{"content":[],"structuredContent":"\u0000"}`, uint16(0))
	f.Fuzz(func(t *testing.T, raw string, extra uint16) {
		var res sdk.CallToolResult
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			return
		}
		limit := minResultLimit + int(extra)
		got := render(&res, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if len(got) > limit {
			t.Fatalf("%d bytes, limit %d", len(got), limit)
		}
		var texts strings.Builder
		for _, c := range res.Content {
			switch c := c.(type) {
			case *sdk.TextContent:
				texts.WriteString(c.Text)
			case *sdk.ResourceLink:
				texts.WriteString(c.Name + c.Title + c.Description + c.URI + c.MIMEType)
			case *sdk.EmbeddedResource:
				if c.Resource != nil {
					texts.WriteString(c.Resource.Text + c.Resource.URI + c.Resource.MIMEType)
				}
			case *sdk.ImageContent:
				texts.WriteString(c.MIMEType)
			case *sdk.AudioContent:
				texts.WriteString(c.MIMEType)
			}
		}
		sc, _ := json.Marshal(res.StructuredContent)
		texts.Write(sc)
		for _, c := range res.Content {
			var data []byte
			switch c := c.(type) {
			case *sdk.ImageContent:
				data = c.Data
			case *sdk.AudioContent:
				data = c.Data
			case *sdk.EmbeddedResource:
				if c.Resource != nil {
					data = c.Resource.Blob
				}
			}
			if len(data) < 12 {
				continue
			}
			b64 := base64.StdEncoding.EncodeToString(data)[:16]
			if strings.Contains(got, b64) && !strings.Contains(texts.String(), b64) {
				t.Fatalf("binary data reached the text: %q", got)
			}
		}
	})
}
