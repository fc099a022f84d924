package acpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

func TestInitialize(t *testing.T) {
	m := newModel(t, nil, standin.Response{Text: "unused"})
	r := startVersion(t, agent.Config{Models: shared(m)}, "9.8.7-test")
	resp := r.initialize(t)
	if resp.AgentInfo == nil || resp.AgentInfo.Name != "reel" || resp.AgentInfo.Version != "9.8.7-test" {
		t.Errorf("agentInfo = %+v, want name reel, version 9.8.7-test", resp.AgentInfo)
	}
	if resp.ProtocolVersion != acp.ProtocolVersionNumber {
		t.Errorf("protocolVersion = %d, want %d", resp.ProtocolVersion, acp.ProtocolVersionNumber)
	}
	if !resp.AgentCapabilities.LoadSession {
		t.Error("agentCapabilities.loadSession is false, want true")
	}
	if !resp.AgentCapabilities.PromptCapabilities.EmbeddedContext {
		t.Error("promptCapabilities.embeddedContext is false, want true")
	}
}

func TestNewSessionCwd(t *testing.T) {
	m := newModel(t, nil, standin.Response{Text: "unused"})
	r := start(t, agent.Config{Models: shared(m)})
	r.initialize(t)
	abs := realDir(t)
	tests := []struct {
		name string
		cwd  string
		code int // 0: accepted
		frag string
	}{
		{"empty", "", -32602, "cwd"},
		{"relative", "work/dir", -32602, "must be an absolute path"},
		{"dot relative", "./ws", -32602, "must be an absolute path"},
		{"parent relative", "../ws", -32602, "must be an absolute path"},
		{"absolute", abs, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := r.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: tt.cwd, McpServers: []acp.McpServer{}})
			if tt.code != 0 {
				requireCode(t, err, tt.code, tt.frag)
				return
			}
			if err != nil {
				t.Fatalf("session/new: %v", err)
			}
			if resp.Modes == nil || string(resp.Modes.CurrentModeId) != string(sandbox.WorkspaceWrite) {
				t.Fatalf("modes = %+v, want current mode %s", resp.Modes, sandbox.WorkspaceWrite)
			}
			var ids []string
			for _, md := range resp.Modes.AvailableModes {
				ids = append(ids, string(md.Id))
			}
			if want := []string{string(sandbox.ReadOnly), string(sandbox.WorkspaceWrite), string(sandbox.DangerFullAccess)}; !slices.Equal(ids, want) {
				t.Errorf("available modes %v, want %v", ids, want)
			}
			d := r.readLog(t, resp.SessionId)
			if d.Header.Cwd != abs || d.Header.ID != string(resp.SessionId) {
				t.Errorf("log header id %q cwd %q, want %q %q", d.Header.ID, d.Header.Cwd, resp.SessionId, abs)
			}
		})
	}
	// Only the accepted session left a log.
	logs, _ := filepath.Glob(filepath.Join(r.storeDir, "*.jsonl"))
	if len(logs) != 1 {
		t.Errorf("store holds %d logs (%v), want 1: a rejected session/new must not create one", len(logs), logs)
	}
}

