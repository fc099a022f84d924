package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeLiveSession runs the README's "live session with no key" block
// as a user would paste it — with the reel binary on PATH, no key in the
// environment — and checks it printed a two-turn session whose bash call
// ran: the README's promise of a live session needing nothing but a build.
func TestReadmeLiveSession(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	begin := strings.Index(s, "<!-- live-session:begin")
	end := strings.Index(s, "<!-- live-session:end -->")
	if begin < 0 || end < begin {
		t.Fatal("README.md has no live-session block between its markers")
	}
	block := s[begin:end]
	open := strings.Index(block, "```sh\n")
	closing := strings.LastIndex(block, "```")
	if open < 0 || closing <= open {
		t.Fatal("the README's live-session block has no ```sh fence")
	}
	script := block[open+len("```sh\n") : closing]

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // detects a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + filepath.Dir(reelBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(), "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README block failed: %v\n%s", err, out)
	}
	// The columns are as wide as the longest event type; compare with
	// runs of spaces as one.
	oneSpace := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{
		"tool/call call_1 bash",
		"tool/result ← ok: hello from bash",
		"assistant/message The command printed hello.",
		"turn 1: completed",
		"session/title {\"title\":\"Stand-in session title\"",
		"assistant/message You are welcome.",
		"turn 2: completed",
	} {
		if !strings.Contains(oneSpace, want) {
			t.Errorf("the README block's output lacks %q:\n%s", want, out)
		}
	}
}

// readmeBlock returns the ```sh block between the README's markers
// "<!-- NAME:begin" and "<!-- NAME:end -->".
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	begin := strings.Index(s, "<!-- "+name+":begin")
	end := strings.Index(s, "<!-- "+name+":end -->")
	if begin < 0 || end < begin {
		t.Fatalf("README.md has no %s block between its markers", name)
	}
	block := s[begin:end]
	open := strings.Index(block, "```sh\n")
	closing := strings.LastIndex(block, "```")
	if open < 0 || closing <= open {
		t.Fatalf("the README's %s block has no ```sh fence", name)
	}
	return block[open+len("```sh\n") : closing]
}

// TestReadmeReplayExample runs the README's `reel acp --replay` example from
// the module root (its `go run ./cmd/reel` replaced by the built binary) and
// checks the replayed answer arrived: the example must keep working as
// replay grows stricter (it matches every request reel sends).
func TestReadmeReplayExample(t *testing.T) {
	script := readmeBlock(t, "replay-example")
	if !strings.Contains(script, "go run ./cmd/reel") {
		t.Fatal("the README's replay example no longer runs `go run ./cmd/reel`; update this test")
	}
	script = strings.ReplaceAll(script, "go run ./cmd/reel", reelBin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // detects a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(), "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README block failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"content":{"text":"ONE","type":"text"}`, `"id":3,"result":{"stopReason":"end_turn"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README replay example's output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "request mismatch") || strings.Contains(string(out), "not compared") {
		t.Errorf("the README replay example's requests were not all matched:\n%s", out)
	}
}
