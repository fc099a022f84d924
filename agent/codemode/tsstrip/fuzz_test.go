package tsstrip

import (
	"strings"
	"testing"

	"github.com/dop251/goja/parser"
)

// FuzzStrip: Strip never panics; its output is exactly as long as its
// input with the same line terminators; it only turns bytes into spaces
// or semicolons; and it leaves plain JavaScript (the input, when it is
// JavaScript, and its own output) unchanged.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		"let x: number = 1", "const f = <T,>(a: T): T => a", "a as any\n(b)", "interface A { a: `x${string}` }",
		"class C<T> implements I { private a?: T; m<U>(x: U): void {} }", "x!.y![0]", "/a: b/g; 1 / 2 / 3",
		"type T = A extends B ? C : D;", "type T = {\n  a: 1\r\n}\nreturn 1", "`${a as T}`", "enum E {}", "declare const a: number;",
		"function f(this: T, a?: number, ...b: string[]): asserts a is number {}", "const {a}: {a: 1} = o",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := Strip(src)
		if err != nil {
			return
		}
		if len(out) != len(src) {
			t.Fatalf("Strip(%q) = %q: length %d, want %d", src, out, len(out), len(src))
		}
		for i := 0; i < len(src); i++ {
			if out[i] != src[i] && out[i] != ' ' && out[i] != ';' {
				t.Fatalf("Strip(%q) = %q: byte %d became %q", src, out, i, out[i])
			}
			if (src[i] == '\n' || src[i] == '\r') && out[i] != src[i] {
				t.Fatalf("Strip(%q) = %q: line terminator at %d lost", src, out, i)
			}
		}
		// Plain JavaScript comes back unchanged — except a < b > (c), a
		// generic call to TypeScript and a comparison to JavaScript.
		if strings.Contains(out, "<") && strings.Contains(out, ">") {
			return
		}
		for _, js := range []string{src, out} {
			if _, perr := parser.ParseFile(nil, "", "(async function () {\n"+js+"\n})", 0); perr != nil {
				continue
			}
			if again, err := Strip(js); err != nil || again != js {
				t.Fatalf("Strip changed plain JavaScript %q: %q, %v", js, again, err)
			}
		}
	})
}
