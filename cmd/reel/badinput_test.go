package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/sqlite"
)

// reelBin is built once for the bad-input table.
var reelBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reel-badinput-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	reelBin = filepath.Join(dir, "reel")
	if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", reelBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build reel: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// badCase is one hostile input and what a user sees.
type badCase struct {
	area  string // wire, log, fixture, cli
	name  string
	run   func(t *testing.T, tmp string) (string, bool) // output a user sees; whether the process survived / exited non-zero as it should
	want  string                                        // a fragment the output must contain
	frame string                                        // for wire cases: the frame sent
	loads bool                                          // the input is tolerated: exit status 0
}

const (
	initFrame     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	newFrame      = `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	pingFrame     = `{"jsonrpc":"2.0","id":99,"method":"initialize","params":{"protocolVersion":1}}`
	newWSFrame    = `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$TMP/ws","mcpServers":[]}}`
	promptWSFrame = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-ws","prompt":[{"type":"text","text":"x"}]}}`
	promptFrame   = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"x"}]}}`
)

// newWSRecordFrame is newWSFrame with the stand-in MCP server "r" in mode
// record (reel mcp-standin record).
func newWSRecordFrame() string {
	srv, _ := json.Marshal(map[string]any{"name": "r", "command": reelBin, "args": []string{"mcp-standin", "record"}, "env": []any{}})
	return strings.Replace(newWSFrame, `"mcpServers":[]`, `"mcpServers":[`+string(srv)+`]`, 1)
}

// wire sends initialize, session/new, the hostile frame and a ping to a
// replaying agent; it returns the agent's answer to the hostile frame and
// whether the ping was still answered (the process survived).
func wire(frame string) func(t *testing.T, tmp string) (string, bool) {
	return func(t *testing.T, tmp string) (string, bool) {
		fixture, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "text-turn", "session.jsonl"))
		cmd := exec.Command(reelBin, "acp", "--state-dir", filepath.Join(tmp, "state"), "--replay", fixture, "--session-id", "s1", "--log-level", "error")
		cmd.Stdin = strings.NewReader(strings.Join([]string{initFrame, newFrame, frame, pingFrame}, "\n") + "\n")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("reel acp: %v\n%s", err, errb.String())
		}
		var answer string
		survived := false
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var f struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				t.Fatalf("stdout line is not JSON-RPC: %q", line)
			}
			switch {
			case string(f.ID) == "99" && f.Error == nil:
				survived = true
			case f.Method == "" && f.Error != nil:
				answer = line
			}
		}
		return answer, survived
	}
}

// standinCalling is a stand-in script whose model calls tool with args
// (JSON text, escaped for a JSON string) and then answers "done".
func standinCalling(tool, args string) string {
	return `{"responses":[{"toolCalls":[{"id":"c1","name":"` + tool + `","arguments":"` + args + `"}]},{"text":"done"}]}`
}

// command runs reel with args in tmp and returns its stderr; ok means it
// exited non-zero, as a refused input must.
func command(args ...string) func(t *testing.T, tmp string) (string, bool) {
	return func(t *testing.T, tmp string) (string, bool) {
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "$TMP", tmp)
		}
		cmd := exec.Command(reelBin, args...)
		cmd.Dir = tmp
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return strings.TrimSpace(errb.String() + out.String()), err != nil
	}
}

// withFile writes name into tmp before running next.
func withFile(name, content string, next func(t *testing.T, tmp string) (string, bool)) func(t *testing.T, tmp string) (string, bool) {
	return func(t *testing.T, tmp string) (string, bool) {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return next(t, tmp)
	}
}

// withSessions makes a store database name in tmp (as reel acp --store
// sqlite does) holding one short completed session per id, before running
// next.
func withSessions(name string, ids []string, next func(t *testing.T, tmp string) (string, bool)) func(t *testing.T, tmp string) (string, bool) {
	return func(t *testing.T, tmp string) (string, bool) {
		ctx := context.Background()
		st, err := sqlite.Open(filepath.Dir(filepath.Join(tmp, name)), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var events []sessionlog.Event
		for _, l := range []string{ts, um, te2} {
			e, err := sessionlog.DecodeEvent([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		for _, id := range ids {
			w, err := st.Create(ctx, sessionlog.NewHeader(id, 1, "/w"))
			if err == nil {
				err = w.Append(ctx, events...)
			}
			if err == nil {
				err = w.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return next(t, tmp)
	}
}

const hdr = `{"type":"session","version":0,"id":"s","createdAt":1,"cwd":"/w"}` + "\n"

func lines(ls ...string) string { return hdr + strings.Join(ls, "\n") + "\n" }

const (
	ts  = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`
	um  = `{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"role":"user"},"surfaceOp":"append"}`
	te2 = `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`
)

