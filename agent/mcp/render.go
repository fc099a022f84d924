package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// minResultLimit is the smallest cap render applies, whatever it is asked:
// room for the cut notice and some text on either side of it.
const minResultLimit = 512

// maxFieldBytes cuts a server-given name, URI or MIME type shown in a note.
const maxFieldBytes = 256

// emptyResult is the text of a result with no content at all.
const emptyResult = "(the MCP tool returned no content)"

// render returns the text the model sees of an MCP tool result, at most
// limit bytes (at least minResultLimit), valid UTF-8.
//
// Each content block becomes one part, parts are joined by newlines:
//
//   - text: the text itself;
//   - image, audio: a note with the MIME type and the size of the data,
//     never the data;
//   - resource_link: a note with the link's name, title, URI, MIME type
//     and size, then its description;
//   - resource: a header line with the URI and MIME type, then the text
//     of a text resource, or for a binary one a note with the size;
//   - anything else: a note naming the block's type.
//
// Structured content is rendered as compact JSON: alone when there are no
// blocks, else after a "[structured content]" line unless a text block
// already holds the same JSON (servers are asked to include it as text).
// A longer rendering keeps its head and tail around a notice of how much
// was omitted.
func render(res *sdk.CallToolResult, limit int) string {
	var parts []string
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, binaryNote("image", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, binaryNote("audio", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, linkNote(c))
		case *sdk.EmbeddedResource:
			parts = append(parts, resourcePart(c.Resource))
			if c.Resource != nil && c.Resource.Text != "" {
				texts = append(texts, c.Resource.Text)
			}
		case nil:
			parts = append(parts, "[empty content block]")
		default:
			parts = append(parts, fmt.Sprintf("[unsupported content block: %s]", blockType(c)))
		}
	}
	if res.StructuredContent != nil {
		if sc, ok := compactJSON(res.StructuredContent); ok {
			switch {
			case len(parts) == 0:
				parts = append(parts, sc)
			case !containsJSON(texts, sc):
				parts = append(parts, "[structured content]\n"+sc)
			}
		}
	}
	text := strings.ToValidUTF8(strings.Join(parts, "\n"), "\uFFFD")
	if text == "" && len(res.Content) == 0 {
		text = emptyResult
	}
	return capText(text, limit)
}

// binaryNote describes binary data without showing it.
func binaryNote(kind, mime string, n int) string {
	if mime == "" {
		mime = "no MIME type"
	}
	return fmt.Sprintf("[%s: %s, %d bytes; binary data not shown]", kind, field(mime), n)
}

// linkNote describes a resource link.
func linkNote(l *sdk.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link: ")
	b.WriteString(field(l.Name))
	if l.Title != "" {
		fmt.Fprintf(&b, " (%s)", field(l.Title))
	}
	fmt.Fprintf(&b, " <%s>", field(l.URI))
	if l.MIMEType != "" {
		fmt.Fprintf(&b, ", %s", field(l.MIMEType))
	}
	if l.Size != nil {
		fmt.Fprintf(&b, ", %d bytes", *l.Size)
	}
	b.WriteString("]")
	if l.Description != "" {
		b.WriteString("\n")
		b.WriteString(l.Description)
	}
	return b.String()
}

// resourcePart renders an embedded resource.
func resourcePart(r *sdk.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	head := "[resource: <" + field(r.URI) + ">"
	if r.MIMEType != "" {
		head += ", " + field(r.MIMEType)
	}
	switch {
	case len(r.Blob) > 0:
		return fmt.Sprintf("%s, %d bytes; binary data not shown]", head, len(r.Blob))
	case r.Text == "":
		return head + ", empty]"
	}
	return head + "]\n" + r.Text
}

// blockType names a content block of a kind render does not show (the
// sampling-only tool_use and tool_result) by its wire type.
func blockType(c sdk.Content) string {
	b, err := c.MarshalJSON()
	if err == nil {
		var wire struct{ Type string }
		if json.Unmarshal(b, &wire) == nil && wire.Type != "" {
			return field(wire.Type)
		}
	}
	return fmt.Sprintf("%T", c)
}

// field makes a server-given string fit on one line of a note: control
// and format characters (bidirectional overrides among them) become
// spaces, and it is cut to maxFieldBytes.
func field(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxFieldBytes {
		s = headRunes(s, maxFieldBytes-len("…")) + "…"
	}
	return s
}

// compactJSON encodes v compactly, without HTML escaping.
func compactJSON(v any) (string, bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(buf.String(), "\n"), true
}

// containsJSON reports whether one of texts is the JSON value sc (compact).
func containsJSON(texts []string, sc string) bool {
	for _, t := range texts {
		if t == sc {
			return true
		}
		var v any
		if json.Unmarshal([]byte(t), &v) != nil {
			continue
		}
		if c, ok := compactJSON(v); ok && c == sc {
			return true
		}
	}
	return false
}

// capText returns s when it fits in limit bytes (at least minResultLimit),
// else its head and tail, cut on character boundaries, around a notice.
func capText(s string, limit int) string {
	limit = max(limit, minResultLimit)
	if len(s) <= limit {
		return s
	}
	// The notice is sized with the whole length as the omitted count, so
	// the real (smaller) count never makes it longer.
	avail := limit - len(cutNotice(len(s), len(s), limit))
	head := headRunes(s, (avail+1)/2)
	tail := tailRunes(s, avail/2)
	return head + cutNotice(len(s)-len(head)-len(tail), len(s), limit) + tail
}

// cutNotice says how much of a result was left out.
func cutNotice(omitted, total, limit int) string {
	return fmt.Sprintf("\n\n[… %d bytes omitted: the MCP result was %d bytes, more than the %d-byte limit; its head and tail are shown …]\n\n", omitted, total, limit)
}

// headRunes is the longest prefix of s of at most n bytes that does not
// cut a character.
func headRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailRunes is the longest suffix of s of at most n bytes that does not
// cut a character.
func tailRunes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
