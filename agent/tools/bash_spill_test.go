package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// spillHint is the retrieval advice every stored spill notice ends with.
const spillHint = "Use read with offset/limit, or grep this path to search within it."

var spillNotice = regexp.MustCompile(`(?s)^(?:(.*)\n\n)?\(Omitted (\d+) bytes\. (.*)\)$`)

// spilledParts splits a spilled bash result into its preview (head and
// tail run together), the omitted byte count and the rest of the notice.
func spilledParts(t *testing.T, text string) (preview string, omitted int, notice string) {
	t.Helper()
	m := spillNotice.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill notice at the end of %q", text[max(0, len(text)-300):])
	}
	n, _ := strconv.Atoi(m[2])
	return m[1], n, m[3]
}

// storedNotice is the notice of a result saved whole to path.
func storedNotice(path string) string {
	return "Full formatted result stored at: " + path + ". " + spillHint
}

// TestBashSpillPresentation holds bash to the reference agent's rule for a
// long result: the text the model would see (output, then the status line)
// is saved whole to a spill file once it exceeds the inline limit, and the
// model gets its head and tail, ceil and floor of half of what the limit
// leaves after the notice and a blank line, without a character cut in
// two, then "(Omitted N bytes. Full formatted result stored at: PATH. …)",
// all within the limit. The first case is the corpus scenario bash-spill
// (limit 800: the model saw 605 bytes of output, 1417 omitted).
func TestBashSpillPresentation(t *testing.T) {
	repeat := func(s string, n int) string { return strings.Repeat(s, n) }
	cases := []struct {
		name    string
		limit   int // 0: the default
		command string
		full    string // the whole formatted result
		inline  bool
		exact   bool // the text is exactly limit bytes
	}{
		{name: "corpus bash-spill", limit: 800,
			command: `printf 'SPILL_START-'; head -c 2000 /dev/zero | tr '\0' x; printf -- '-SPILL_END'`,
			full:    "SPILL_START-" + repeat("x", 2000) + "-SPILL_END", exact: true},
		{name: "status line in the tail", limit: 300,
			command: `head -c 1000 /dev/zero | tr '\0' a; exit 3`,
			full:    repeat("a", 1000) + "\n[exit code 3]"},
		{name: "status line pushes it over", limit: 100,
			command: `head -c 95 /dev/zero | tr '\0' y; exit 2`,
			full:    repeat("y", 95) + "\n[exit code 2]"},
		{name: "fits with its status line", limit: 100,
			command: `head -c 80 /dev/zero | tr '\0' y; exit 1`,
			full:    repeat("y", 80) + "\n[exit code 1]", inline: true},
		{name: "exactly the limit", limit: 100,
			command: `head -c 100 /dev/zero | tr '\0' z`,
			full:    repeat("z", 100), inline: true},
		{name: "one byte over", limit: 300,
			command: `head -c 301 /dev/zero | tr '\0' z`,
			full:    repeat("z", 301)},
		{name: "runes across both cuts", limit: 400,
			command: `for i in $(seq 1 300); do printf '€'; done`,
			full:    repeat("€", 300)},
		{name: "a limit smaller than the notice", limit: 10,
			command: `echo hello world`,
			full:    "hello world\n"},
		{name: "within the default limit", limit: 0,
			command: `head -c 50000 /dev/zero | tr '\0' d`,
			full:    repeat("d", 50000), inline: true},
		{name: "default limit", limit: 0,
			command: `seq 1 20000`,
			full: func() string {
				var b strings.Builder
				for i := 1; i <= 20000; i++ {
					fmt.Fprintf(&b, "%d\n", i)
				}
				return b.String()
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			env.MaxInlineBytes = tc.limit
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxInlineBytes
			}
			res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": tc.command}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.inline {
				if res.Text != tc.full || res.SpillPath != "" {
					t.Fatalf("result %q (spill %q), want %q inline", res.Text, res.SpillPath, tc.full)
				}
				return
			}
			if len(tc.full) <= limit {
				t.Fatalf("test output of %d bytes does not exceed the limit %d", len(tc.full), limit)
			}
			if res.SpillPath == "" || filepath.Dir(res.SpillPath) != env.SpillDir {
				t.Fatalf("spill path %q, want a file in %s", res.SpillPath, env.SpillDir)
			}
			if got := readFile(t, res.SpillPath); got != tc.full {
				t.Fatalf("spill file holds %d bytes ending %q, want the whole formatted result (%d bytes)", len(got), got[max(0, len(got)-40):], len(tc.full))
			}
			preview, omitted, notice := spilledParts(t, res.Text)
			if notice != storedNotice(res.SpillPath) {
				t.Errorf("notice %q, want %q", notice, storedNotice(res.SpillPath))
			}
			// The reference's budget: the limit less a notice priced at the
			// whole result's byte count and the blank line.
			reserve := len(fmt.Sprintf("(Omitted %d bytes. %s)", len(tc.full), storedNotice(res.SpillPath))) + 2
			budget := max(0, limit-reserve)
			headN, tailN := (budget+1)/2, budget/2
			head, tail := []byte(tc.full[:headN]), []byte(tc.full[len(tc.full)-tailN:])
			for len(head) > 0 && !utf8.Valid(head) {
				head = head[:len(head)-1]
			}
			for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
				tail = tail[1:]
			}
			if want := string(head) + string(tail); preview != want {
				t.Errorf("preview of %d bytes %q…%q, want head %d + tail %d bytes", len(preview), preview[:min(20, len(preview))], preview[max(0, len(preview)-20):], len(head), len(tail))
			}
			if omitted != len(tc.full)-len(head)-len(tail) {
				t.Errorf("omitted %d, want %d", omitted, len(tc.full)-len(head)-len(tail))
			}
			if !utf8.ValidString(res.Text) {
				t.Error("the text is not valid UTF-8")
			}
			switch {
			case budget == 0 && res.Text != fmt.Sprintf("(Omitted %d bytes. %s)", len(tc.full), storedNotice(res.SpillPath)):
				t.Errorf("a limit the notice does not fit in: text %q, want the notice alone", res.Text)
			case budget > 0 && len(res.Text) > limit:
				t.Errorf("text of %d bytes exceeds the limit %d", len(res.Text), limit)
			case tc.exact && len(res.Text) != limit:
				t.Errorf("text of %d bytes, want exactly the limit %d", len(res.Text), limit)
			}
		})
	}
}

