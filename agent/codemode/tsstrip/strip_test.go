package tsstrip

import (
	"errors"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// run strips src and runs it as the body of a function in goja, returning
// the JSON of its return value.
func runJS(t *testing.T, src string) string {
	t.Helper()
	out, err := Strip(src)
	if err != nil {
		t.Fatalf("Strip(%q): %v", src, err)
	}
	if len(out) != len(src) || strings.Count(out, "\n") != strings.Count(src, "\n") {
		t.Fatalf("Strip(%q) = %q: length or lines changed", src, out)
	}
	vm := goja.New()
	v, err := vm.RunString("JSON.stringify((function () {\n" + out + "\n})())")
	if err != nil {
		t.Fatalf("stripped %q -> %q does not run: %v", src, out, err)
	}
	return v.String()
}

// TestStripRuns: erasable TypeScript strips to JavaScript that computes
// what the TypeScript program means.
func TestStripRuns(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"var annotation", `let x: number = 1; const y: string[] = ["a"]; return [x, y]`, `[1,["a"]]`},
		{"union and generic annotation", `const m: Map<string, Array<number | null>> = new Map(); m.set("a", [1, null]); return [...m.get("a")!]`, `[1,null]`},
		{"nested generics >>", `const a: Array<Array<number>> = [[1]]; return a`, `[[1]]`},
		{"function params and return", `function f(a: number, b?: string, ...rest: number[]): string { return a + (b ?? "") + rest.length } return f(1, "x", 2, 3)`, `"1x2"`},
		{"arrow params and return", `const f = (a: number, b: { k: string }): number => a + b.k.length; return f(1, { k: "ab" })`, `3`},
		{"async arrow", `const f = async (a: number): Promise<number> => a; return typeof f`, `"function"`},
		{"generic function", `function id<T extends object = {}>(x: T): T { return x } return id<{ a: number }>({ a: 1 })`, `{"a":1}`},
		{"generic arrow", `const id = <T,>(x: T): T => x; return id(5)`, `5`},
		{"as and satisfies", `const v = ({ a: 1 } as { a: number }) satisfies object; const w = [1, 2] as const; return [v.a, w]`, `[1,[1,2]]`},
		{"as chain", `const x = (1 as unknown) as number; return x`, `1`},
		{"non-null", `const o: { a?: { b: number } } = { a: { b: 2 } }; return o.a!.b + o!.a!["b"]`, `4`},
		{"interface and type", "interface P { x: number; y: number }\ntype Q = P | { z: string };\ntype R<T> = T extends string ? 'str' : 'other';\nconst p: P = { x: 1, y: 2 }; return p", `{"x":1,"y":2}`},
		{"interface extends", "interface A { a: 1 }\ninterface B extends A, Record<string, unknown> { b: 2 }\nreturn 1", `1`},
		{"declare", "declare const ext: number;\ndeclare function g(a: string): void;\nreturn 2", `2`},
		{"class members", `class C<T> implements Iterable<T> { private readonly xs: T[] = []; public n?: number; static k: string = "k"; count!: number;
  constructor(xs: T[]) { this.xs = xs }
  get size(): number { return this.xs.length }
  at<U>(i: number, f?: (x: T) => U): T { return this.xs[i] }
  *[Symbol.iterator](): Iterator<T> { yield* this.xs }
}
const c = new C<number>([1, 2]); return [c.size, c.at(1), [...c], C.k]`, `[2,2,[1,2],"k"]`},
		{"abstract class", "abstract class A { abstract m(): number; n(): number { return this.m() + 1 } }\nclass B extends A { m() { return 1 } }\nreturn new B().n()", `2`},
		{"index signature", "class D { [key: string]: unknown; a = 1 }\nreturn new D().a", `1`},
		{"object method types", `const o = { m(a: number): number { return a * 2 }, k: 1 > 0 ? 3 : 4 }; return [o.m(2), o.k]`, `[4,3]`},
		{"ternary with calls", `const f = (x: number) => x; const a = true ? f(1) : f(2); return a`, `1`},
		{"ternary arrow branch", `const g = false ? (x) : 7; return g`, `7`},
		{"comparison not generic", `const a = 1, b = 2, c = 3; return [a < b, b > c, a < b && c > a]`, `[true,false,true]`},
		{"destructuring types", `const { a, b }: { a: number; b: string } = { a: 1, b: "x" }; const [c]: [number] = [3]; return [a, b, c]`, `[1,"x",3]`},
		{"param patterns", `function f({ a, b = 2 }: { a: number; b?: number }, [c]: number[] = [9]): number { return a + b + c } return f({ a: 1 })`, `12`},
		{"default with ternary", `function f(a = true ? 1 : 2, b?: number) { return a } return f()`, `1`},
		{"this param", `function f(this: { k: number }, a: number) { return this.k + a } return f.call({ k: 1 }, 2)`, `3`},
		{"catch unknown", `try { throw 1 } catch (e: unknown) { return e }`, `1`},
		{"typeof and keyof types", "const base = { a: 1 };\ntype K = keyof typeof base;\nconst k: K = 'a'; return base[k]", `1`},
		{"template literal type", "type Ev = `on${string}`;\nconst e: Ev = `on${1 + 1}`; return e", `"on2"`},
		{"types inside template", "const n = 2; return `${n as number}-${(n as any).toFixed(1)}`", `"2-2.0"`},
		{"function type annotation", `let f: (a: number) => string = (a) => String(a); let g: new () => object; return f(3)`, `"3"`},
		{"generic call on member", `const m = new Map<string, number>(); m.set("a", 1); return Array.from<number>(m.values())`, `[1]`},
		{"regex and division", `const a = 6 / 2 / 1; const r = /a\/b: T/g; return [a, r.source]`, `[3,"a\\/b: T"]`},
		{"comment in type", "const x: /* a: b */ number = 1; // y: T\nreturn x", `1`},
		{"string with colon", `const s: string = "a: b as c"; return s`, `"a: b as c"`},
		{"as then paren line keeps statements apart", "let called = false; const f = () => { called = true; return 1 };\nlet v = f as any\n(1)\nreturn [called, typeof v]", `[false,"function"]`},
		{"type alias then paren line", "let g = () => 5\ntype T = number\n;(0)\nreturn g()", `5`},
		{"interface then paren line", "let h = (x) => x\ninterface I {}\n(2)\nreturn typeof h", `"function"`},
		{"optional chain not ternary", `const o: any = null; return o?.a ?? 1`, `1`},
		{"unicode in type", `const s: "héllo" | "wörld" = "héllo"; return s`, `"héllo"`},
		{"plain JS untouched", `let a = [1, 2].map((x) => x * 2); return a`, `[2,4]`},
		{"labels and switch", `outer: for (const x of [1]) { switch (x) { case 1: break outer; default: } } return 1`, `1`},
		{"as identifier", `const as = 2, satisfies = 3, type = 4, declare = 5; return as + satisfies + type + declare`, `14`},
		{"if then regex", `if (true) /x: y/.test("x: y"); return 1`, `1`},
		{"typed map callback", `const items = [{ name: "a" }]; return items.map((x): string => x.name)`, `["a"]`},
		{"for of with as", `const out: string[] = []; for (const f of ["x"] as string[]) { out.push(f) } return out`, `["x"]`},
		{"type guard", `function isStr(x: unknown): x is string { return typeof x === "string" } return [isStr("a"), isStr(1)]`, `[true,false]`},
		{"declaration without initializer", "let a: number | undefined;\nlet b!: string\nb = \"q\"\nreturn [a === undefined, b]", `[true,"q"]`},
		{"record and tuple types", `const o: Record<string, number> = {}; const t: [string, number?] = ["a"]; o.k = 1; return [o, t]`, `[{"k":1},["a"]]`},
		{"function type alias", "type Fn = (a: number) => void;\nconst f: Fn = () => {}; return typeof f", `"function"`},
		{"async generic arrow", `const f = async <T,>(x: T): Promise<T> => x; return typeof f`, `"function"`},
		{"class arrow field", `class A { m = (x: number): number => x * 2; n: number = this.m(2) } return new A().n`, `4`},
		{"object arrow values", `const o = { f: (x: number) => x + 1, g: <T,>(y: T): T => y }; return [o.f(1), o.g(2)]`, `[2,2]`},
		{"generic reduce", `return [1, 2, 3].reduce<number>((a, b) => a + b, 0)`, `6`},
		{"double as", `const v = ("5" as unknown) as number[]; return v`, `"5"`},
		{"as const object", `const e = { A: 1, B: 2 } as const; return e.B`, `2`},
		{"typeof type", `const y = 1; let x: typeof y = y; return x`, `1`},
		{"ternary of typed arrows", `const neg = true; const f = neg ? (x: number) => -x : (x: number) => x; return f(2)`, `-2`},
		{"ternary of as", `const ok = false; const a: unknown = 1, b: unknown = 2; return ok ? (a as number) : (b as number)`, `2`},
		{"default param with type", `function f(a: number = 1, b: string = "s"): string { return a + b } return f()`, `"1s"`},
		{"object getter types", `const o = { get size(): number { return 3 }, set size(v: number) {} }; return o.size`, `3`},
		{"generator method", `class G { *gen(): Generator<number> { yield 1 } } return [...new G().gen()]`, `[1]`},
		{"arrow returning object type", `const f = (): { a: number } => ({ a: 1 }); return f()`, `{"a":1}`},
		{"multi-line union alias", "type T =\n  | \"a\"\n  | \"b\";\nconst t: T = \"b\"; return t", `"b"`},
		{"alias then bracket line", "type A = number\n[1, 2].forEach((x: A) => x)\nreturn 1", `1`},
		{"as across a line", "const x = 1 as\n  number; return x", `1`},
		{"interface with methods", "interface S { get<T>(k: string): T | undefined; size: number }\nreturn 0", `0`},
		{"optional method and property in class", `class P { name?: string; greet?(): string; go(): string { return "go" } } return new P().go()`, `"go"`},
		{"generic class heritage", "class Base<T> { v?: T }\nclass D extends Base<number> implements Object { } return new D() instanceof Base", `true`},
		{"conditional inference type", "type U<T> = T extends Array<infer E> ? E : never;\nreturn 1", `1`},
		{"keyof and indexed access", "type O = { a: number };\nconst k: keyof O = \"a\"; const v: O[\"a\"] = 1; return [k, v]", `["a",1]`},
		{"mapped type", "type M<T> = { readonly [K in keyof T]?: T[K] };\nreturn 1", `1`},
		{"function overloads", "function f(a: string): string;\nasync function g(): Promise<void>;\nfunction f(a: any) { return a }\nreturn f(\"x\")", `"x"`},
		{"method overloads", "class A { m(a: string): number; m(a: any) { return 1 } }\nreturn new A().m(\"q\")", `1`},
		{"declare enum and namespace are ambient", "declare enum E { A }\ndeclare namespace N { const a: number }\ndeclare global { interface W {} }\nreturn 3", `3`},
		{"pattern param with type", `const f = ({ a }: { a: number }) => a; return f({a: 4})`, `4`},
		{"for of entries as tuple array", `const o = { a: 1, b: 2 }; const out: string[] = []; for (const [k, v] of Object.entries(o) as [string, number][]) out.push(k + v); return out`, `["a1","b2"]`},
		{"object default param", `function f(o = { a: 1 }): number { return o.a } return f()`, `1`},
		{"switch on as", "const x = 1\nswitch (x as number) { case 1: { return \"one\" as string } }", `"one"`},
		{"async typed arrow in call", `const p = [1, 2].map(async (n: number): Promise<number> => n * 2); return p.length`, `2`},
		{"typed for init", "let s = 0\nfor (let i: number = 0; i < 3; i++) s += i\nreturn s", `3`},
		{"type predicate arrow", `const x = [1, 2, 3].filter((n): n is number => n > 1); return x`, `[2,3]`},
		{"overload-free generic method", `const o = { id<T>(x: T): T { return x } }; return o.id<string>("q")`, `"q"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runJS(t, c.src); got != c.want {
				out, _ := Strip(c.src)
				t.Fatalf("%q\n stripped %q\n = %s, want %s", c.src, out, got, c.want)
			}
		})
	}
}

// TestStripRefuses: non-erasable and unreadable programs are refused with
// an *Error that says where.
func TestStripRefuses(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"enum", "enum E { A }\nreturn 1", "an enum is not erasable"},
		{"const enum", "const enum E { A }", "an enum is not erasable"},
		{"namespace", "namespace N { export const a = 1 }", "a namespace is not erasable"},
		{"module", "module M {}", "a module is not erasable"},
		{"parameter property", "class A { constructor(private x: number) {} }", "parameter property (private)"},
		{"readonly parameter property", "class A { constructor(readonly x) {} }", "parameter property (readonly)"},
		{"angle assertion", "const x = <any>1", "angle-bracket type assertion"},
		{"unterminated comment in type", "const x: /* number = 1", "unterminated comment"},
		{"unterminated string", `const x = "abc`, "unterminated string"},
		{"unterminated template", "const x = `a${1", "unterminated template"},
		{"unmatched bracket", "const x = (1", "unclosed bracket"},
		{"extra close", "return 1)", "unmatched"},
		{"bad type", "const x: = 1", "cannot read the type"},
		{"regex from erased alias", "let a = 1\ntype T = number\n/x/g.test('x')", "change how the code reads"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Strip(c.src)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Strip(%q) = %q, %v; want an *Error", c.src, out, err)
			}
			if !strings.Contains(err.Error(), c.want) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("Strip(%q) error %q; want it to contain %q with a position", c.src, err, c.want)
			}
		})
	}
}

