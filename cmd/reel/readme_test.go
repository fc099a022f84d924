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