func TestTextTurn(t *testing.T) {
	const reasoning, text = "The user wants a short greeting.", "Hello from reel, friend!"
	m := newModel(t, nil, standin.Response{Reasoning: reasoning, Text: text, ChunkSize: 5, Expect: &standin.Expect{LastUserContains: "Say hello"}})
	r := start(t, agent.Config{Models: shared(m)})
	r.initialize(t)
	sid := r.newSession(t, realDir(t))
	r.mustPrompt(t, sid, "Say hello in five words.", acp.StopReasonEndTurn)

	us := r.client.updatesOf(sid)
	if got := joined(us, "agent_thought_chunk"); got != reasoning {
		t.Errorf("agent_thought_chunk text %q, want %q", got, reasoning)
	}
	if got := joined(us, "agent_message_chunk"); got != text {
		t.Errorf("agent_message_chunk text %q, want %q", got, text)
	}
	if n := count(us, "agent_message_chunk"); n < 2 {
		t.Errorf("%d agent_message_chunk updates, want the text streamed in several", n)
	}
	// Thoughts stream before the answer.
	lastThought := slices.IndexFunc(us, func(u acp.SessionUpdate) bool { return u.AgentMessageChunk != nil }) - 1
	if lastThought < 0 || us[lastThought].AgentThoughtChunk == nil {
		t.Errorf("updates %s: the answer must follow the thoughts", describe(us))
	}

	// The model's title arrives after the turn (title_test.go).
	waitTitle(t, r, sid, standin.DefaultTitle)
	d := r.readLog(t, sid)
	got := slices.Compact(types(d.Events))
	want := []string{
		sessionlog.TypeSandboxMode, sessionlog.TypeApprovalPolicy, sessionlog.TypeTurnStart, sessionlog.TypeStepStart,
		sessionlog.TypeUserMessage, sessionlog.TypeSessionTitle, sessionlog.TypeRequestHeader, sessionlog.TypeRequestContext, sessionlog.TypeAssistantChunk,
		sessionlog.TypeAssistantMessage, sessionlog.TypeStepEnd, sessionlog.TypeTurnEnd, sessionlog.TypeTitleLLMRequest, sessionlog.TypeSessionTitle,
	}
	if !slices.Equal(got, want) {
		t.Errorf("log event types (runs compacted)\n got %v\nwant %v", got, want)
	}
	end := d.Events[max(lastIndexOf(d.Events, sessionlog.TypeTurnEnd), 0)]
	if string(end.Data) != `{"turn":1,"reason":{"kind":"completed"}}` {
		t.Errorf("turn/end data %s", end.Data)
	}
}

func TestToolTurn(t *testing.T) {
	tests := []struct {
		name       string
		tool, args string
		wantKind   acp.ToolKind
		wantStatus acp.ToolCallStatus
		wantOutput string
	}{
		{"bash ok", "bash", `{"command":"echo TOOL_OK","description":"Print TOOL_OK"}`, acp.ToolKindExecute, acp.ToolCallStatusCompleted, "TOOL_OK"},
		{"bash exiting non-zero (reported, not failed)", "bash", `{"command":"echo NOPE; exit 3"}`, acp.ToolKindExecute, acp.ToolCallStatusCompleted, "[exit code 3]"},
		{"read", "read", `{"file_path":"seed.txt"}`, acp.ToolKindRead, acp.ToolCallStatusCompleted, "seeded line"},
		{"unknown tool", "teleport", `{}`, "", acp.ToolCallStatusFailed, "teleport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, nil,
				standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_1", Name: tt.tool, Arguments: tt.args}}},
				standin.Response{Text: "DONE", Expect: &standin.Expect{LastMessageContains: tt.wantOutput}},
			)
			r := start(t, agent.Config{Models: shared(m), Mode: sandbox.DangerFullAccess})
			r.initialize(t)
			cwd := realDir(t)
			if err := os.WriteFile(filepath.Join(cwd, "seed.txt"), []byte("seeded line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sid := r.newSession(t, cwd)
			r.mustPrompt(t, sid, "Run the tool.", acp.StopReasonEndTurn)

			var seq []string
			var final *acp.SessionToolCallUpdate
			for _, u := range r.client.updatesOf(sid) {
				switch {
				case u.ToolCall != nil:
					if u.ToolCall.ToolCallId != "call_1" {
						t.Errorf("tool_call id %q", u.ToolCall.ToolCallId)
					}
					if tt.wantKind != "" && u.ToolCall.Kind != tt.wantKind {
						t.Errorf("tool_call kind %q, want %q", u.ToolCall.Kind, tt.wantKind)
					}
					seq = append(seq, "tool_call:"+string(u.ToolCall.Status))
				case u.ToolCallUpdate != nil:
					if u.ToolCallUpdate.ToolCallId != "call_1" {
						t.Errorf("tool_call_update id %q", u.ToolCallUpdate.ToolCallId)
					}
					st := ""
					if u.ToolCallUpdate.Status != nil {
						st = string(*u.ToolCallUpdate.Status)
					}
					seq = append(seq, "update:"+st)
					final = u.ToolCallUpdate
				}
			}
			want := []string{"tool_call:pending", "update:in_progress", "update:" + string(tt.wantStatus)}
			if !slices.Equal(seq, want) {
				t.Fatalf("tool updates %v, want %v", seq, want)
			}
			if got := toolContentText(final.Content); !strings.Contains(got, tt.wantOutput) {
				t.Errorf("final tool_call_update content %q lacks %q", got, tt.wantOutput)
			}

			d := r.readLog(t, sid)
			calls, results := ofType(d.Events, sessionlog.TypeToolCall), ofType(d.Events, sessionlog.TypeToolResult)
			if len(calls) != 1 || len(results) != 1 {
				t.Fatalf("%d tool/call and %d tool/result events, want 1 each", len(calls), len(results))
			}
			if !slices.Equal(results[0].SourceEventSeqs, []int{calls[0].Seq}) {
				t.Errorf("tool/result cites %v, want [%d]", results[0].SourceEventSeqs, calls[0].Seq)
			}
			if n := len(ofType(d.Events, sessionlog.TypeStepStart)); n != 2 {
				t.Errorf("%d steps, want 2 (tool call, then answer)", n)
			}
		})
	}
}