// TestStripPositions: code after erased types keeps its line and column,
// so an error's line is the line the model wrote.
func TestStripPositions(t *testing.T) {
	src := "interface A {\n  a: number\n}\nconst x: A = { a: 1 }\nthrow new Error('line5')"
	out, err := Strip(src)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Index(src, "throw")
	if strings.Index(out, "throw") != want || strings.Index(out, "const x") != strings.Index(src, "const x") {
		t.Fatalf("positions moved: %q", out)
	}
	vm := goja.New()
	_, err = vm.RunString(out)
	var exc *goja.Exception
	if !errors.As(err, &exc) || !strings.Contains(exc.String(), ":5:") {
		t.Fatalf("error %v does not name line 5", err)
	}
}

// TestStripPlainJSUnchanged: a JavaScript program with no type syntax
// comes back byte for byte.
func TestStripPlainJSUnchanged(t *testing.T) {
	for _, src := range []string{
		"const a = b ? c : d; return a",
		"let x = y / 2 / z; const r = /[/]/g",
		"label: { break label }",
		"const o = { a: 1, b: [2, 3], c: { d: `x${1 + 2}y` } }",
		"for (let i = 0; i < 3; i++) { if (i > 1) continue }",
		"const f = async function* (a, b = 1) { yield a }",
		"class A extends B { #p = 1; static s() { return this.#p } }",
	} {
		out, err := Strip(src)
		if err != nil || out != src {
			t.Errorf("Strip(%q) = %q, %v; want it unchanged", src, out, err)
		}
	}
}