// TestBashSpillCaps: a result beyond the limit is spilled, but a spill file
// keeps at most MaxSpillBytes and the session's budget; beyond that the
// output is counted and discarded, and the notice says what was kept.
func TestBashSpillCaps(t *testing.T) {
	const big = 50 << 20
	cases := []struct {
		name     string
		budget   int64 // 0: none
		sizes    []int // outputs of successive calls
		kept     []int // bytes in each call's spill file (0: none)
		notes    []string
		used     int64
		leftover int // files in the spill dir at the end
	}{
		{
			name: "per-call cap", sizes: []int{big}, kept: []int{MaxSpillBytes},
			notes:    []string{fmt.Sprintf("The full formatted result (%d bytes in total) could not be stored whole: the spill file cap of %d bytes was reached; only its first %d bytes are stored at: %%s. %s", big, MaxSpillBytes, MaxSpillBytes, spillHint)},
			leftover: 1,
		},
		{
			name: "session budget", budget: 150000, sizes: []int{80000, 80000, 80000}, kept: []int{80000, 70000, 0},
			notes: []string{
				"Full formatted result stored at: %s. " + spillHint,
				"The full formatted result (80000 bytes in total) could not be stored whole: the session's spill budget of 150000 bytes is used up; only its first 70000 bytes are stored at: %s. " + spillHint,
				"The full formatted result (80000 bytes in total) was not stored: the session's spill budget of 150000 bytes is used up.",
			},
			used: 150000, leftover: 2,
		},
		{
			name: "budget and cap", budget: MaxSpillBytes + 5, sizes: []int{MaxSpillBytes + 1000, 60000}, kept: []int{MaxSpillBytes, 5},
			notes: []string{
				fmt.Sprintf("The full formatted result (%d bytes in total) could not be stored whole: the spill file cap of %d bytes was reached; only its first %d bytes are stored at: %%s. %s", MaxSpillBytes+1000, MaxSpillBytes, MaxSpillBytes, spillHint),
				fmt.Sprintf("The full formatted result (60000 bytes in total) could not be stored whole: the session's spill budget of %d bytes is used up; only its first 5 bytes are stored at: %%s. %s", MaxSpillBytes+5, spillHint),
			},
			used: MaxSpillBytes + 5, leftover: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			if tc.budget > 0 {
				env.Spill = NewSpillBudget(tc.budget)
			}
			for i, n := range tc.sizes {
				res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": bigOutput(n)}))
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || len(res.Text) > DefaultMaxInlineBytes {
					t.Fatalf("call %d: result of %d bytes, error=%v", i, len(res.Text), res.IsError)
				}
				preview, omitted, notice := spilledParts(t, res.Text)
				want := tc.notes[i]
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, res.SpillPath)
				}
				if notice != want {
					t.Errorf("call %d: notice %q, want %q", i, notice, want)
				}
				full := wantBig(n)
				half := (len(full) - omitted + 1) / 2
				if !strings.HasPrefix(full, preview[:half]) || !strings.HasSuffix(full, preview[half:]) {
					t.Errorf("call %d: the preview is not the result's head and tail", i)
				}
				if tc.kept[i] == 0 {
					if res.SpillPath != "" {
						t.Errorf("call %d: spill path %q, want none", i, res.SpillPath)
					}
					continue
				}
				fi, err := os.Stat(res.SpillPath)
				if err != nil || fi.Size() != int64(tc.kept[i]) {
					t.Fatalf("call %d: spill file %v, %v; want %d bytes", i, fi, err, tc.kept[i])
				}
				if got := readFile(t, res.SpillPath); got != full[:tc.kept[i]] {
					t.Errorf("call %d: the spill file is not the output's head", i)
				}
			}
			if tc.budget > 0 && env.Spill.Used() != tc.used {
				t.Errorf("budget used %d, want %d", env.Spill.Used(), tc.used)
			}
			if entries, _ := os.ReadDir(env.SpillDir); len(entries) != tc.leftover {
				t.Errorf("spill dir holds %d files, want %d", len(entries), tc.leftover)
			}
		})
	}
}

