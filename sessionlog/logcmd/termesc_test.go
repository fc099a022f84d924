package logcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHumanOutputEscaped: every human-facing command prints a log whose
// text carries terminal escapes with them escaped, whoever calls Run (the
// harness calls it with its own writer); request, the JSON output, has
// nothing raw either.
func TestHumanOutputEscaped(t *testing.T) {
	const attack = "A\x1b]52;c;eA==\x07\x1b[2J\r\x00\x7f\u009b\u202e\u2066Z"
	data, err := os.ReadFile(textTurnLog)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(attack)
	data = bytes.ReplaceAll(data, []byte("Hello fr"), append(quoted[1:len(quoted)-1:len(quoted)-1], "Hello fr"...))
	dir := t.TempDir()
	log := writeTo(t, dir, "s.jsonl", data)
	for _, args := range [][]string{
		{"show", log},
		{"surface", log},
		{"list", dir},
		{"verify", log},
		{"request", log, "--turn", "1", "--step", "1"},
		{"show", log, "--session", attack},
	} {
		stdout, stderr, _ := run(args...)
		for _, out := range []string{stdout, stderr} {
			if !utf8.ValidString(out) {
				t.Errorf("reel log %s: invalid UTF-8 in %q", args[0], out)
			}
			for _, r := range out {
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r == 0x202e || r == 0x2066 {
					t.Errorf("reel log %s prints %U raw: %q", args[0], r, out)
					break
				}
			}
		}
	}
	stdout, _, err := run("show", filepath.Join(dir, "s.jsonl"))
	if err != nil || !strings.Contains(stdout, `A\x{1b}]52;c;eA==\x{07}\x{1b}[2J\x{0d}\x{00}\x{7f}\u{9b}\u{202e}\u{2066}Z`) {
		t.Errorf("reel log show does not show the escaped text (%v):\n%s", err, stdout)
	}
	// encode is the canonical JSONL, for files: the text as it was.
	stdout, _, err = run("encode", log)
	if err != nil || !strings.Contains(stdout, string(quoted[1:len(quoted)-1])) {
		t.Errorf("reel log encode changed the text (%v)", err)
	}
}
