package acpcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// TestAttackCodeModeTypeSyntax: run_code takes TypeScript, and its types
// are erased before the program runs. A hostile program shapes its types
// so that a careless eraser would change what runs — a comment opener
// inside a string literal type, a template literal type, a regular
// expression or a division that reads like an annotation, an `as` whose
// erasure would join two statements — or hides a call behind
// non-erasable syntax. Each program must do exactly what it means as
// TypeScript: the same result and the same tool calls made (or none: a
// refused program never runs).
func TestAttackCodeModeTypeSyntax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, code, want string
		calls            int
	}{
		{"comment opener in a string type", "type Open = \"/*\";\nawait tools.read({ file_path: \"f.txt\" });\ntype Close = \"*/\";\nreturn \"done\"", "done", 1},
		{"template literal types and substitutions", "type K = `on${string}`;\nconst k: K = `on${(1 as number) + 1}`;\nreturn k", "on2", 0},
		{"regex that reads like types", "const r = /x: number as any/g;\nreturn r.source", "x: number as any", 0},
		{"division that reads like generics", "const a: number = 8, b = 2, c = 1;\nreturn String(a / b / c) + String(a < b) + String(b > c)", "4falsetrue", 0},
		{"as before a parenthesized line", "let f = (() => \"called\") as any\n(1)\nreturn typeof f", "function", 0},
		{"erased alias before a parenthesized line", "let g = () => \"called\"\ntype T = number\n;(0)\nreturn typeof g", "function", 0},
		{"non-null before !=", "const o: { a?: number } = { a: 1 };\nreturn String(o.a! != 2)", "true", 0},
		{"declare beside a call", "declare const ext: number;\nconst r = await tools.read({ file_path: \"f.txt\" }) as { lines: { text: string }[] };\nreturn r.lines[0].text", "one line", 1},
		{"a call before an enum never runs", "await tools.read({ file_path: \"f.txt\" });\nenum E { A }\nreturn 1", "code run failed (exception): TypeScript strip: line 2, column 1: an enum is not erasable", 0},
		{"a call in a namespace never runs", "namespace N { await tools.read({ file_path: \"f.txt\" }) }", "code run failed (exception): TypeScript strip: line 1, column 1: a namespace is not erasable", 0},
		{"a parameter property never runs", "await tools.read({ file_path: \"f.txt\" });\nclass A { constructor(private x: number) {} }", "code run failed (exception): TypeScript strip: line 2, column 23: a parameter property (private) is not erasable", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ws, state := workspace(t)
			if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			script := &standin.Script{Responses: []standin.Response{codeCall(t, "run", tc.code), {Text: "DONE"}}}
			p := codeProc(t, dir, state, "workspace-write", script)
			underAttack(t, p)
			sid := p.newSession(ws)
			if stop, _ := p.prompt(sid, "attack"); stop != "end_turn" {
				t.Fatalf("stopReason %q", stop)
			}
			events := logEvents(t, state, sid)
			got := results(t, events)["run"]
			if strings.HasPrefix(tc.want, "code run failed") && !strings.HasPrefix(got, tc.want) || !strings.HasPrefix(tc.want, "code run failed") && got != tc.want {
				t.Errorf("run_code answered %q, want %q", clip(got, 300), tc.want)
			}
			if n := len(dispatches(t, events)); n != tc.calls {
				t.Errorf("%d tool calls made, want %d", n, tc.calls)
			}
			if code := p.finish(); code != 0 {
				t.Fatalf("exit %d", code)
			}
		})
	}
}
