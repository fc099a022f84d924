package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/tools"
)

// fakeDispatcher answers a program's tool calls from a table and records
// them.
type fakeDispatcher struct {
	answers map[string]tools.Result
	calls   []string // "subCallID name args"
}

func (f *fakeDispatcher) Names() []string {
	return []string{"bash", "read", "run_code", "my-tool", "broken"}
}

func (f *fakeDispatcher) Dispatch(_ context.Context, sub, name string, args json.RawMessage) tools.Result {
	f.calls = append(f.calls, sub+" "+name+" "+string(args))
	if r, ok := f.answers[name]; ok {
		return r
	}
	return tools.Result{Text: "no such answer", IsError: true}
}

// run executes code with the fake dispatcher and returns the run's text,
// whether it failed, and the calls made.
func run(t *testing.T, code string, l Limits) (string, bool, []string) {
	t.Helper()
	d := &fakeDispatcher{answers: map[string]tools.Result{
		"bash":    {Text: "hi\n", Value: json.RawMessage(`{"kind":"foreground","exitCode":0,"stdout":{"text":"hi\n","truncated":false}}`)},
		"read":    {Text: "     1\tx", Value: json.RawMessage(`{"path":"/w/f","offset":1,"lines":[{"number":1,"text":"x"}],"totalLines":1}`)},
		"my-tool": {Text: "plain text"},
	}}
	out := execute(context.Background(), d, "c1", code, l.withDefaults())
	return out.text(), out.failure != nil, d.calls
}

func TestRunResults(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		{"log then string", `console.log("captured output"); return "A+B";`, "captured output\nA+B"},
		{"no output", `const x = 1;`, noOutput},
		{"empty string return", `return "";`, noOutput},
		{"object return", `return {a: 1, b: [true, null, "s"], c: {}, d: []};`,
			"{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null,\n    \"s\"\n  ],\n  \"c\": {},\n  \"d\": []\n}"},
		{"number return", `return 0.1 + 0.2;`, "0.30000000000000004"},
		{"deep object is compact past five levels", `return {a: {b: {c: {d: {e: {f: {g: 1}}}}}}};`,
			"{\n  \"a\": {\n    \"b\": {\n      \"c\": {\n        \"d\": {\n          \"e\": {\"f\":{\"g\":1}}\n        }\n      }\n    }\n  }\n}"},
		{"console formats values", `console.log("n", 1, {a: [1]}, undefined, null, () => 1, new Error("e"));`,
			`n 1 {"a":[1]} undefined null [Function (anonymous)] Error: e`},
		{"typed tool values", `const r = await tools.bash({command: "echo hi"}); const f = await tools.read({file_path: "f"}); return r.stdout.text.trim() + f.lines[0].text;`, "hix"},
		{"a tool without a value resolves to its text", `return await tools["my-tool"]({});`, "plain text"},
		{"an unknown tool is a TypeError", `await tools.nope({});`, "code run failed (exception): TypeError: Object has no member 'nope'"},
		{"an uncaught failed call", `await tools.broken({});`, "code run failed (exception): ToolCallError: no such answer"},
		{"throw keeps the output", `console.log("before"); throw new Error("boom");`, "code run failed (exception): Error: boom\nCaptured output:\nbefore"},
		{"syntax error", `return (;`, "code run failed (exception): SyntaxError:"},
		{"undefined arguments", `await tools.bash();`, "code run failed (exception): ToolCallError: tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"},
		{"function argument", `await tools.bash({f: () => 1});`, "code run failed (exception): ToolCallError: tool arguments must be lossless JSON: value.f is a function"},
		{"NaN argument", `await tools.bash({n: NaN});`, "code run failed (exception): ToolCallError: tool arguments must be lossless JSON: value.n is NaN, which JSON cannot hold"},
		{"cyclic argument", `const a = {}; a.a = a; await tools.bash(a);`, "code run failed (exception): ToolCallError: tool arguments must be lossless JSON: value.a refers back to itself (a cycle)"},
		{"date argument", `await tools.bash({d: new Date(0)});`, "code run failed (exception): ToolCallError: tool arguments must be lossless JSON: value.d is a Date object, which is not JSON"},
		{"returning a function", `return () => 1;`, "code run failed (invalid-output): program completion must be lossless JSON: value is a function"},
		{"a promise nothing settles", `await new Promise(() => {});`, "code run failed (exception): the program did not finish"},
		{"closing the wrapper", `}); (function(){`, "code run failed (exception): the program is not the body of a function"},
		{"run_code is not bound", `return typeof tools.run_code;`, "undefined"},
		{"typescript is stripped", "interface Out { text: string }\nconst r = (await tools.bash({command: \"echo hi\"})) as { stdout: Out };\nconst n: number = r.stdout!.text.length;\nreturn `${r.stdout.text.trim()}:${n satisfies number}`;", "hi:3"},
		{"typed tool call in a typed helper", "async function get<T>(name: string): Promise<T> { return await (tools as any)[name]({}) as T }\nreturn await get<string>(\"my-tool\");", "plain text"},
		{"enum is refused before running", "console.log(\"ran\");\nenum E { A }", "code run failed (exception): TypeScript strip: line 2, column 1: an enum is not erasable"},
		{"runtime error keeps the model's line", "type A = {\n  a: number\n}\nthrow new Error(\"x\")", "code run failed (exception): Error: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, failed, _ := run(t, tc.code, Limits{})
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q\nwant it to start %q", got, tc.want)
			}
			if strings.HasPrefix(tc.want, "code run failed") != failed {
				t.Errorf("failed = %v for %q", failed, got)
			}
		})
	}
}