// TestBashSpillDiskFull fills a tiny tmpfs: the write error stops spilling
// for that call with a clear notice, the call still returns its head and
// tail, and later calls work.
func TestBashSpillDiskFull(t *testing.T) {
	env := newEnv(t)
	if err := os.MkdirAll(env.SpillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", env.SpillDir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("!!! SKIPPED LOUDLY: cannot mount a tmpfs to fill (%v); the ENOSPC path is covered by TestSpillFileWriteError only", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(env.SpillDir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the test tmpfs %s: %v", env.SpillDir, err)
		}
	})
	const n = 4 << 20
	res, err := Bash{}.Run(context.Background(), env, mustJSON(t, map[string]any{"command": bigOutput(n) + "; exit 3"}))
	if err != nil {
		t.Fatal(err)
	}
	preview, _, notice := spilledParts(t, res.Text)
	if !strings.Contains(notice, "could not be stored whole: writing it failed: ") || !strings.Contains(notice, "no space left on device") || !strings.Contains(notice, "stored at: "+res.SpillPath) {
		t.Errorf("notice %q; want it to say the spill write failed with ENOSPC", notice)
	}
	if !strings.HasSuffix(preview, "\n[exit code 3]") || res.IsError {
		t.Errorf("the preview does not end with the status: …%q", preview[max(0, len(preview)-40):])
	}
	if fi, err := os.Stat(res.SpillPath); err != nil || fi.Size() >= n {
		t.Errorf("spill file %v, %v", fi, err)
	}
	if err := os.Remove(res.SpillPath); err != nil {
		t.Fatal(err)
	}
	if res, err := (Bash{}).Run(context.Background(), env, mustJSON(t, map[string]any{"command": "echo later"})); err != nil || res.Text != "later\n" {
		t.Errorf("a later call: %+v %v", res, err)
	}
}

// TestCollectorBounded feeds the collector far more than its limit in
// small and large writes: it never holds more than a few limits of output.
func TestCollectorBounded(t *testing.T) {
	env := newEnv(t)
	c := &collector{env: env, limit: 1000}
	chunk := []byte(strings.Repeat("q", 333))
	for range 10000 {
		_, _ = c.Write(chunk)
		if held := len(c.buf) + len(c.head) + cap(c.tail); held > 6*c.limit {
			t.Fatalf("the collector holds %d bytes for a limit of %d", held, c.limit)
		}
	}
	text, path := c.finish("")
	if len(text) > 1000 || path == "" {
		t.Fatalf("text of %d bytes, spill %q", len(text), path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 3330000 {
		t.Fatalf("spill file %v %v", fi, err)
	}
}

// TestTrimPartialRune: only an incomplete sequence at the end is dropped.
func TestTrimPartialRune(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"a€", "a€"},
		{"a\xe2\x82", "a"},
		{"a\xe2", "a"},
		{"a\xf0\x9f\x98", "a"},
		{"a\xf0\x9f\x98\x80", "a\xf0\x9f\x98\x80"},
		{"a\x80", "a\x80"}, // a stray continuation byte stays (shown as U+FFFD)
		{"a\xff", "a\xff"}, // not a lead byte
		{"é\xc3", "é"},     // two-byte lead without its continuation
		{"\x80\x80\x80\x80", "\x80\x80\x80\x80"},
	} {
		if got := string(trimPartialRune([]byte(tc.in))); got != tc.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
