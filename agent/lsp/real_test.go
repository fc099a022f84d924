package lsp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/lsp"
	"github.com/reel-agent/reel/agent/tools"
)

// needServer skips a test whose language server is not installed, and
// fails it under CI=true, where .ci/run installs the servers.
func needServer(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed; .ci/run installs it (%v)", name, err)
		}
		t.Skipf("%s is not installed (.ci/run installs it)", name)
	}
}

// writeTree writes files (name → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call runs one lsp call in env and returns its result.
func call(t *testing.T, tool *lsp.Tool, env *tools.Env, args string) tools.Result {
	t.Helper()
	res, err := tool.Run(context.Background(), env, json.RawMessage(args))
	if err != nil {
		t.Fatalf("lsp %s: %v", args, err)
	}
	return res
}

// TestRealServers asks typescript-language-server and gopls, the default
// servers, each operation on a small project of their language, through
// one session's kept servers (started on the first call, stopped when the
// session's Keep closes).
func TestRealServers(t *testing.T) {
	tool, err := lsp.NewTool(lsp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type ask struct {
		args  string
		want  []string // the result's lines, or substrings of a hover
		hover bool
	}
	cases := []struct {
		name, server string
		files        map[string]string
		asks         []ask
	}{
		{
			name: "typescript", server: "typescript-language-server",
			files: map[string]string{
				"tsconfig.json": `{"compilerOptions":{"strict":true},"include":["src"]}`,
				"src/shapes.ts": "export interface Shape {\n  area(): number\n}\n\nexport class Square implements Shape {\n  constructor(private side: number) {}\n  area(): number {\n    return this.side * this.side\n  }\n}\n",
				"src/main.ts":   "import { Square, Shape } from './shapes'\n\nconst s: Shape = new Square(2)\nconsole.log(s.area())\n",
			},
			asks: []ask{
				{args: `{"operation":"goToDefinition","file_path":"src/main.ts","line":4,"character":13}`, want: []string{"src/main.ts:3:7"}},
				{args: `{"operation":"findReferences","file_path":"src/main.ts","line":3,"character":7}`, want: []string{"src/main.ts:3:7", "src/main.ts:4:13"}},
				{args: `{"operation":"goToImplementation","file_path":"src/shapes.ts","line":1,"character":18}`, want: []string{"src/shapes.ts:5:14"}},
				{args: `{"operation":"hover","file_path":"src/main.ts","line":3,"character":7}`, want: []string{"const s: Shape"}, hover: true},
				{args: `{"operation":"goToDefinition","file_path":"src/main.ts","line":2,"character":1}`, want: []string{"No results."}},
			},
		},
		{
			name: "go", server: "gopls",
			files: map[string]string{
				"go.mod":    "module example.com/m\n\ngo 1.22\n",
				"shapes.go": "package main\n\n// Shape has an area.\ntype Shape interface{ Area() int }\n\n// Square is a Shape.\ntype Square struct{ Side int }\n\n// Area is the square's area.\nfunc (s Square) Area() int { return s.Side * s.Side }\n",
				"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar s Shape = Square{2}\n\tfmt.Println(s.Area())\n}\n",
			},
			asks: []ask{
				{args: `{"operation":"goToDefinition","file_path":"main.go","line":6,"character":17}`, want: []string{"shapes.go:7:6"}},
				{args: `{"operation":"findReferences","file_path":"shapes.go","line":7,"character":6}`, want: []string{"shapes.go:7:6", "shapes.go:10:9", "main.go:6:16"}},
				{args: `{"operation":"goToImplementation","file_path":"shapes.go","line":4,"character":6}`, want: []string{"shapes.go:7:6"}},
				{args: `{"operation":"hover","file_path":"main.go","line":6,"character":17}`, want: []string{"type Square struct", "Square is a Shape."}, hover: true},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			needServer(t, c.server)
			dir := t.TempDir()
			writeTree(t, dir, c.files)
			keep := &tools.Keep{}
			env := &tools.Env{Cwd: dir, Keep: keep}
			defer keep.Close()
			for _, a := range c.asks {
				res := call(t, tool, env, a.args)
				if res.IsError {
					t.Fatalf("lsp %s: error result %q", a.args, res.Text)
				}
				if a.hover {
					for _, w := range a.want {
						if !strings.Contains(res.Text, w) {
							t.Errorf("lsp %s = %q, want it to hold %q", a.args, res.Text, w)
						}
					}
					continue
				}
				got := strings.Split(res.Text, "\n")
				if !sameSet(got, a.want) {
					t.Errorf("lsp %s =\n%s\nwant the lines %q", a.args, res.Text, a.want)
				}
			}
		})
	}
}

// sameSet reports whether a and b hold the same lines, in any order (a
// server orders references as it likes).
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
		if seen[s] < 0 {
			return false
		}
	}
	return true
}
