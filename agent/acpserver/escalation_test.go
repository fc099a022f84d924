package acpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm/standin"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/sessionlog"
)

// TestEscalation runs a bash call that writes outside the workspace, in
// workspace-write under the real Landlock sandbox, with and without
// sandbox_permissions. Only an approved escalation writes the file; the
// approval policy never rejects without asking.
func TestEscalation(t *testing.T) {
	requireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const justification = "the user asked for a file outside the workspace"
	tests := []struct {
		name       string
		approval   string
		perm       sandbox.Mode // sandbox_permissions; "" = none
		answers    []acp.PermissionOptionKind
		wantAsked  int
		wantStatus acp.ToolCallStatus
		wantFile   bool
		wantText   string
	}{
		{"approved", agent.ApprovalOnRequest, sandbox.DangerFullAccess, []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}, 1, acp.ToolCallStatusCompleted, true, "escalated"},
		{"rejected", agent.ApprovalOnRequest, sandbox.DangerFullAccess, []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce}, 1, acp.ToolCallStatusFailed, false, "The user rejected escalation to danger-full-access"},
		{"answer cancelled", agent.ApprovalOnRequest, sandbox.DangerFullAccess, nil, 1, acp.ToolCallStatusFailed, false, "was cancelled"},
		{"policy never", agent.ApprovalNever, sandbox.DangerFullAccess, []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}, 0, acp.ToolCallStatusFailed, false, "approval policy of this session is never"},
		{"no escalation: the sandbox denies", agent.ApprovalOnRequest, "", []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}, 0, acp.ToolCallStatusCompleted, false, "Permission denied"},
		{"not wider than the mode", agent.ApprovalOnRequest, sandbox.WorkspaceWrite, []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}, 0, acp.ToolCallStatusCompleted, false, "Permission denied"},
		{"not a mode", agent.ApprovalOnRequest, "root", []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}, 0, acp.ToolCallStatusFailed, false, `sandbox_permissions "root" is not a sandbox mode`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outside := realDir(t)
			target := filepath.Join(outside, "outside.txt")
			args := map[string]string{
				"command":     "printf escalated > " + target + " && cat " + target,
				"description": "Write outside the workspace",
			}
			if tt.perm != "" {
				args["sandbox_permissions"], args["justification"] = string(tt.perm), justification
			}
			rawArgs, _ := json.Marshal(args)
			m := newModel(t, nil,
				standin.Response{ToolCalls: []standin.ToolCall{{ID: "call_esc", Name: "bash", Arguments: string(rawArgs)}}},
				standin.Response{Text: "DONE", Expect: &standin.Expect{LastMessageContains: tt.wantText}},
			)
			sb := confinedSandbox{sandbox.New(exe, sandbox.TempRoot(realDir(t)))}
			r := start(t, agent.Config{Models: shared(m), Mode: sandbox.WorkspaceWrite, Approval: tt.approval, Sandbox: sb})
			r.client.queue(tt.answers...)
			r.initialize(t)
			cwd := realDir(t)
			sid := r.newSession(t, cwd)
			r.mustPrompt(t, sid, "Write 'escalated' outside the workspace.", acp.StopReasonEndTurn)

			asked := r.client.permissionRequests()
			if len(asked) != tt.wantAsked {
				t.Fatalf("%d permission requests, want %d", len(asked), tt.wantAsked)
			}
			if len(asked) == 1 {
				req := asked[0]
				if req.SessionId != sid || req.ToolCall.ToolCallId != "call_esc" {
					t.Errorf("permission request for session %s call %s", req.SessionId, req.ToolCall.ToolCallId)
				}
				var kinds []acp.PermissionOptionKind
				for _, o := range req.Options {
					kinds = append(kinds, o.Kind)
				}
				if want := []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindRejectOnce}; !slices.Equal(kinds, want) {
					t.Errorf("permission options %v, want %v", kinds, want)
				}
				if req.ToolCall.Title == nil || !strings.Contains(*req.ToolCall.Title, justification) || !strings.Contains(*req.ToolCall.Title, string(tt.perm)) {
					t.Errorf("permission title %v lacks the justification or the wanted mode", req.ToolCall.Title)
				}
			}
			var final *acp.SessionToolCallUpdate
			for _, u := range r.client.updatesOf(sid) {
				if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status != acp.ToolCallStatusInProgress {
					final = u.ToolCallUpdate
				}
			}
			if final == nil || *final.Status != tt.wantStatus {
				t.Fatalf("final tool_call_update %+v, want status %s", final, tt.wantStatus)
			}
			if got := toolContentText(final.Content); !strings.Contains(got, tt.wantText) {
				t.Errorf("tool output %q lacks %q", got, tt.wantText)
			}
			b, err := os.ReadFile(target)
			switch {
			case tt.wantFile && (err != nil || string(b) != "escalated"):
				t.Errorf("outside file: %q, %v; want it written", b, err)
			case !tt.wantFile && err == nil:
				t.Errorf("outside file was written (%q) without an approved escalation", b)
			}
			d := r.readLog(t, sid)
			pol := ofType(d.Events, sessionlog.TypeApprovalPolicy)
			if len(pol) != 1 || !strings.Contains(string(pol[0].Data), `"policy":"`+tt.approval+`"`) {
				t.Errorf("approval/policy events %v, want one with policy %s", pol, tt.approval)
			}
			// The escalation never changes the session's mode.
			if modes := ofType(d.Events, sessionlog.TypeSandboxMode); len(modes) != 1 {
				t.Errorf("%d sandbox/mode events, want 1", len(modes))
			}
		})
	}
}
