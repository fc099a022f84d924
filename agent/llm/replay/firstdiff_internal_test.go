package replay

import (
	"strings"
	"testing"
)

// TestFirstDiffSkipsMatchedPlaceholders: the reported offset is where the
// texts really part, past every placeholder that matched, not the first
// placeholder of the recording.
func TestFirstDiffSkipsMatchedPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		at              string // the diff names this byte offset
		sentWindow      string // and this text of the sent side
	}{
		{"no placeholder", "hello world", "hello there", "at byte 6 ", `"hello there"`},
		{"difference after a placeholder", "Session {{sessionId}} — title\nAfter: seq 22", "Session f58972ff-07b7-4330 — title\nAfter: seq 21",
			"at byte 44 ", `seq 21`},
		{"difference before the first placeholder", "Sesion {{sessionId}} x", "Session abc x", "at byte 3 ", `"Session abc x"`},
		{"two placeholders, second literal differs", "in {{cwd}}/a at {{time}} ok", "in /w/x/a at 12:00 no", "at byte 25 ", `no`},
		{"sent text longer", "id {{id:1}} end", "id 42 end and more", "at byte 15 ", `and more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := firstDiff(tc.want, tc.got)
			if !strings.Contains(d, tc.at) || !strings.Contains(d, tc.sentWindow) {
				t.Errorf("firstDiff(%q, %q) = %s\nwant it to say %q and show %q of the sent text", tc.want, tc.got, d, tc.at, tc.sentWindow)
			}
		})
	}
}
