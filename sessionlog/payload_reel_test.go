package sessionlog_test

import (
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// TestReelPayloads: the records reel writes for MCP, approvals (in dsh's
// format, which the corpus round trip also checks) and the model choice
// encode in a fixed member order, with the optional members absent
// when empty, and decode back to the same bytes (the re-encoding the log's
// round trip relies on).
func TestReelPayloads(t *testing.T) {
	for _, c := range []struct {
		typ  string
		p    sessionlog.Payload
		want string
	}{
		{sessionlog.TypeMCPConnect, sessionlog.MCPConnectData{Servers: []sessionlog.MCPServerData{
			{Name: "notes", Transport: "stdio", Tools: []sessionlog.MCPToolData{
				{Name: "mcp__notes__add", Remote: "add", Title: "notes: Add a note", Description: "Add a note.", Parameters: []byte(`{"properties":{"text":{"type":"string"}},"type":"object"}`)},
				{Name: "mcp__notes__list", Remote: "list", Title: "notes: \"list\" <all>", ReadOnly: true}}},
			{Name: "web", Transport: "http", Error: "the MCP server \"web\" failed to start: exit status 3"},
		}}, `{"servers":[{"name":"notes","transport":"stdio","tools":[{"name":"mcp__notes__add","remote":"add","title":"notes: Add a note",` +
			`"description":"Add a note.","parameters":{"properties":{"text":{"type":"string"}},"type":"object"}},` +
			`{"name":"mcp__notes__list","remote":"list","title":"notes: \"list\" <all>","readOnly":true,"description":"","parameters":null}]},` +
			`{"name":"web","transport":"http","error":"the MCP server \"web\" failed to start: exit status 3","tools":[]}]}`},
		{sessionlog.TypeMCPConnect, sessionlog.MCPConnectData{}, `{"servers":[]}`},
		{sessionlog.TypeApprovalAsked, sessionlog.ApprovalAskedData{ID: "q1", ToolName: "mcp__notes__add", CallID: "call_1", Reason: "the MCP tool \"add\" of the server \"notes\""},
			`{"id":"q1","toolName":"mcp__notes__add","callId":"call_1","reason":"the MCP tool \"add\" of the server \"notes\""}`},
		{sessionlog.TypeApprovalAsked, sessionlog.ApprovalAskedData{ID: "q2", ToolName: "bash"}, `{"id":"q2","toolName":"bash"}`},
		{sessionlog.TypeApprovalAsked, sessionlog.ApprovalAskedData{ID: "q3", ToolName: "mcp__a__b__c", MCPServer: "a__b", MCPTool: "c"},
			`{"id":"q3","toolName":"mcp__a__b__c","mcpServer":"a__b","mcpTool":"c"}`},
		{sessionlog.TypeApprovalDecided, sessionlog.ApprovalDecidedData{ID: "q1", Outcome: sessionlog.OutcomeAllowedAlways},
			`{"id":"q1","outcome":"allowed-always"}`},
		{sessionlog.TypeModelSelected, sessionlog.ModelSelectedData{Model: "deepseek-reasoner", Source: "client"},
			`{"model":"deepseek-reasoner","source":"client"}`},
	} {
		got := string(c.p.AppendJSON(nil))
		if got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
		e := sessionlog.Event{Type: c.typ, Data: []byte(got)}
		again, ok, err := sessionlog.ReencodePayload(&e)
		if err != nil || !ok || string(again) != got {
			t.Errorf("%s: re-encoded %s (known %v, err %v), want %s", c.typ, again, ok, err, got)
		}
	}
}

// TestChildHeaderMatchesTheCorpus: the header reel writes for a child
// session is byte for byte the one dsh wrote for each recorded child, and
// Child reads its members back.
func TestChildHeaderMatchesTheCorpus(t *testing.T) {
	dir := corpustest.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "session.*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no child logs in the corpus")
	}
	for _, p := range files {
		d, err := jsonl.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h := d.Header
		c, ok := h.Child()
		if !ok || c.Depth < 1 {
			t.Fatalf("%s: not read as a child header: %s", p, h.Raw)
		}
		again := sessionlog.NewChildHeader(h.ID, h.CreatedAt, h.Cwd, c)
		if string(again.Raw) != string(h.Raw) {
			t.Errorf("%s:\nlogged %s\nbuilt  %s", p, h.Raw, again.Raw)
		}
	}
	if _, ok := sessionlog.NewHeader("top", 1, "/w").Child(); ok {
		t.Error("a top-level header reads as a child's")
	}
}
