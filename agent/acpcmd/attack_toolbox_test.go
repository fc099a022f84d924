package acpcmd_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestAttackWebFetchCarriesNothing: through the real binary, a model that
// fetches a server it controls gets no credential of the user's: no
// cookie, no authorization, not the model key in any header or in the
// URL; and it cannot reach the cloud metadata service.
func TestAttackWebFetchCarriesNothing(t *testing.T) {
	t.Parallel()
	const key = "sk-reel-webfetch-0123456789abcdef01"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for name, vs := range r.Header {
			seen = append(seen, name+": "+strings.Join(vs, ","))
		}
		seen = append(seen, "URL: "+r.URL.String())
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "planted"})
		if r.URL.Path == "/first" {
			http.Redirect(w, r, "/second", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("PAGE-SERVED"))
	}))
	defer srv.Close()
	dir, ws, state := workspace(t)
	script := &standin.Script{Responses: []standin.Response{
		{ToolCalls: []standin.ToolCall{
			{ID: "f1", Name: "web_fetch", Arguments: jsonArgs(t, map[string]any{"url": srv.URL + "/first"})},
			{ID: "f2", Name: "web_fetch", Arguments: jsonArgs(t, map[string]any{"url": srv.URL + "/again"})},
			{ID: "meta", Name: "web_fetch", Arguments: jsonArgs(t, map[string]any{"url": "http://169.254.169.254/latest/meta-data/iam/security-credentials/"})},
		}},
		{Text: "done"},
	}}
	url, model := standinURL(t, script)
	env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key, "OPENAI_API_KEY="+key, "REEL_API_KEY="+key)
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "fetch them")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	results := toolResults(frames)
	for _, id := range []string{"f1", "f2"} {
		if !strings.Contains(results[id], "PAGE-SERVED") {
			t.Fatalf("fetch %s did not reach the server: %q", id, results[id])
		}
	}
	if r := results["meta"]; !strings.Contains(r, "web_fetch does not connect to") {
		t.Errorf("the metadata service was not refused: %q", r)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		lower := strings.ToLower(h)
		for _, bad := range []string{"cookie", "authorization", key, "planted"} {
			if strings.Contains(lower, strings.ToLower(bad)) {
				t.Errorf("a fetch carried %q: %s", bad, h)
			}
		}
	}
	for i, body := range model.Requests() {
		if strings.Contains(string(body), key) {
			t.Errorf("model request %d carries the key", i+1)
		}
	}
}

// TestAttackSkillFilesLeakNothing: a SKILL.md that is a link to reel's
// environment, to /dev/zero or a FIFO neither leaks the key nor hangs the
// agent; the model's attempt to load it fails, and a real skill beside
// them still loads.
func TestAttackSkillFilesLeakNothing(t *testing.T) {
	t.Parallel()
	const key = "sk-reel-skill-0123456789abcdef0123"
	dir := t.TempDir()
	ws, state := filepath.Join(dir, "ws"), filepath.Join(dir, "state")
	skillsDir := filepath.Join(ws, ".reel", "skills")
	for _, name := range []string{"environ", "zero", "fifo", "good"} {
		if err := os.MkdirAll(filepath.Join(skillsDir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/proc/self/environ", filepath.Join(skillsDir, "environ", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(skillsDir, "zero", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(skillsDir, "fifo", "SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := "---\nname: good\ndescription: A harmless skill.\n---\n\nSay GOOD-SKILL-LOADED.\n"
	if err := os.WriteFile(filepath.Join(skillsDir, "good", "SKILL.md"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls []standin.ToolCall
	for _, name := range []string{"environ", "zero", "fifo", "good"} {
		calls = append(calls, standin.ToolCall{ID: "s-" + name, Name: "skill", Arguments: jsonArgs(t, map[string]any{"name": name})})
	}
	script := &standin.Script{Responses: []standin.Response{{ToolCalls: calls}, {Text: "done"}}}
	url, model := standinURL(t, script)
	env := append(baseEnv(t), "DEEPSEEK_API_KEY="+key)
	p := startProc(t, dir, env, "acp", "--state-dir", state, "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "/environ /zero /fifo load them all")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	results := toolResults(frames)
	if !strings.Contains(results["s-good"], "GOOD-SKILL-LOADED") {
		t.Errorf("the real skill did not load: %q", results["s-good"])
	}
	for _, name := range []string{"environ", "zero", "fifo"} {
		if r := results["s-"+name]; !strings.Contains(r, "unknown or no longer available") {
			t.Errorf("skill %s: %q", name, r)
		}
	}
	out := strings.Join(p.stdoutLines(), "\n")
	if strings.Contains(out, key) || strings.Contains(p.stderr.String(), key) {
		t.Errorf("the key reached the client or stderr")
	}
	for i, body := range model.Requests() {
		if strings.Contains(string(body), key) {
			t.Errorf("model request %d carries the key", i+1)
		}
	}
	if _, leaked := filesHolding(t, state, func(b []byte) bool { return strings.Contains(string(b), key) }); len(leaked) > 0 {
		t.Errorf("files hold the key: %v", leaked)
	}
}