func TestFileToolDiff(t *testing.T) {
	ptr := func(s string) *string { return &s }
	tests := []struct {
		name     string
		seed     string // greeting.txt content before; "" = absent
		tool     string
		args     string
		wantOld  *string
		wantNew  string
		wantFile string
	}{
		{"write new file", "", "write", `{"file_path":"greeting.txt","content":"fresh\n"}`, nil, "fresh\n", "fresh\n"},
		{"write over a file", "old text\n", "write", `{"file_path":"greeting.txt","content":"new text\n"}`, ptr("old text\n"), "new text\n", "new text\n"},
		{"edit", "hello world\nbye\n", "edit", `{"file_path":"greeting.txt","old_string":"hello world","new_string":"hello reel"}`, ptr("hello world\nbye\n"), "hello reel\nbye\n", "hello reel\nbye\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The model reads the file first where it exists: write and
			// edit refuse to change a file the session has not read.
			var script []standin.Response
			if tt.seed != "" {
				script = append(script, standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_read", Name: "read", Arguments: `{"file_path":"greeting.txt"}`}}})
			}
			script = append(script,
				standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_file", Name: tt.tool, Arguments: tt.args}}},
				standin.Response{Text: "Done."},
			)
			m := newModel(t, nil, script...)
			r := start(t, agent.Config{Models: shared(m)})
			r.initialize(t)
			cwd := realDir(t)
			path := filepath.Join(cwd, "greeting.txt")
			if tt.seed != "" {
				if err := os.WriteFile(path, []byte(tt.seed), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sid := r.newSession(t, cwd)
			r.mustPrompt(t, sid, "Change the greeting.", acp.StopReasonEndTurn)

			var diff *acp.ToolCallContentDiff
			for _, u := range r.client.updatesOf(sid) {
				if u.ToolCallUpdate == nil || u.ToolCallUpdate.Status == nil || *u.ToolCallUpdate.Status != acp.ToolCallStatusCompleted {
					continue
				}
				for _, c := range u.ToolCallUpdate.Content {
					if c.Diff != nil {
						diff = c.Diff
					}
				}
			}
			if diff == nil {
				t.Fatalf("no completed tool_call_update with diff content; updates %s", describe(r.client.updatesOf(sid)))
			}
			if diff.Path != path {
				t.Errorf("diff path %q, want %q", diff.Path, path)
			}
			if diff.NewText != tt.wantNew {
				t.Errorf("diff newText %q, want %q", diff.NewText, tt.wantNew)
			}
			switch {
			case tt.wantOld == nil && diff.OldText != nil:
				t.Errorf("diff oldText %q, want none (new file)", *diff.OldText)
			case tt.wantOld != nil && (diff.OldText == nil || *diff.OldText != *tt.wantOld):
				t.Errorf("diff oldText %v, want %q", diff.OldText, *tt.wantOld)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != tt.wantFile {
				t.Errorf("file holds %q (%v), want %q", b, err, tt.wantFile)
			}
		})
	}
}

// TestSetModeWritesChangeHeader switches the sandbox mode between two
// prompts: the second turn's step owes exactly one extra request/header,
// reason change, whose system prompt names the new mode, and the request
// rebuilt from the log is the one the model received.
func TestSetModeWritesChangeHeader(t *testing.T) {
	tests := []struct {
		name        string
		to          sandbox.Mode
		wantReasons []string
	}{
		{"to read-only", sandbox.ReadOnly, []string{sessionlog.ReasonInitial, sessionlog.ReasonChange}},
		{"to danger-full-access", sandbox.DangerFullAccess, []string{sessionlog.ReasonInitial, sessionlog.ReasonChange}},
		{"to the same mode", sandbox.WorkspaceWrite, []string{sessionlog.ReasonInitial}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, nil, standin.Response{Text: "first"}, standin.Response{Text: "second", Expect: &standin.Expect{LastUserContains: "again"}})
			r := start(t, agent.Config{Models: shared(m), Mode: sandbox.WorkspaceWrite})
			r.initialize(t)
			sid := r.newSession(t, realDir(t))
			r.mustPrompt(t, sid, "Say first.", acp.StopReasonEndTurn)
			if _, err := r.conn.SetSessionMode(context.Background(), acp.SetSessionModeRequest{SessionId: sid, ModeId: acp.SessionModeId(tt.to)}); err != nil {
				t.Fatalf("session/set_mode: %v", err)
			}
			// The last mode update is the switch. (The first turn's title,
			// asked of the model after the turn, may be shown after it.)
			us := r.client.updatesOf(sid)
			var last *acp.SessionCurrentModeUpdate
			for _, u := range us {
				if u.CurrentModeUpdate != nil {
					last = u.CurrentModeUpdate
				}
			}
			if last == nil || sandbox.Mode(last.CurrentModeId) != tt.to {
				t.Errorf("updates %s, want a last current_mode_update %s", describe(us), tt.to)
			}
			r.mustPrompt(t, sid, "Say it again.", acp.StopReasonEndTurn)

			d := r.readLog(t, sid)
			headers := ofType(d.Events, sessionlog.TypeRequestHeader)
			var reasons []string
			var hdata []sessionlog.RequestHeaderData
			for i := range headers {
				hd, err := sessionlog.DecodeData[sessionlog.RequestHeaderData](&headers[i])
				if err != nil {
					t.Fatal(err)
				}
				reasons = append(reasons, hd.Reason)
				hdata = append(hdata, hd)
			}
			if !slices.Equal(reasons, tt.wantReasons) {
				t.Fatalf("request/header reasons %v, want %v", reasons, tt.wantReasons)
			}
			latest, err := sessionlog.ParseRequestHeader(hdata[len(hdata)-1].Header)
			if err != nil {
				t.Fatal(err)
			}
			if want := "Current sandbox mode: " + string(tt.to) + "."; !strings.Contains(latest.System, want) {
				t.Errorf("system prompt in force does not say %q:\n%s", want, latest.System)
			}
			if len(headers) == 2 {
				// The change header is written in turn 2, after the switch.
				modes := ofType(d.Events, sessionlog.TypeSandboxMode)
				if sw := modes[len(modes)-1]; sw.Seq > headers[1].Seq || !strings.Contains(string(sw.Data), `"source":"client"`) {
					t.Errorf("sandbox/mode %s (seq %d) must precede the change header (seq %d)", sw.Data, sw.Seq, headers[1].Seq)
				}
			}

			// Byte-exact reconstruction of the step after the switch.
			steps, err := sessionlog.ReconstructAll(d.Header, d.Events)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != 2 {
				t.Fatalf("%d reconstructed steps, want 2", len(steps))
			}
			after := steps[1]
			if after.Turn != 2 || after.Step != 1 {
				t.Fatalf("second model call at turn %d step %d, want 2/1", after.Turn, after.Step)
			}
			req, err := sessionlog.Reconstruct(d.Header, d.Events, 2, 1)
			if err != nil {
				t.Fatal(err)
			}
			if string(req.Header) != string(hdata[len(hdata)-1].Header) {
				t.Errorf("reconstructed header\n%s\nis not the header in force\n%s", req.Header, hdata[len(hdata)-1].Header)
			}
			if err := sessionlog.CheckRequest(d.Header, d.Events[:after.Seq], req); err != nil {
				t.Errorf("CheckRequest refuses Reconstruct(2,1): %v", err)
			}
			if len(req.Messages) != 3 {
				t.Errorf("turn 2 request has %d messages, want 3 (user, assistant, user)", len(req.Messages))
			}
			// The check can fail: turn 1's request is not turn 2's.
			if err := sessionlog.CheckRequest(d.Header, d.Events[:after.Seq], steps[0].Request); err == nil {
				t.Error("CheckRequest accepted turn 1's request for turn 2")
			}

			// The model received the system prompt of the header in force.
			reqs := m.requests(t)
			if len(reqs) != 2 {
				t.Fatalf("stand-in saw %d requests, want 2", len(reqs))
			}
			var sys string
			if err := json.Unmarshal(reqs[1].Messages[0].Content, &sys); err != nil || reqs[1].Messages[0].Role != "system" {
				t.Fatalf("first message of request 2 is %s %s, want the system prompt", reqs[1].Messages[0].Role, reqs[1].Messages[0].Content)
			}
			if sys != latest.System {
				t.Errorf("the model got system prompt\n%s\nbut the log's header in force says\n%s", sys, latest.System)
			}
			wantEsc := tt.to != sandbox.DangerFullAccess
			if gotEsc := strings.Contains(string(reqs[1].Tools[0]), "sandbox_permissions"); gotEsc != wantEsc {
				t.Errorf("turn 2 bash schema offers sandbox_permissions: %v, want %v", gotEsc, wantEsc)
			}
		})
	}
}

func TestSetModeErrors(t *testing.T) {
	m := newModel(t, nil, standin.Response{Text: "unused"})
	r := start(t, agent.Config{Models: shared(m)})
	r.initialize(t)
	sid := r.newSession(t, realDir(t))
	tests := []struct {
		name string
		sid  acp.SessionId
		mode sandbox.Mode
		frag string
	}{
		{"unknown mode", sid, "yolo", `unknown mode \"yolo\"`},
		{"empty mode", sid, "", "unknown mode"},
		{"unknown session", "no-such-session", sandbox.ReadOnly, "unknown session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.conn.SetSessionMode(context.Background(), acp.SetSessionModeRequest{SessionId: tt.sid, ModeId: acp.SessionModeId(tt.mode)})
			requireCode(t, err, -32602, tt.frag)
		})
	}
	// Nothing was logged for the refused switches.
	if n := len(ofType(r.readLog(t, sid).Events, sessionlog.TypeSandboxMode)); n != 1 {
		t.Errorf("%d sandbox/mode events, want only the configured one", n)
	}
}

