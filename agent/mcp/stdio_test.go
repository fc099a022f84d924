package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reel-agent/reel/agent/mcp"
	"github.com/reel-agent/reel/agent/mcp/mcptest"
	"github.com/reel-agent/reel/agent/tools"
)

// toolsModeNames are the reel names of ModeTools' tools for a server "ts".
var toolsModeNames = []string{
	"mcp__ts__add", "mcp__ts__big", "mcp__ts__echo", "mcp__ts__fail", "mcp__ts__getenv", "mcp__ts__image", "mcp__ts__mixed",
	"mcp__ts__pid", "mcp__ts__protoerr", "mcp__ts__roots", "mcp__ts__slow", "mcp__ts__spawn", "mcp__ts__stats", "mcp__ts__touch",
}

// call runs the tool called name of set.
func call(t *testing.T, set *mcp.Set, name, args string) tools.Result {
	t.Helper()
	tool, ok := set.Tool(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	res, err := tool.Run(context.Background(), &tools.Env{Cwd: t.TempDir()}, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res
}

func TestConnectStdioListsTools(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	var names []string
	for _, tool := range set.Tools() {
		names = append(names, tool.Name())
	}
	if !slices.Equal(names, toolsModeNames) {
		t.Errorf("tool names = %q, want %q", names, toolsModeNames)
	}
	ts, err := tools.NewSet(set.Tools()...)
	if err != nil {
		t.Fatalf("the MCP tools do not make a tools.Set: %v", err)
	}
	_ = ts
	echo, _ := set.Tool("mcp__ts__echo")
	sc := echo.Schema()
	if sc.Name != "mcp__ts__echo" || sc.Description != "Echo the text back." {
		t.Errorf("schema = %+v", sc)
	}
	if want := `{"properties":{"text":{"type":"string"}},"type":"object"}`; string(sc.Parameters) != want {
		t.Errorf("parameters = %s, want %s", sc.Parameters, want)
	}
	if echo.Server() != "ts" || echo.RemoteName() != "echo" || echo.Title() != "ts: echo" || echo.Kind() != tools.KindOther {
		t.Errorf("server %q remote %q title %q kind %q", echo.Server(), echo.RemoteName(), echo.Title(), echo.Kind())
	}
	infos := set.Servers()
	if len(infos) != 1 {
		t.Fatalf("servers = %+v", infos)
	}
	info := infos[0]
	if info.Name != "ts" || info.Transport != mcp.TransportStdio || info.Implementation != "reel-testserver" ||
		info.Version != "1.0.0" || info.ProtocolVersion != mcp.ProtocolVersion || info.Instructions != "Test server (tools)." ||
		info.PID <= 0 || !slices.Equal(info.Tools, toolsModeNames) {
		t.Errorf("server info = %+v", info)
	}
	if r := set.Renames(); len(r) != 0 {
		t.Errorf("renames = %+v, want none", r)
	}
}

func TestCallResults(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	pngNote := "[image: image/png, " + strconv.Itoa(len(mcptest.PNG)) + " bytes; binary data not shown]"
	tests := []struct {
		name, tool, args string
		want             string
		isError          bool
	}{
		{name: "echo", tool: "echo", args: `{"text":"hello, world"}`, want: "hello, world"},
		{name: "empty args", tool: "stats", args: ``, want: "started=0 cancelled=0"},
		{name: "null args", tool: "stats", args: `null`, want: "started=0 cancelled=0"},
		{name: "add with structured content", tool: "add", args: `{"a":2,"b":3.5}`, want: "5.5\n[structured content]\n{\"sum\":5.5}"},
		{name: "isError carried over", tool: "fail", args: `{"message":"it broke"}`, want: "it broke", isError: true},
		{name: "JSON-RPC error", tool: "protoerr", args: `{}`, want: `The MCP server "ts" answered the call of "protoerr" with an error: protoerr always fails`, isError: true},
		{name: "image", tool: "image", args: `{}`, want: "here is the image\n" + pngNote},
		{name: "mixed", tool: "mixed", args: `{}`, want: "first\n" + pngNote + "\n" +
			"[audio: audio/wav, 16 bytes; binary data not shown]\n" +
			"[resource link: readme (The readme) <file:///docs/readme.md>, text/markdown, 2048 bytes]\nWhat to read first.\n" +
			"[resource: <mem://notes.txt>, text/plain]\nembedded text\n" +
			"[resource: <mem://blob.bin>, application/octet-stream, 5 bytes; binary data not shown]\n" +
			"[structured content]\n{\"answer\":42}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, set, "mcp__ts__"+tt.tool, tt.args)
			if res.Text != tt.want || res.IsError != tt.isError {
				t.Errorf("result = %q (isError %v), want %q (isError %v)", res.Text, res.IsError, tt.want, tt.isError)
			}
			if res.Kind != tools.KindOther || res.Title != "ts: "+tt.tool {
				t.Errorf("kind %q title %q", res.Kind, res.Title)
			}
			if b64 := base64.StdEncoding.EncodeToString(mcptest.PNG); strings.Contains(res.Text, b64) || strings.Contains(res.Text, b64[:16]) {
				t.Errorf("the image's base64 reached the text: %q", res.Text)
			}
		})
	}
}

func TestCallResultIsCapped(t *testing.T) {
	set := mustConnect(t, mcp.Options{MaxResultBytes: 2000}, stdioServer(t, "ts", mcptest.ModeTools))
	tool, _ := set.Tool("mcp__ts__big")
	for _, tt := range []struct {
		env   *tools.Env
		limit int
	}{
		{env: nil, limit: 2000},
		{env: &tools.Env{Cwd: "/", MaxInlineBytes: 5000}, limit: 5000},
	} {
		res, err := tool.Run(context.Background(), tt.env, json.RawMessage(`{"bytes":300000}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) > tt.limit || len(res.Text) < tt.limit-100 {
			t.Errorf("limit %d: text is %d bytes", tt.limit, len(res.Text))
		}
		if !strings.HasPrefix(res.Text, "line 0\nline 1\n") || !strings.Contains(res.Text, "bytes omitted: the MCP result was 300000 bytes, more than the "+strconv.Itoa(tt.limit)+"-byte limit") {
			t.Errorf("limit %d: text = %q", tt.limit, res.Text)
		}
	}
}

func TestCallArgumentsAreChecked(t *testing.T) {
	set := mustConnect(t, mcp.Options{MaxArgBytes: 100}, stdioServer(t, "ts", mcptest.ModeTools))
	tool, _ := set.Tool("mcp__ts__echo")
	for _, args := range []string{`[1,2]`, `"text"`, `42`, `{"text":`, `{"text":"a"} {}`, `{"text":"` + strings.Repeat("x", 100) + `"}`, "{\"text\":\"\xff\"}", `{"text":"a","text":"b"}`, `{"text":"a","TEXT":"b"}`} {
		res, err := tool.Run(context.Background(), nil, json.RawMessage(args))
		var ae *tools.ArgError
		if !errors.Is(err, tools.ErrInvalidArgs) || !errors.As(err, &ae) || ae.Tool != "mcp__ts__echo" {
			t.Errorf("args %q: err = %v (result %+v), want an ArgError", args, err, res)
		}
	}
	// The server is still fine.
	if res := call(t, set, "mcp__ts__echo", ` {"text":"ok"} `); res.Text != "ok" {
		t.Errorf("echo = %+v", res)
	}
}

func TestCancelSlowCall(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	testCancel(t, set, "ts", func() string { return call(t, set, "mcp__ts__stats", `{}`).Text })
}

// testCancel cancels a running slow call and checks it returns promptly
// and the server saw the cancellation.
func testCancel(t *testing.T, set *mcp.Set, server string, stats func() string) {
	t.Helper()
	slow, _ := set.Tool("mcp__" + server + "__slow")
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		res tools.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := slow.Run(ctx, nil, json.RawMessage(`{}`))
		done <- outcome{res, err}
	}()
	waitFor(t, "the server to start slow", func() bool { return strings.HasPrefix(stats(), "started=1 ") })
	cancel()
	start := time.Now()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("slow did not return within 5s of its cancel")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("slow returned %v after its cancel", d)
	}
	if !errors.Is(o.err, context.Canceled) || !o.res.IsError || !strings.Contains(o.res.Text, "cancelled") {
		t.Errorf("cancelled slow = %+v, %v", o.res, o.err)
	}
	waitFor(t, "the server to see the cancellation", func() bool { return stats() == "started=1 cancelled=1" })
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFailuresAreReportedPerServer(t *testing.T) {
	before := children(t)
	missing := mcp.ServerConfig{Name: "missing", Transport: mcp.TransportStdio, Command: "reel-no-such-mcp-server"}
	absent := mcp.ServerConfig{Name: "absent", Transport: mcp.TransportStdio, Command: filepath.Join(t.TempDir(), "nope")}
	rec := newRecorder()
	set, err := connect(t, mcp.Options{Logger: slogOf(rec), ConnectTimeout: 500 * time.Millisecond},
		missing,
		stdioServer(t, "dies", mcptest.ModeExitOnInit),
		stdioServer(t, "ts", mcptest.ModeTools),
		stdioServer(t, "hangs", mcptest.ModeHang),
		absent,
	)
	var ce *mcp.ConnectError
	if !errors.As(err, &ce) || len(ce.Failures) != 4 {
		t.Fatalf("err = %v, want 4 failures", err)
	}
	if names := set.Servers(); len(names) != 1 || names[0].Name != "ts" || len(set.Tools()) != len(toolsModeNames) {
		t.Errorf("connected = %+v", names)
	}
	byName := map[string]*mcp.ServerError{}
	for _, f := range ce.Failures {
		byName[f.Server] = f
	}
	if f := byName["missing"]; f.Stage != mcp.StageStart || !errors.Is(f, exec.ErrNotFound) || f.Transport != mcp.TransportStdio {
		t.Errorf("missing: %v (stage %q)", f, f.Stage)
	}
	if f := byName["absent"]; f.Stage != mcp.StageStart || !errors.Is(f, os.ErrNotExist) {
		t.Errorf("absent: %v (stage %q)", f, f.Stage)
	}
	if f := byName["dies"]; f.Stage != mcp.StageInitialize || f.Exit != "exit status 3" || !strings.Contains(f.Stderr, "dying during initialize") ||
		!strings.Contains(f.Error(), `mcp: server "dies": initialize failed: `) || !strings.Contains(f.Error(), "the server exited: exit status 3") {
		t.Errorf("dies: %v (stage %q exit %q stderr %q)", f, f.Stage, f.Exit, f.Stderr)
	}
	if f := byName["hangs"]; f.Stage != mcp.StageInitialize || !errors.Is(f, mcp.ErrTimeout) || !errors.Is(f, context.DeadlineExceeded) || f.Exit != "" {
		t.Errorf("hangs: %v (stage %q exit %q)", f, f.Stage, f.Exit)
	}
	// The failed servers' processes are reaped: no child is left but ts
	// and the reaper of its process group (see startReaper).
	left := slices.DeleteFunc(children(t), func(pid int) bool { return slices.Contains(before, pid) })
	var reapers []int
	left = slices.DeleteFunc(left, func(pid int) bool {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		pgid, _ := syscall.Getpgid(pid)
		if strings.Contains(string(cmdline), "kill -KILL 0") && pgid == set.Servers()[0].PID {
			reapers = append(reapers, pid)
			return true
		}
		return false
	})
	if len(left) != 1 || left[0] != set.Servers()[0].PID || len(reapers) != 1 {
		t.Errorf("children left = %v and reapers %v, want only ts (%d) and its reaper", left, reapers, set.Servers()[0].PID)
	}
	if len(rec.messages("mcp: server failed to connect")) != 4 {
		t.Errorf("log:\n%s", rec.all())
	}
}

func TestConnectContextEndsConnecting(t *testing.T) {
	before := children(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	set, err := mcp.Connect(ctx, []mcp.ServerConfig{stdioServer(t, "hangs", mcptest.ModeHang)}, mcp.Options{})
	if set == nil {
		t.Fatal("nil Set")
	}
	t.Cleanup(func() { _ = set.Close() })
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Connect took %v", d)
	}
	f := serverError(t, err)
	if !errors.Is(f, context.DeadlineExceeded) || errors.Is(f, mcp.ErrTimeout) || !strings.Contains(f.Error(), "abandoned") {
		t.Errorf("failure = %v", f)
	}
	// No child is left but the server's reaper (see startReaper), which
	// ends by itself once the stop closed its pipe and is reaped by a
	// goroutine: on a loaded machine it can still be there (or a zombie)
	// when Connect returns, so it is waited for.
	for _, pid := range slices.DeleteFunc(children(t), func(pid int) bool { return slices.Contains(before, pid) }) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		_, after, _ := strings.Cut(string(stat), ") ")
		if !strings.Contains(string(cmdline), "kill -KILL 0") && !strings.HasPrefix(after, "Z") {
			t.Errorf("child %d left: %q (stat %q)", pid, cmdline, stat)
			continue
		}
		waitGone(t, pid)
	}
	// The connections of a Connect that returned do not depend on its ctx.
	ctx2, cancel2 := context.WithCancel(context.Background())
	set2, err := mcp.Connect(ctx2, []mcp.ServerConfig{stdioServer(t, "ts", mcptest.ModeTools)}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set2.Close()
	cancel2()
	if res := call(t, set2, "mcp__ts__echo", `{"text":"still here"}`); res.Text != "still here" {
		t.Errorf("after ctx ended: %+v", res)
	}
}

func TestStderrIsBounded(t *testing.T) {
	rec := newRecorder()
	set := mustConnect(t, mcp.Options{Logger: slogOf(rec)}, stdioServer(t, "flood", mcptest.ModeFlood))
	if res := call(t, set, "mcp__flood__echo", `{"text":"alive"}`); res.Text != "alive" {
		t.Errorf("echo = %+v", res)
	}
	_ = set.Close()
	lines := rec.messages("mcp: server stderr")
	kept := 0
	for _, l := range lines {
		if l["mcpServer"] != "flood" {
			t.Fatalf("stderr record without the server: %v", l)
		}
		if len(l["line"]) > mcp.MaxStderrLineBytes {
			t.Errorf("a line of %d bytes was forwarded", len(l["line"]))
		}
		kept += len(l["line"]) + 1
	}
	if kept > mcp.MaxStderrBytes || kept < mcp.MaxStderrBytes-1024 {
		t.Errorf("forwarded %d bytes of stderr in %d lines, want about %d", kept, len(lines), mcp.MaxStderrBytes)
	}
	cut := rec.messages("mcp: server stderr was cut")
	if len(cut) != 1 || cut[0]["keptBytes"] != strconv.Itoa(mcp.MaxStderrBytes) ||
		cut[0]["droppedBytes"] != strconv.Itoa(mcptest.FloodBytes/1024*1024-mcp.MaxStderrBytes) {
		t.Errorf("cut records = %v", cut)
	}
	if len(rec.messages("mcp: server stderr limit reached; further output is dropped")) != 1 {
		t.Errorf("log:\n%.2000s", rec.all())
	}
}

func TestHostileToolNames(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "bad server/..", mcptest.ModeHostile))
	got := map[string]string{} // remote → reel name
	for _, tt := range set.Tools() {
		tool := tt.(*mcp.Tool)
		if !mcp.ValidName(tool.Name()) {
			t.Errorf("invalid name %q for %q", tool.Name(), tool.RemoteName())
		}
		got[tool.RemoteName()] = tool.Name()
		// The server is called by its own name.
		if res := call(t, set, tool.Name(), `{}`); res.Text != "called "+tool.RemoteName() {
			t.Errorf("%s: %q", tool.Name(), res.Text)
		}
	}
	long := strings.Repeat("a", 300)
	const prefix = "mcp__" + "bad_server___" + "__" // "bad server/.." sanitized
	want := map[string]string{
		"../../x":     prefix + "______x",
		"a.b":         prefix + "a_b",
		"a_b":         prefix + "a_b_" + hash8(t, set, "a_b"),
		"héllo✓wörld": prefix + "h_llo_w_rld",
		long:          prefix + strings.Repeat("a", 55-len(prefix)) + "_" + hash8(t, set, long),
	}
	for remote, name := range want {
		if got[remote] != name {
			t.Errorf("%.20q → %q, want %q", remote, got[remote], name)
		}
	}
	if len(got) != len(mcptest.HostileNames) {
		t.Errorf("names = %v", got)
	}
	reasons := map[string]string{}
	for _, r := range set.Renames() {
		if r.Server != "bad server/.." || r.Name != got[r.Tool] {
			t.Errorf("rename %+v", r)
		}
		reasons[r.Tool] = r.Reason
	}
	wantReasons := map[string]string{"../../x": "sanitized", "a.b": "sanitized", "a_b": "collision", "héllo✓wörld": "sanitized", long: "shortened"}
	if !maps(reasons, wantReasons) {
		t.Errorf("rename reasons = %v, want %v", reasons, wantReasons)
	}
}

// hash8 is the 8-digit suffix set gave to remote's name.
func hash8(t *testing.T, set *mcp.Set, remote string) string {
	t.Helper()
	for _, tt := range set.Tools() {
		if tool := tt.(*mcp.Tool); tool.RemoteName() == remote {
			n := tool.Name()
			return n[len(n)-8:]
		}
	}
	t.Fatalf("no tool %q", remote)
	return ""
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDuplicateNames(t *testing.T) {
	set, err := connect(t, mcp.Options{},
		stdioServer(t, "x.y", mcptest.ModeTools),
		stdioServer(t, "x_y", mcptest.ModeTools),
		stdioServer(t, "x_y", mcptest.ModeTools),
	)
	f := serverError(t, err)
	if f.Server != "x_y" || f.Stage != mcp.StageConfig || !errors.Is(f, mcp.ErrInvalidConfig) {
		t.Errorf("failure = %v", f)
	}
	// x_y's tools keep their literal names; x.y's sanitized ones, which
	// land on them, get hash suffixes, whatever the configuration order.
	seen := map[string]bool{}
	for _, tt := range set.Tools() {
		tool := tt.(*mcp.Tool)
		if seen[tool.Name()] {
			t.Errorf("duplicate %q", tool.Name())
		}
		seen[tool.Name()] = true
		literal := "mcp__x_y__" + tool.RemoteName()
		switch tool.Server() {
		case "x_y":
			if tool.Name() != literal {
				t.Errorf("x_y's %s is %q", tool.RemoteName(), tool.Name())
			}
		case "x.y":
			if !strings.HasPrefix(tool.Name(), literal+"_") || len(tool.Name()) != len(literal)+9 {
				t.Errorf("x.y's %s is %q", tool.RemoteName(), tool.Name())
			}
		}
	}
	if len(seen) != 2*len(toolsModeNames) || len(set.Renames()) != len(toolsModeNames) {
		t.Errorf("%d tools, renames %+v", len(seen), set.Renames())
	}
	for _, r := range set.Renames() {
		if r.Server != "x.y" || r.Reason != "collision" {
			t.Errorf("rename %+v", r)
		}
	}
	// Calls reach the right server.
	if res := call(t, set, "mcp__x_y__pid", `{}`); res.Text != strconv.Itoa(set.Servers()[1].PID) {
		t.Errorf("x_y pid = %q, servers %+v", res.Text, set.Servers())
	}
}

func TestCloseKillsTheServerAndItsChildren(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	pid := set.Servers()[0].PID
	if got := call(t, set, "mcp__ts__pid", `{}`).Text; got != strconv.Itoa(pid) {
		t.Fatalf("pid tool = %q, info %d", got, pid)
	}
	grandchild, err := strconv.Atoi(call(t, set, "mcp__ts__spawn", `{}`).Text)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(children(t), pid) {
		t.Fatalf("server %d is not a child", pid)
	}
	start := time.Now()
	if err := set.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if slices.Contains(children(t), pid) {
		t.Errorf("server %d is still a child (unreaped) after Close", pid)
	}
	waitGone(t, pid)
	waitGone(t, grandchild)
	if err := set.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	res, err := set.Tools()[0].Run(context.Background(), nil, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "is closed") {
		t.Errorf("after Close: %+v, %v", res, err)
	}
}

func TestCloseStubbornServer(t *testing.T) {
	set := mustConnect(t, mcp.Options{ShutdownGrace: 200 * time.Millisecond}, stdioServer(t, "st", mcptest.ModeStubborn))
	pid := set.Servers()[0].PID
	start := time.Now()
	_ = set.Close()
	if d := time.Since(start); d < 400*time.Millisecond || d > 3*time.Second {
		t.Errorf("Close took %v, want about two graces (400ms)", d)
	}
	waitGone(t, pid)
}

func TestCloseCancelsRunningCalls(t *testing.T) {
	set := mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	slow, _ := set.Tool("mcp__ts__slow")
	done := make(chan tools.Result, 1)
	go func() {
		res, _ := slow.Run(context.Background(), nil, json.RawMessage(`{}`))
		done <- res
	}()
	waitFor(t, "slow to start", func() bool { return strings.HasPrefix(call(t, set, "mcp__ts__stats", `{}`).Text, "started=1") })
	start := time.Now()
	_ = set.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Text, "was closed while the tool") {
			t.Errorf("slow after Close = %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("slow still running after Close")
	}
}

func TestServerThatDiesAfterConnecting(t *testing.T) {
	rec := newRecorder()
	set := mustConnect(t, mcp.Options{Logger: slogOf(rec)}, stdioServer(t, "ts", mcptest.ModeTools))
	pid := set.Servers()[0].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to be reaped", func() bool { return !slices.Contains(children(t), pid) })
	res := call(t, set, "mcp__ts__echo", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Text, `"ts"`) {
		t.Errorf("call of a dead server = %+v", res)
	}
	// The exit is logged right after the reaping.
	waitFor(t, "the exit to be logged", func() bool { return len(rec.messages("mcp: server exited")) > 0 })
	if ex := rec.messages("mcp: server exited"); len(ex) != 1 || ex[0]["status"] != "signal: killed" {
		t.Errorf("exit records = %v", ex)
	}
}

func TestServerEnvironment(t *testing.T) {
	dir := t.TempDir()
	cfg := stdioServer(t, "ts", mcptest.ModeTools)
	set := mustConnect(t, mcp.Options{Dir: dir, Environ: []string{"PATH=" + os.Getenv("PATH"), serverEnv + "=hang"}}, cfg)
	// The configured variable won over the base one (else it would hang).
	pid := set.Servers()[0].PID
	if runtime.GOOS != "linux" {
		return
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(strings.TrimRight(string(env), "\x00"), "\x00")
	slices.Sort(vars)
	if want := []string{"PATH=" + os.Getenv("PATH"), serverEnv + "=tools"}; !slices.Equal(vars, want) {
		t.Errorf("environment = %q, want %q", vars, want)
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil || cwd != dir {
		t.Errorf("cwd = %q, %v; want %q", cwd, err, dir)
	}
}

func TestRoots(t *testing.T) {
	dir := t.TempDir()
	set := mustConnect(t, mcp.Options{Roots: []string{dir, "/srv/with space"}}, stdioServer(t, "ts", mcptest.ModeTools))
	// The SDK lists roots by URI.
	want := "with space=file:///srv/with%20space\n" + filepath.Base(dir) + "=file://" + dir
	if res := call(t, set, "mcp__ts__roots", `{}`); res.Text != want {
		t.Errorf("roots = %q, want %q", res.Text, want)
	}
	set = mustConnect(t, mcp.Options{}, stdioServer(t, "ts", mcptest.ModeTools))
	if res := call(t, set, "mcp__ts__roots", `{}`); res.Text != "" || res.IsError {
		t.Errorf("no roots = %+v", res)
	}
}

func TestBuiltServerProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "mcptestserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/reel-agent/reel/agent/mcp/mcptest/mcptestserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	set := mustConnect(t, mcp.Options{}, mcp.ServerConfig{Name: "prog", Transport: mcp.TransportStdio, Command: bin, Args: []string{"tools"}})
	if res := call(t, set, "mcp__prog__add", `{"a":1,"b":2}`); !strings.HasPrefix(res.Text, "3\n") {
		t.Errorf("add = %+v", res)
	}
}
