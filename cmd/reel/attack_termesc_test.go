package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// hostile is model text aimed at the terminal of whoever reads the log:
// an OSC 52 clipboard write, a screen clear, a window title, a carriage
// return that overwrites the line, DEL, a C1 CSI (U+009B), bidi overrides
// and isolates, a line separator, and a literal backslash sequence that
// looks like reel's own escape of ESC.
const hostile = "A\x1b]52;c;ZWNobyBwd25lZA==\x07B\x1b[2JC\x1b]0;pwned\x07D\rE\x7fF\u009b31mG\u202eH\u2066I\u2028J\\x{1b}K"

// hostileShell prints, from a bash tool call, the same kinds of bytes
// raw, plus NUL, a lone C1 byte and an invalid UTF-8 byte.
const hostileShell = `printf 'o\033]52;c;eA==\007p\033[2Jq\rr\000s\302\233t\233u\342\200\256v\377w\177x\n'`

// badTerminalByte describes the first byte or rune of out that a terminal
// would act on or that hides text (a C0 control other than newline and
// tab, DEL, a C1 control, invalid UTF-8, a bidi control, a line or
// paragraph separator), or "" when there is none. It is written out here,
// independent of the escaper under test.
func badTerminalByte(out []byte) string {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("invalid UTF-8 byte %#02x at %d in %q", out[i], i, context40(out, i))
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("control %U at %d in %q", r, i, context40(out, i))
		case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			return fmt.Sprintf("bidi/separator %U at %d in %q", r, i, context40(out, i))
		}
		i += n
	}
	return ""
}

func context40(b []byte, i int) []byte {
	return b[max(0, i-20):min(len(b), i+20)]
}