func badCases() []badCase {
	return []badCase{
		{area: "wire", name: "malformed JSON frame", frame: `{bad json`, want: `"code":-32700`},
		{area: "wire", name: "a JSON array frame (batch)", frame: `[1,2]`, want: `"code":-32600`},
		{area: "wire", name: "a JSON string frame", frame: `"hello"`, want: `a frame must be one JSON-RPC object`},
		{area: "wire", name: "jsonrpc is not 2.0", frame: `{"jsonrpc":"1.0","id":3,"method":"initialize"}`, want: `"jsonrpc\" must be \"2.0\"`},
		{area: "wire", name: "request without a method", frame: `{"jsonrpc":"2.0","id":3}`, want: `Invalid request: no method`},
		{area: "wire", name: "an object as the request id", frame: `{"jsonrpc":"2.0","id":{"&":1},"method":"session/load","params":{"sessionId":"x","cwd":"/","mcpServers":[]}}`, want: `must be a string, a number or null`},
		{area: "wire", name: "unknown method", frame: `{"jsonrpc":"2.0","id":3,"method":"no/such"}`, want: `"code":-32601`},
		{area: "wire", name: "wrong params type", frame: `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":5}}`, want: `"code":-32602`},
		{area: "wire", name: "relative cwd", frame: `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"rel/dir","mcpServers":[]}}`, want: `must be an absolute path`},
		{area: "wire", name: "session/new with additionalDirectories", frame: `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"additionalDirectories":["/srv"]}}`, want: `additionalDirectories is not supported by reel (got 1)`},
		{area: "wire", name: "prompt for an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"x"}]}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "prompt that is not a content list", frame: `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":"x"}}`, want: `"code":-32602`},
		{area: "wire", name: "set_mode with an unknown mode", frame: `{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"god-mode"}}`, want: `unknown mode \"god-mode\"`},
		{area: "wire", name: "set_mode on an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"read-only"}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "load an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"nope","cwd":"/tmp","mcpServers":[]}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "load a session id that is a path", frame: `{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"../../etc/passwd","cwd":"/tmp","mcpServers":[]}}`, want: `"code":-32602`},
		{area: "wire", name: "load a session that is already open", frame: `{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s1","cwd":"/tmp","mcpServers":[]}}`, want: `already open in this process`},
		{area: "wire", name: "close an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"nope"}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "list with a cursor reel did not make", frame: `{"jsonrpc":"2.0","id":3,"method":"session/list","params":{"cursor":"bogus"}}`, want: `cursor \"bogus\" is not one reel made`},
		{area: "wire", name: "delete an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/delete","params":{"sessionId":"nope"}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "delete a session id that is a path", frame: `{"jsonrpc":"2.0","id":3,"method":"session/delete","params":{"sessionId":"../../etc/passwd"}}`, want: `invalid session id`},
		{area: "wire", name: "delete a live session", frame: `{"jsonrpc":"2.0","id":3,"method":"session/delete","params":{"sessionId":"s1"}}`, want: `close it first`},
		{area: "wire", name: "an MCP server of the ACP transport (not offered)", frame: `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"type":"acp","name":"x","id":"y"}]}}`, want: `reel connects stdio, http and sse MCP servers only`},
		{area: "wire", name: "an MCP server without a name", frame: `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[{"name":"","command":"x","args":[],"env":[]}]}}`, want: `the server needs a name`},
		{area: "wire", name: "steering an idle session", frame: `{"jsonrpc":"2.0","id":3,"method":"_session/steering","params":{"sessionId":"s1","prompt":[{"type":"text","text":"also"}]}}`, want: `no turn is running`},
		{area: "wire", name: "steering an unknown session", frame: `{"jsonrpc":"2.0","id":3,"method":"_session/steering","params":{"sessionId":"nope","prompt":[{"type":"text","text":"also"}]}}`, want: `unknown session \"nope\"`},
		{area: "wire", name: "steering with an image", frame: `{"jsonrpc":"2.0","id":3,"method":"_session/steering","params":{"sessionId":"s1","prompt":[{"type":"image","mimeType":"image/png","data":"AA=="}]}}`, want: `takes text blocks and embedded text resources only`},
		{area: "wire", name: "the internal queued-prompt method", frame: `{"jsonrpc":"2.0","id":3,"method":"_reel/queued_prompt","params":{"requestId":"3","request":{}}}`, want: `"code":-32601`},
		{area: "wire", name: "an unknown config option", frame: `{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"temperature","value":"1"}}`, want: `unknown config option \"temperature\"`},
		{area: "wire", name: "the mode option with an unknown mode", frame: `{"jsonrpc":"2.0","id":3,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"mode","value":"god-mode"}}`, want: `unknown mode \"god-mode\"`},
		{area: "log", name: "legacy request/header-delta event", run: withFile("l.jsonl", lines(ts, `{"type":"request/header-delta","seq":1,"time":1,"data":{}}`), command("log", "verify", "l.jsonl")), want: `l.jsonl:3: seq 1 (request/header-delta): sessionlog: legacy request-header encoding refused`},
		{area: "log", name: "header with reason fallback", run: withFile("l.jsonl", lines(ts, `{"type":"request/header","seq":1,"time":1,"data":{"header":{"config":{}},"reason":"fallback"}}`), command("log", "verify", "l.jsonl")), want: `l.jsonl:3: seq 1 (request/header): sessionlog: legacy request-header encoding refused`},
		{area: "log", name: "unknown header reason", run: withFile("l.jsonl", lines(ts, `{"type":"request/header","seq":1,"time":1,"data":{"header":{"config":{}},"reason":"whim"}}`), command("log", "verify", "l.jsonl")), want: `unknown request header reason "whim"`},
		{area: "log", name: "format version 1", run: withFile("l.jsonl", `{"type":"session","version":1,"id":"s","createdAt":1}`+"\n", command("log", "verify", "l.jsonl")), want: `l.jsonl:1: sessionlog: unsupported session format version 1`},
		{area: "log", name: "no header line", run: withFile("l.jsonl", ts+"\n", command("log", "verify", "l.jsonl")), want: `l.jsonl:1: sessionlog: invalid header`},
		{area: "log", name: "createdAt not an integer", run: withFile("l.jsonl", `{"type":"session","version":0,"id":"s","createdAt":1.5}`+"\n", command("log", "verify", "l.jsonl")), want: `createdAt 1.5 is not a non-negative integer`},
		{area: "log", name: "surface event without surfaceOp", run: withFile("l.jsonl", lines(ts, `{"type":"user/message","seq":1,"time":1,"data":{"content":[],"role":"user"}}`), command("log", "verify", "l.jsonl")), want: `seq 1 (user/message): sessionlog: invalid event: surface event has no surfaceOp`},
		{area: "log", name: "sourceEventSeqs cites a later event", run: withFile("l.jsonl", lines(ts, um, `{"type":"assistant/message","seq":2,"time":1,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[]}},"sourceEventSeqs":[7],"surfaceOp":"append"}`), command("log", "verify", "l.jsonl")), want: `sourceEventSeqs cites 7, which is not an earlier event`},
		{area: "log", name: "replace range not on the surface", run: withFile("l.jsonl", lines(ts, um, `{"type":"user/message","seq":2,"time":1,"data":{"content":[],"role":"user"},"sourceEventSeqs":[0],"surfaceOp":{"op":"replace","start":0,"end":0}}`), command("log", "verify", "l.jsonl")), want: `replace start 0 is not on the surface`},
		{area: "log", name: "duplicate seq before the last turn/end", run: withFile("l.jsonl", lines(ts, ts, te2), command("log", "verify", "l.jsonl")), want: `l.jsonl:3: sessionlog: corrupt log`},
		{area: "log", name: "invalid JSON mid-file", run: withFile("l.jsonl", lines(ts, `{"type":`, te2), command("log", "verify", "l.jsonl")), want: `l.jsonl:3: sessionlog: corrupt log`},
		{area: "log", name: "a torn final line loads (dropped)", run: withFile("l.jsonl", hdr+ts+"\n"+`{"type":"user/mes`, command("log", "verify", "l.jsonl")), want: `torn tail at line 3`, loads: true},
		{area: "cli", name: "replay a corrupt log", run: withFile("l.jsonl", lines(ts, `{"type":`, te2), command("acp", "--replay", "l.jsonl", "--state-dir", "$TMP/st")), want: `--replay: l.jsonl:3: sessionlog: corrupt log`},
		{area: "cli", name: "replay a legacy log", run: withFile("l.jsonl", lines(ts, `{"type":"request/header-delta","seq":1,"time":1,"data":{}}`), command("acp", "--replay", "l.jsonl", "--state-dir", "$TMP/st")), want: `seq 1 (request/header-delta)`},
		{area: "cli", name: "unknown sandbox mode flag", run: command("acp", "--mode", "bogus"), want: `--mode "bogus": want read-only, workspace-write or danger-full-access`},
		{area: "cli", name: "negative --inline-bytes", run: command("acp", "--inline-bytes", "-1"), want: `--inline-bytes -1: want 0 (the default) or more`},
		{area: "cli", name: "unknown --image-input", run: command("acp", "--image-input", "maybe"), want: `--image-input "maybe": want auto, on or off`},
		{area: "cli", name: "a prompt image that is not base64", run: acpFrames([]string{"--state-dir", "$TMP/st", "--session-id", "s1", "--replay", "$FIXTURES/text-turn/session.jsonl"}, initFrame, newFrame, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}}`), want: `prompt[0]: the image data is not valid base64`, loads: true},
		{area: "cli", name: "log request without a step", run: withFile("l.jsonl", lines(ts, um, te2), command("log", "request", "l.jsonl", "--turn", "1")), want: `reel log request FILE --turn T --step S`},
		{area: "cli", name: "convert onto an existing file", run: withFile("l.jsonl", lines(ts, um, te2), command("log", "convert", "l.jsonl", "l.jsonl")), want: `already exists; refusing to overwrite it`},
		{area: "cli", name: "log show on a database of several sessions", run: withSessions("st/sessions.db", []string{"s1", "s2"}, command("log", "show", "st/sessions.db")), want: `st/sessions.db holds 2 sessions (s1, s2); pass --session ID to pick one`},
		{area: "cli", name: "log show --session the database lacks", run: withSessions("st/sessions.db", []string{"s1", "s2"}, command("log", "show", "st/sessions.db", "--session", "s9")), want: `st/sessions.db: no session "s9"`},
		{area: "cli", name: "convert to an unknown extension", run: withFile("l.jsonl", lines(ts, um, te2), command("log", "convert", "l.jsonl", "out.txt")), want: `unknown output extension ".txt"; want one of .jsonl, .jsonl.zst, .db, .sqlite`},
		{area: "cli", name: "log list of a log file", run: withFile("l.jsonl", lines(ts, um, te2), command("log", "list", "l.jsonl")), want: `is neither a database (.db, .sqlite) nor a directory`},
		{area: "cli", name: "log command with an unknown flag", run: withFile("l.jsonl", lines(ts, um, te2), command("log", "show", "l.jsonl", "--bogus")), want: `flag provided but not defined: -bogus (reel log show -h shows the flags)`},
		{area: "cli", name: "reel acp -h", run: command("acp", "-h"), want: `usage: reel acp [flags]`, loads: true},
		{area: "cli", name: "reel acp with an unknown flag", run: command("acp", "--frobnicate"), want: `flag provided but not defined: -frobnicate (reel acp -h lists the flags)`},
		{area: "cli", name: "reel acp --standin with a missing script", run: command("acp", "--standin", "nope.json", "--state-dir", "$TMP/st"), want: `--standin: standin: load script: open nope.json`},
		{area: "cli", name: "reel acp --base-url that is not a URL", run: command("acp", "--base-url", "api.example.com", "--state-dir", "$TMP/st"), want: `--base-url "api.example.com": want an absolute URL`},
		{area: "cli", name: "reel acp --standin with --replay", run: command("acp", "--standin", "s.json", "--replay", "l.jsonl", "--state-dir", "$TMP/st"), want: `--standin and --replay both name the model; give one`},
		{area: "cli", name: "reel acp without a key for a remote endpoint (stderr at start-up)", run: acpFrames([]string{"--state-dir", "$TMP/st"}), want: `reel acp: no API key for --provider deepseek`, loads: true},
		{area: "cli", name: "session/new without a key for a remote endpoint", run: acpFrames([]string{"--state-dir", "$TMP/st"}, initFrame, newFrame), want: `"code":-32000`, loads: true},
		{area: "cli", name: "session/new with an id whose log exists (--session-id reused)", run: withFile("st/s1.jsonl", hdr, acpFrames([]string{"--state-dir", "$TMP/st", "--session-id", "s1", "--replay", "$FIXTURES/text-turn/session.jsonl"}, initFrame, newFrame)), want: `session s1 already exists`, loads: true},
		{area: "cli", name: "a prompt the model endpoint refuses", run: acpFrames([]string{"--state-dir", "$TMP/st", "--session-id", "s1", "--replay", "$FIXTURES/provider-error/session.jsonl"}, initFrame, newFrame, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"This prompt meets a provider error (HTTP 401)."}]}}`), want: `"message":"model call failed: simulated provider error (HTTP 401)"`, loads: true},
		{area: "hooks", name: "--hooks file that is not JSON", run: withFile("h.json", `{"hooks":`, acpFrames([]string{"--state-dir", "$TMP/st", "--hooks", "h.json"})), want: `h.json:1: config is not JSON`, loads: true},
		{area: "hooks", name: "--hooks file that does not exist", run: acpFrames([]string{"--state-dir", "$TMP/st", "--hooks", "nope.json"}), want: `open nope.json: no such file or directory`, loads: true},
		{area: "hooks", name: "Claude Code matcher that is not a regular expression", run: withFile("h.json", `{"hooks":{"PreToolUse":[{"matcher":"[","hooks":[{"type":"command","command":"exit 2"}]}]}}`, acpFrames([]string{"--state-dir", "$TMP/st", "--hooks", "h.json"})), want: `invalid claude-code regex matcher \"[\" on event \"PreToolUse\"`, loads: true},
		{area: "hooks", name: "Codex matcher with a look-behind (not in Go's regexp)", run: withFile("h.json", `{"hooks":{"PostToolUse":[{"matcher":"(?<=x)bash","hooks":[{"type":"command","command":"exit 2"}]}]}}`, acpFrames([]string{"--state-dir", "$TMP/st", "--codex-hooks", "h.json"})), want: `invalid codex regex matcher`, loads: true},
		{area: "hooks", name: "a hook type reel does not run (http), shown at the first prompt", run: withFile("h.json", `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"http://x"}]}]}}`, acpFrames([]string{"--state-dir", "$TMP/st", "--session-id", "s1", "--replay", "$FIXTURES/text-turn/session.jsonl", "--hooks", "h.json"}, initFrame, newFrame, promptFrame)), want: `skipping unsupported \"http\" hook on Stop (only command hooks run)`, loads: true},
		{area: "hooks", name: "a hook printing malformed JSON (read as text; the prompt goes on, the next hook runs)", run: withFile("h.json", `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo '{\"decision\": bl'"},{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"HOOKS-RAN\"}}'"}]}]}}`, acpFrames([]string{"--state-dir", "$TMP/st", "--mode", "danger-full-access", "--session-id", "s1", "--replay", "$FIXTURES/text-turn/session.jsonl", "--hooks", "h.json"}, initFrame, newFrame, promptFrame)), want: `[hooks-claude-code] HOOKS-RAN`, loads: true},
		{area: "hooks", name: "a hook answering for another event (its permissionDecision ignored, its top-level decision kept)", run: withFile("h.json", `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo '{\"decision\":\"block\",\"reason\":\"top-level block\",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}]}]}}`, acpFrames([]string{"--state-dir", "$TMP/st", "--mode", "danger-full-access", "--session-id", "s1", "--replay", "$FIXTURES/text-turn/session.jsonl", "--hooks", "h.json"}, initFrame, newFrame, promptFrame)), want: `The prompt was blocked by a UserPromptSubmit hook: top-level block`, loads: true},
		{area: "tools", name: "job_output for a job id that does not exist", run: withFile("s.json", standinCalling("job_output", `{\"job_id\":\"bash-9\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSFrame, promptWSFrame))), want: `Error: unknown job bash-9`, loads: true},
		{area: "tools", name: "web_fetch of a file: URL", run: withFile("s.json", standinCalling("web_fetch", `{\"url\":\"file:///etc/passwd\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSFrame, promptWSFrame))), want: `unsupported URL scheme \"file:\" (only http and https are allowed)`, loads: true},
		{area: "tools", name: "skill with a name no skill has", run: withFile("s.json", standinCalling("skill", `{\"name\":\"nope\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSFrame, promptWSFrame))), want: `is unknown or no longer available`, loads: true},
		{area: "tools", name: "SKILL.md whose frontmatter never closes (shown at the first prompt; the skill is skipped)", run: withFile("ws/.reel/skills/bad/SKILL.md", "---\nname: bad\ndescription: never closed\n", withFile("s.json", standinCalling("skill", `{\"name\":\"bad\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSFrame, promptWSFrame)))), want: `skill skipped: $TMP/ws/.reel/skills/bad/SKILL.md`, loads: true},
		{area: "cli", name: "unknown command", run: command("frobnicate"), want: `unknown command "frobnicate"`},
		{area: "fixture", name: "unknown op in input.json", run: withFile("fx/bad/input.json", `{"steps":[{"op":"dance"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "bad")), want: `fx/bad/input.json: steps[0].op: unknown op "dance"`},
		{area: "fixture", name: "unknown step field", run: withFile("fx/bad/input.json", `{"steps":[{"op":"prompt","txt":"hi"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "bad")), want: `unknown field "txt"`},
		{area: "fixture", name: "waitForFile path escaping the cwd", run: withFile("fx/bad/input.json", `{"steps":[{"op":"waitForFile","path":"../../etc/passwd"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "bad")), want: `steps[0].path`},
		{area: "fixture", name: "unknown stand-in MCP mode in input.json", run: withFile("fx/bad/input.json", `{"mcpServers":[{"name":"t","transport":"stdio","mode":"evil"}],"steps":[{"op":"initialize"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "bad")), want: `unknown stand-in MCP mode "evil"`},
		{area: "fixture", name: "unknown override kind", run: withFile("fx/bad/replay.override.json", `[{"kind":"explode"}]`, withFile("fx/bad/input.json", `{"steps":[{"op":"initialize"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "bad"))), want: `unknown kind "explode"`},
		{area: "cli", name: "snapshot -run matching no scenario", run: withFile("fx/ok/input.json", `{"steps":[{"op":"initialize"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps", "-run", "nosuchthing")), want: `-run "nosuchthing" does not match the only scenario in fx`},
		{area: "cli", name: "snapshot --shard out of range", run: command("snapshot", "--shard", "0/3"), want: `--shard "0/3": K must be between 1 and N (3)`},
		{area: "cli", name: "snapshot with an unknown flag", run: command("snapshot", "-x"), want: "flag provided but not defined: -x (run `reel snapshot -h` for the flags)"},
		{area: "cli", name: "standin without a script", run: command("standin"), want: "reel standin --script FILE"},
		{area: "cli", name: "mcp-standin with an unknown mode", run: command("mcp-standin", "nope"), want: `unknown mode "nope"`},
		{area: "fixture", name: "orphan scenario folder", run: withFile("fx/orphan/notes.txt", "x", withFile("fx/ok/input.json", `{"steps":[{"op":"initialize"}]}`, command("snapshot", "--fixtures", "fx", "--snapshots", "snaps"))), want: `fx/orphan: orphan scenario folder (no input.json)`},
		{area: "tools", name: "web_fetch of the cloud metadata service by a decimal spelling of its address", run: withFile("s.json", standinCalling("web_fetch", `{\"url\":\"http://2852039166/latest/meta-data/\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSFrame, promptWSFrame))), want: `Error: 169.254.169.254 is a link-local address`, loads: true},
		{area: "log", name: "message text with terminal escapes (OSC 52, CR, C1 CSI, bidi override) in reel log show", run: withFile("l.jsonl", lines(ts, `{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi\u001b]52;c;eA==\u0007\r\u009b2J\u202e!"}],"role":"user"},"surfaceOp":"append"}`, te2), command("log", "show", "l.jsonl")), want: `hi\x{1b}]52;c;eA==\x{07}\x{0d}\u{9b}2J\u{202e}!`, loads: true},
		{area: "tools", name: "MCP tool arguments naming a key twice (refused before asking; the server is not called)", run: withFile("s.json", standinCalling("mcp__r__record", `{\"cmd\":\"echo SAFE\",\"cmd\":\"rm -rf ~\"}`), withFile("ws/.keep", "", acpFrames([]string{"--state-dir", "$TMP/st", "--standin", "s.json", "--session-id", "s-ws"}, initFrame, newWSRecordFrame(), promptWSFrame))), want: `duplicate field \"cmd\"`, loads: true},
	}
}

// logTime is the time field of a log line on stderr.
var logTime = regexp.MustCompile(`(?m)^time=\S+ `)

// TestBadInputTable runs every hostile input through the real binary: each
// gets the documented error, wire cases leave the agent serving, and the
// table in docs/bad-input.md is what the binary prints today
// (REEL_WRITE_DOC=1 rewrites it).
func TestBadInputTable(t *testing.T) {
	cases := badCases()
	if len(cases) < 30 {
		t.Fatalf("the table has %d cases; keep at least 30", len(cases))
	}
	var doc strings.Builder
	doc.WriteString("# Bad input: what a user sees\n\nGenerated by `REEL_WRITE_DOC=1 go test -run TestBadInputTable ./cmd/reel/` and checked by the same test\n(temporary directories appear as `$TMP`). Every wire case is followed by a valid request, which the\nagent still answers: the process survives every hostile frame.\n\n| # | area | input | what the user sees |\n|---|---|---|---|\n")
	for i, c := range cases {
		t.Run(c.area+"/"+c.name, func(t *testing.T) {
			tmp := t.TempDir()
			run := c.run
			if c.area == "wire" {
				run = wire(c.frame)
			}
			got, ok := run(t, tmp)
			got = strings.ReplaceAll(got, tmp, "$TMP")
			// Log lines carry their time; the table must not.
			got = logTime.ReplaceAllString(got, "")
			if c.area == "wire" && !ok {
				t.Fatalf("the agent stopped serving after %s", c.frame)
			}
			if c.area != "wire" && ok == c.loads {
				t.Fatalf("wrong exit status (tolerated: %v); output:\n%s", c.loads, got)
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("output does not contain %q:\n%s", c.want, got)
			}
			input := c.frame
			if input == "" {
				input = c.name
			} else {
				input = c.name + ": `" + strings.ReplaceAll(input, "|", `\|`) + "`"
			}
			shown := firstRelevantLine(got, c.want)
			fmt.Fprintf(&doc, "| %d | %s | %s | `%s` |\n", i+1, c.area, input, strings.ReplaceAll(shown, "|", `\|`))
		})
	}
	path := filepath.Join("..", "..", "docs", "bad-input.md")
	if os.Getenv("REEL_WRITE_DOC") == "1" {
		if err := os.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || string(old) != doc.String() {
		t.Errorf("docs/bad-input.md is stale (rewrite it with REEL_WRITE_DOC=1): %v", err)
	}
}

// firstRelevantLine picks the line of output that holds the fragment.
func firstRelevantLine(out, want string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, want) {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(out)
}

// acpFrames runs reel acp with args in tmp, in an environment without any
// key variable, sending frames on stdin; it returns stderr and stdout and
// whether it exited non-zero. $TMP and $FIXTURES in args are expanded.
func acpFrames(args []string, frames ...string) func(t *testing.T, tmp string) (string, bool) {
	return func(t *testing.T, tmp string) (string, bool) {
		fixtures, err := filepath.Abs(filepath.Join("..", "..", "fixtures"))
		if err != nil {
			t.Fatal(err)
		}
		full := []string{"acp", "--log-level", "error"}
		for _, a := range args {
			full = append(full, strings.NewReplacer("$TMP", tmp, "$FIXTURES", fixtures).Replace(a))
		}
		cmd := exec.Command(reelBin, full...)
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "LANG=C"}
		in := ""
		if len(frames) > 0 {
			in = strings.ReplaceAll(strings.Join(frames, "\n")+"\n", "$TMP", tmp)
		}
		cmd.Stdin = strings.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		return strings.TrimSpace(errb.String() + out.String()), err != nil
	}
}