func TestRunToolCallError(t *testing.T) {
	d := &fakeDispatcher{answers: map[string]tools.Result{"bash": {Text: "denied", IsError: true}}}
	out := execute(context.Background(), d, "c9", `try { await tools.bash({command: "x"}); } catch (e) {
  return [e.name, e.toolName, e.message, e instanceof ToolCallError, e instanceof Error].join("|"); }`, Limits{}.withDefaults())
	if got, want := out.text(), "ToolCallError|bash|denied|true|true"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(d.calls) != 1 || d.calls[0] != `c9:code:1 bash {"command":"x"}` {
		t.Errorf("calls %q", d.calls)
	}
}

func TestRunLimits(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		l          Limits
		want       string
		calls      int
	}{
		{"calls", `for (;;) { try { await tools.bash({}); } catch (e) {} }`, Limits{MaxCalls: 3},
			"code run failed (call-limit): tool-call budget exhausted (3 calls in one run)", 3},
		{"output", `for (;;) console.log("0123456789");`, Limits{MaxOutput: 25},
			"code run failed (output-limit): outer output exceeded 25 bytes\nCaptured output:\n0123456789\n0123456789\n012", 0},
		{"return size", `return "x".repeat(100);`, Limits{MaxOutput: 50},
			"code run failed (output-limit): outer output exceeded 50 bytes", 0},
		{"argument size", `await tools.bash({s: "x".repeat(100)});`, Limits{MaxArgBytes: 50},
			"code run failed (exception): ToolCallError: tool arguments must be lossless JSON: the value is too large", 0},
		{"nesting", `let v = 1; for (let i = 0; i < 100; i++) v = [v]; await tools.bash({v});`, Limits{},
			"code run failed (exception): ToolCallError: tool arguments must be lossless JSON: value.v", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, calls := run(t, tc.code, tc.l)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q\nwant it to start %q", got, tc.want)
			}
			if len(calls) != tc.calls {
				t.Errorf("%d calls, want %d", len(calls), tc.calls)
			}
		})
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &fakeDispatcher{answers: map[string]tools.Result{}}
	d.answers["bash"] = tools.Result{Text: "ok"}
	done := make(chan outcome)
	go func() { done <- execute(ctx, d, "c", `for (;;) {}`, Limits{}.withDefaults()) }()
	cancel()
	out := <-done
	if out.failure == nil || out.failure.kind != KindAbort {
		t.Fatalf("got %q, want an aborted run", out.text())
	}
}

func TestRender(t *testing.T) {
	for _, in := range []string{`{}`, `[]`, `"s"`, `1`, `{"a":"x\"y,z:{"}`, `[[[[[[[1,{"k":[]}]]]]]]]`, `{"a":[{"b":{"c":{"d":{"e":{"f":1},"g":2}}}}],"h":3}`} {
		out := render([]byte(in))
		var a, b any
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("render(%s) = %q is not JSON: %v", in, out, err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("render(%s) = %q changes the value", in, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if indent := len(line) - len(strings.TrimLeft(line, " ")); indent > maxIndent {
				t.Errorf("render(%s) indents a line by %d: %q", in, indent, line)
			}
		}
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{`{"code":"return 1","description":"one"}`, true},
		{`{"code":"return 1"}`, false},
		{`{"code":"return 1","description":"  "}`, false},
		{`{"code":"return 1","description":"d","Code":"x"}`, false},
		{`{"code":"a","code":"b","description":"d"}`, false},
		{`{"code":1,"description":"d"}`, false},
		{`[]`, false},
	} {
		_, err := ParseArgs(json.RawMessage(tc.raw))
		if (err == nil) != tc.ok {
			t.Errorf("ParseArgs(%s): %v", tc.raw, err)
		}
	}
}

func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner bool
		ok    bool
	}{
		{"run_code", false, true}, {"bash", false, false}, {"bash", true, true}, {"run_code", true, false},
	} {
		if err := Admit(tc.name, tc.inner); (err == nil) != tc.ok {
			t.Errorf("Admit(%s, inner %v): %v", tc.name, tc.inner, err)
		}
	}
}

func TestPromptSection(t *testing.T) {
	s := PromptSection(tools.Default(tools.Options{Escalation: true}).Schemas(), Limits{})
	for _, want := range []string{"interface ToolArgsMap {", "  bash: {\n", "    command: string;", "    timeout?: number;",
		`    sandbox_permissions?: "workspace-write" | "danger-full-access";`, "  read: {\n    path: string;", "  glob: string;", "declare const tools"} {
		if !strings.Contains(s, want) {
			t.Errorf("the prompt section lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "  run_code:") {
		t.Error("run_code is declared to programs")
	}
}
