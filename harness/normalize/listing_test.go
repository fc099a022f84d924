package normalize

import (
	"encoding/base64"
	"testing"
)

// cursor encodes a session/list cursor as reel's adapter does.
func cursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(listCursorPrefix + after))
}

func page(next string, ids ...string) string {
	s := `{"jsonrpc":"2.0","id":5,"result":{`
	if next != "" {
		s += `"nextCursor":"` + next + `",`
	}
	s += `"sessions":[`
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += `{"sessionId":"` + id + `"}`
	}
	return s + `]}}`
}

// TestListing checks the paged-listing rule: the same shape whatever the
// random ids, and a repeat, a page out of id order, or a cursor that does
// not continue after its page's last session shows.
func TestListing(t *testing.T) {
	// In id order: uuidC < uuidA < uuidD < uuidB.
	header := func(id string) string { return `{"type":"session","id":"` + id + `"}` }
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "two pages in id order",
			in:   []string{page(cursor(uuidA), uuidC, uuidA), page("", uuidB)},
			want: []string{
				page("{{cursor:after listed:2}}", "{{listed:1}}", "{{listed:2}}"),
				page("", "{{listed:3}}"),
			},
		},
		{
			name: "other ids, same pages",
			in:   []string{page(cursor(uuidD), uuidC, uuidD), page("", uuidB)},
			want: []string{
				page("{{cursor:after listed:2}}", "{{listed:1}}", "{{listed:2}}"),
				page("", "{{listed:3}}"),
			},
		},
		{
			name: "a page out of id order",
			in:   []string{page(cursor(uuidC), uuidA, uuidC), page("", uuidB)},
			want: []string{
				page("{{cursor:after listed:2}}", "{{listed:1}}", "{{listed:2 out of order}}"),
				page("", "{{listed:3}}"),
			},
		},
		{
			name: "a session repeated on the next page",
			in:   []string{page(cursor(uuidA), uuidC, uuidA), page("", uuidA, uuidB)},
			want: []string{
				page("{{cursor:after listed:2}}", "{{listed:1}}", "{{listed:2}}"),
				page("", "{{listed:2 again}}", "{{listed:3}}"),
			},
		},
		{
			name: "a cursor after the page's first session",
			in:   []string{page(cursor(uuidC), uuidC, uuidA), page("", uuidB)},
			want: []string{
				page("{{cursor:after listed:1}}", "{{listed:1}}", "{{listed:2}}"),
				page("", "{{listed:3}}"),
			},
		},
		{
			name: "a cursor after a session not listed, and one reel did not make",
			in:   []string{page(cursor(uuidB), uuidC), page("bm90LXJlZWw", uuidA), page("", uuidB)},
			want: []string{
				page("{{cursor:after {{sessionId3}}}}", "{{listed:1}}"),
				page("bm90LXJlZWw", "{{listed:2}}"),
				page("", "{{listed:3}}"),
			},
		},
		{
			name: "an unpaged answer keeps the session placeholders",
			in:   []string{page("", uuidB, uuidA)},
			want: []string{page("", "{{sessionId3}}", "{{sessionId}}")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := New(Options{})
			for _, id := range []string{uuidA, uuidC, uuidB, uuidD} {
				n.Line([]byte(header(id)))
			}
			for i, line := range tt.in {
				if got := string(n.Line([]byte(line))); got != tt.want[i] {
					t.Errorf("line %d:\n got: %s\nwant: %s", i+1, got, tt.want[i])
				}
			}
		})
	}
}

func TestListCursor(t *testing.T) {
	tests := []struct {
		in, after string
		ok        bool
	}{
		{cursor(uuidA), uuidA, true},
		{cursor(""), "", false},
		{base64.RawURLEncoding.EncodeToString([]byte("other:" + uuidA)), "", false},
		{base64.StdEncoding.EncodeToString([]byte(listCursorPrefix + uuidA)), "", false},
		{"!!", "", false},
	}
	for _, tt := range tests {
		after, ok := ListCursor(tt.in)
		if after != tt.after || ok != tt.ok {
			t.Errorf("ListCursor(%q) = %q, %v; want %q, %v", tt.in, after, ok, tt.after, tt.ok)
		}
	}
}