// TestAttackTerminalEscapes: a model whose text, reasoning, session title,
// tool output and provider error carry terminal escapes (clipboard write,
// screen clear, title change, CR, NUL, C1 CSI, bidi overrides, invalid
// UTF-8) gets none of them onto the terminal of a user who reads its logs
// with the real binary: reel log show, surface, list, verify and diff (the
// harness's diff engine) print them escaped, and reel acp's own stderr
// (its slog diagnostics at debug level) carries none either. reel log
// request, the JSON output, decodes back to the exact text the model sent.
func TestAttackTerminalEscapes(t *testing.T) {
	args := func(command string) string {
		b, _ := json.Marshal(map[string]string{"command": command, "description": "print"})
		return string(b)
	}
	script := standin.Script{
		Responses: []standin.Response{
			// Session A, turn 1.
			{Reasoning: "think " + hostile, Text: "Running. " + hostile,
				ToolCalls: []standin.ToolCall{{ID: "call_1", Name: "bash", Arguments: args(hostileShell)}}},
			{Text: "Done: " + hostile},
			// Session B, turn 1: differs from A in its answer; turn 2: a
			// provider error whose message is hostile.
			{Text: "Running. " + hostile,
				ToolCalls: []standin.ToolCall{{ID: "call_1", Name: "bash", Arguments: args(hostileShell)}}},
			{Text: "Other: " + hostile},
			{Error: &standin.ErrorReply{Status: 400, Message: "bad " + hostile}},
		},
		Title: &standin.Response{Text: "T" + hostile},
	}
	raw, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	s, err := standin.ParseScript(raw)
	if err != nil {
		t.Fatal(err)
	}
	srv := standin.New(s, slog.New(slog.DiscardHandler))
	addr, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	var acpErr bytes.Buffer
	p := startACPLogging(t, state, "http://"+addr+"/v1", &acpErr)
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	p.await(t, 1)
	id := 2
	newSession := func() string {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, id, dir))
		var res struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(p.await(t, id)["result"], &res)
		id++
		return res.SessionID
	}
	prompt := func(sid string, fails bool) {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id, sid))
		if r := p.await(t, id); (r["error"] != nil) != fails {
			t.Fatalf("prompt %d: %s", id, r["error"])
		}
		id++
	}
	a := newSession()
	prompt(a, false)
	b := newSession()
	prompt(b, false)
	prompt(b, true) // the provider error fails the prompt
	_ = p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("reel acp: %v; stderr %q", err, acpErr.Bytes())
	}
	logA := filepath.Join(state, a+".jsonl")
	logB := filepath.Join(state, b+".jsonl")
	if data, _ := os.ReadFile(logA); !bytes.Contains(data, []byte(`\u001b]52;c;`)) {
		t.Fatalf("the attack did not reach the log: %s", data)
	}
	if bad := badTerminalByte(acpErr.Bytes()); bad != "" {
		t.Errorf("reel acp stderr: %s", bad)
	}

	run := func(args ...string) (stdout, stderr []byte) {
		t.Helper()
		cmd := exec.Command(reelBin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("reel %s: %v", strings.Join(args, " "), err)
		}
		return out.Bytes(), errb.Bytes()
	}
	for _, c := range []struct {
		args []string
		want string // an escaped piece of the attack the output must show
	}{
		{[]string{"log", "show", logA}, `A\x{1b}]52;c;`},
		{[]string{"log", "show", logB}, `bad A\x{1b}]52;c;`},
		{[]string{"log", "surface", logA}, `A\x{1b}]52;c;`},
		{[]string{"log", "list", state}, `A\x{1b}]52;c;`},
		{[]string{"log", "verify", state}, "ok"},
		// The diff engine and error messages quote text with %q, whose
		// Go escapes (\x1b) pass through unchanged.
		{[]string{"log", "diff", logA, logB}, `A\x1b]52;c;`},
		{[]string{"log", "show", logA, "--session", "x" + hostile}, `xA\x1b]52`},
	} {
		stdout, stderr := run(c.args...)
		name := strings.Join(c.args[:2], " ")
		if bad := badTerminalByte(stdout); bad != "" {
			t.Errorf("reel %s stdout: %s", name, bad)
		}
		if bad := badTerminalByte(stderr); bad != "" {
			t.Errorf("reel %s stderr: %s", name, bad)
		}
		if !bytes.Contains(stdout, []byte(c.want)) && !bytes.Contains(stderr, []byte(c.want)) {
			t.Errorf("reel %s shows no %s:\nstdout:\n%s\nstderr:\n%s", name, c.want, stdout, stderr)
		}
	}

	// The JSON output stays exact: the request of turn 1 step 2 holds the
	// model's text and reasoning as sent.
	stdout, stderr := run("log", "request", logA, "--turn", "1", "--step", "2")
	if bad := badTerminalByte(stdout); bad != "" {
		t.Errorf("reel log request stdout: %s", bad)
	}
	var req any
	if err := json.Unmarshal(stdout, &req); err != nil {
		t.Fatalf("reel log request: %v; stderr %s", err, stderr)
	}
	found := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, want := range []string{"Running. " + hostile, "think " + hostile} {
				if v == want {
					found[want] = true
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(req)
	if len(found) != 2 {
		t.Errorf("reel log request does not decode to the model's exact text and reasoning (found %v):\n%s", found, stdout)
	}
}

// startACPLogging starts reel acp like startACP, with debug logging to
// stderr.
func startACPLogging(t *testing.T, stateDir, baseURL string, stderr io.Writer) *acpProc {
	t.Helper()
	cmd := exec.Command(reelBin, "acp", "--state-dir", stateDir, "--provider", "deepseek", "--model", "standin",
		"--base-url", baseURL, "--mode", "danger-full-access", "--log-level", "debug")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + stateDir, "DEEPSEEK_API_KEY=standin"}
	cmd.Stderr = stderr
	p := runACP(t, cmd)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

// TestAttackTerminalEscapesSuiteReport: a scenario whose recorded model
// answer carries terminal escapes, replayed by reel snapshot against a
// golden it no longer matches, has the suite report print the differing
// log event and transcript line — with the model's text in them escaped,
// not raw.
func TestAttackTerminalEscapesSuiteReport(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join(dir, "fixtures")
	if err := os.CopyFS(filepath.Join(fixtures, "text-turn"), os.DirFS("../../fixtures/text-turn")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "snapshots"), os.DirFS("../../snapshots")); err != nil {
		t.Fatal(err)
	}
	// The recorded answer starts with the attack; the replay streams it.
	logPath := filepath.Join(fixtures, "text-turn", "session.jsonl")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(hostile)
	data = bytes.ReplaceAll(data, []byte("Hello fr"), append(quoted[1:len(quoted)-1:len(quoted)-1], "Hello fr"...))
	if err := os.WriteFile(logPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(reelBin, "snapshot", "--fixtures", fixtures, "--snapshots", filepath.Join(dir, "snapshots"), "-run", "^text-turn$", "-j", "1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("the suite passed a scenario that no longer matches its golden:\n%s", out.Bytes())
	}
	if bad := badTerminalByte(out.Bytes()); bad != "" {
		t.Errorf("reel snapshot stdout: %s", bad)
	}
	if bad := badTerminalByte(errb.Bytes()); bad != "" {
		t.Errorf("reel snapshot stderr: %s", bad)
	}
	if !bytes.Contains(out.Bytes(), []byte("transcript: ")) || !bytes.Contains(out.Bytes(), []byte(`A\u001b]52;c;`)) {
		t.Errorf("the report shows no transcript difference with the attack in it:\n%s", out.Bytes())
	}
}