// gatedStream serves the first chat request itself: it streams "partial",
// then holds the response open until release is closed, then finishes
// with " rest". Later requests go to next.
func gatedStream(release <-chan struct{}) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		var mu sync.Mutex
		n := 0
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if !first {
				next.ServeHTTP(w, r)
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			send := func(delta, finish string) {
				fr := "null"
				if finish != "" {
					fr = `"` + finish + `"`
				}
				fmt.Fprintf(w, "data: {\"id\":\"gated\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"standin\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, fr)
				w.(http.Flusher).Flush()
			}
			send(`{"role":"assistant","content":"partial"}`, "")
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			send(`{"content":" rest"}`, "")
			send(`{}`, "stop")
			fmt.Fprint(w, "data: [DONE]\n\n")
		})
	}
}

// TestPromptWhileBusy: a second prompt on a session whose prompt is still
// running is queued (queue.go), closing the session is refused with
// "busy"; the running prompt is not disturbed (it finishes normally once
// the model continues), the queued one runs after it, and afterwards the
// session takes prompts and closes.
func TestPromptWhileBusy(t *testing.T) {
	release := make(chan struct{})
	m := newModel(t, gatedStream(release), standin.Response{Text: "queued", Expect: &standin.Expect{LastUserContains: "Me too"}},
		standin.Response{Text: "after", Expect: &standin.Expect{LastUserContains: "Now answer"}})
	r := start(t, agent.Config{Models: shared(m)})
	r.initialize(t)
	sid := r.newSession(t, realDir(t))

	first := make(chan acp.PromptResponse, 1)
	firstErr := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		resp, err := r.prompt(context.Background(), sid, "Take your time.")
		first <- resp
		firstErr <- err
	}()
	r.client.waitFor(t, sid, stop, "the first prompt streamed", func(us []acp.SessionUpdate) bool {
		return joined(us, "agent_message_chunk") == "partial"
	})

	second := make(chan error, 1)
	go func() {
		resp, err := r.prompt(context.Background(), sid, "Me too.")
		if err == nil && resp.StopReason != acp.StopReasonEndTurn {
			err = fmt.Errorf("stopReason %q", resp.StopReason)
		}
		second <- err
	}()
	_, err := r.conn.CloseSession(context.Background(), acp.CloseSessionRequest{SessionId: sid})
	requireCode(t, err, -32600, "busy")

	close(release)
	<-stop
	if err := <-second; err != nil {
		t.Fatalf("queued prompt: %v", err)
	}
	if err := <-firstErr; err != nil {
		t.Fatalf("first prompt: %v", err)
	}
	if resp := <-first; resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("first prompt stopReason %q, want end_turn: the refused prompt must not cancel it", resp.StopReason)
	}
	if got := joined(r.client.updatesOf(sid), "agent_message_chunk"); got != "partial restqueued" {
		t.Errorf("the prompts streamed %q, want %q", got, "partial restqueued")
	}
	r.mustPrompt(t, sid, "Now answer.", acp.StopReasonEndTurn)
	if _, err := r.conn.CloseSession(context.Background(), acp.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	_, err = r.prompt(context.Background(), sid, "Still there?")
	requireCode(t, err, -32602, "unknown session")
	var kinds []string
	for _, e := range ofType(r.readLog(t, sid).Events, sessionlog.TypeTurnEnd) {
		d, _ := sessionlog.DecodeData[sessionlog.TurnEndData](&e)
		kinds = append(kinds, d.Reason.Kind)
	}
	if want := []string{sessionlog.EndCompleted, sessionlog.EndCompleted, sessionlog.EndCompleted}; !slices.Equal(kinds, want) {
		t.Errorf("turn/end kinds %v, want %v", kinds, want)
	}
}

func TestPromptUnknownSession(t *testing.T) {
	m := newModel(t, nil, standin.Response{Text: "unused"})
	r := start(t, agent.Config{Models: shared(m)})
	r.initialize(t)
	_, err := r.prompt(context.Background(), "ghost", "hi")
	requireCode(t, err, -32602, `unknown session \"ghost\"`)
	_, err = r.conn.LoadSession(context.Background(), acp.LoadSessionRequest{SessionId: "ghost", Cwd: realDir(t), McpServers: []acp.McpServer{}})
	requireCode(t, err, -32602, "unknown session")
}
