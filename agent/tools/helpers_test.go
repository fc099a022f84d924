package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// newEnv returns an Env whose cwd and spill directory are fresh temporary
// directories with symbolic links resolved (so paths compare equal).
func newEnv(t *testing.T) *Env {
	t.Helper()
	return &Env{Cwd: realTempDir(t), SpillDir: filepath.Join(realTempDir(t), "spill")}
}

// realTempDir is t.TempDir with symbolic links resolved.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writeFile creates dir/name (and parents) with content.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns the content of p, failing the test if it cannot.
func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memFS is an in-memory FileSystem that records its calls.
type memFS struct {
	mu     sync.Mutex
	files  map[string]string
	reads  []string
	writes []string
}

func newMemFS(files map[string]string) *memFS {
	if files == nil {
		files = map[string]string{}
	}
	return &memFS{files: files}
}

func (m *memFS) ReadTextFile(_ context.Context, p string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads = append(m.reads, p)
	s, ok := m.files[p]
	if !ok {
		return "", os.ErrNotExist
	}
	return s, nil
}

func (m *memFS) WriteTextFile(_ context.Context, p, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes = append(m.writes, p)
	m.files[p] = content
	return nil
}

// recordingGuard records the paths it is asked about and returns err.
type recordingGuard struct {
	mu    sync.Mutex
	paths []string
	err   error
}

func (g *recordingGuard) CheckWrite(p string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.paths = append(g.paths, p)
	return g.err
}
