package equiv

import (
	"strings"
	"testing"
)

// TestToolEssence pairs results of the reference's presentation with
// reel's: the pairs that say the same must reduce to equal essences, the
// others must not, and a text in no known presentation is refused.
func TestToolEssence(t *testing.T) {
	long := strings.Repeat("x", 2500)
	cases := []struct {
		name, tool, ref, reel string
		equal                 bool
	}{
		{"read one line", "read",
			"<path>{{cwd}}/greeting.txt</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 lines)\n</content>",
			"     1\thello", true},
		{"read other text", "read",
			"<path>{{cwd}}/greeting.txt</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 lines)\n</content>",
			"     1\thellO", false},
		{"read other line number", "read",
			"<path>p</path>\n<type>file</type>\n<content>\n1: hello\n</content>",
			"     2\thello", false},
		{"read window with notes", "read",
			"<path>p</path>\n<type>file</type>\n<content>\n5: five\n6: \n\n(Showing lines 5-6 of 10. Use offset=7 to continue.)\n</content>",
			"     5\tfive\n     6\t\n\n(Showing lines 5-6 of 10 …)", true},
		{"read empty file", "read",
			"<path>p</path>\n<type>file</type>\n<content>\n\n(End of file - total 0 lines)\n</content>",
			"({{cwd}}/p is empty)", true},
		{"read long line cut differently", "read",
			"<path>p</path>\n<type>file</type>\n<content>\n1: " + long[:2000] + "... (line truncated to 2000 chars)\n</content>",
			"     1\t" + long[:2000] + "… [line cut: 2500 characters]", true},
		{"read missing line", "read",
			"<path>p</path>\n<type>file</type>\n<content>\n1: a\n2: b\n</content>",
			"     1\ta", false},
		{"job_output spawn failure", "job_output",
			"[stderr]\nspawn failed: Error: spawn {{cwd}}/.dsh-missing-sandbox-runner ENOENT\n[sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure]\n[status: killed, killed before exit]",
			"[stderr]\nspawn failed: fork/exec {{cwd}}/.reel-missing-sandbox-runner: no such file or directory\n[sandbox: the sandbox runner itself failed under read-only mode — the command did not run; this is a sandbox problem, not a command failure]\n[status: killed, killed before exit]", true},
		{"job_output spawn failure without the runner line", "job_output",
			"[stderr]\nspawn failed: Error: spawn x ENOENT\n[sandbox: the sandbox runner itself failed under read-only mode — x]\n[status: killed, killed before exit]",
			"[stderr]\nspawn failed: fork/exec x: no such file or directory\n[status: killed, killed before exit]", false},
		{"job_output output", "job_output", "hello\n[status: completed, exit code: 0]", "hello\n[status: completed, exit code: 0]", true},
		{"job_output other output", "job_output", "hello\n[status: completed, exit code: 0]", "hullo\n[status: completed, exit code: 0]", false},
		{"job_output other exit", "job_output", "[status: completed, exit code: 0]", "[status: completed, exit code: 1]", false},
		{"job_output running", "job_output", "(no output)\n[status: running]", "[status: running]", true},
		{"job_output running against ended", "job_output", "[status: running]", "[status: killed, signal: SIGTERM]", false},
		{"job_kill requested", "job_kill", "requested cancellation of job bash-1", "requested cancellation of job bash-1\n", true},
		{"job_kill other job", "job_kill", "requested cancellation of job bash-1", "requested cancellation of job bash-2", false},
		{"job_kill already finished", "job_kill", "job bash-1 had already finished [status: completed, exit code: 0]", "job bash-1 had already finished [status: completed, exit code: 0]", true},
		{"job_kill finished against requested", "job_kill", "job bash-1 had already finished [status: completed, exit code: 0]", "requested cancellation of job bash-1", false},
		{"job_kill other status", "job_kill", "job bash-1 had already finished [status: completed, exit code: 0]", "job bash-1 had already finished [status: killed, signal: SIGTERM]", false},
		{"session_event_read same seq", "session_event_read",
			"Session {{sessionId}} — Read request event 5 with\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\",\n  \"seq\": 5\n}\n```\n\n(Omitted 782 bytes. Full formatted result stored at: /tmp/x. Use read with offset/limit, or grep this path to search within it.)",
			"Session cc94 — Read request event 5 with\nTarget event seq 5:\n```json\n{\n  \"type\": \"session/title\",\n  \"seq\": 5\n}\n```", true},
		{"session_event_read other seq", "session_event_read",
			"Session a — t\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\"\n}\n```",
			"Session b — t\nTarget event seq 6:\n```json\n{\n  \"type\": \"user/message\"\n}\n```", false},
		{"session_event_read other title", "session_event_read",
			"Session a — t\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\"\n}\n```",
			"Session a — untitled\nTarget event seq 5:\n```json\n{\n  \"type\": \"user/message\"\n}\n```", false},
		{"bash output", "bash", "SNAPSHOT_OK\n", "SNAPSHOT_OK\n", true},
		{"bash other output", "bash", "SNAPSHOT_OK\n", "ok", false},
		{"bash no output", "bash", "(no output)", "(no output)", true},
		{"bash no output, exit 1", "bash", "(no output)\n[exit code: 1]", "[exit code 1]", true},
		{"bash stderr section", "bash", "[stderr]\nboom\n[exit code: 1]", "boom\n[exit code 1]", true},
		{"bash interleaved streams", "bash", "out\n[stderr]\nerr\n[exit code: 2]", "err\nout\n[exit code 2]", true},
		{"bash other exit code", "bash", "x\n[exit code: 1]", "x\n[exit code 2]", false},
		{"bash exit 0 against 1", "bash", "x\n", "x\n[exit code 1]", false},
		{"bash signal", "bash", "[killed by signal: SIGKILL]", "[killed by signal 9 (killed)]", true},
		{"bash other signal", "bash", "[killed by signal: SIGTERM]", "[killed by signal 9 (killed)]", false},
		{"bash timeout", "bash", "partial\n[timed out after 1000ms]\n[exit code: 143]", "partial\n[timed out after 1000 ms]\n[exit code 143]", true},
		{"bash spill", "bash",
			"head" + "tail\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/dsh/1-bash.txt. Use read with offset/limit, or grep this path to search within it.)",
			"head" + "tail\n\n(Omitted 1417 bytes. Full formatted result stored at: {{tmp}}/spill/bash-1.txt. Use read with offset/limit, or grep this path to search within it.)", true},
		{"bash spill, notices of different lengths", "bash",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)",
			strings.Repeat("h", 280) + strings.Repeat("t", 280) + "\n\n(Omitted 1457 bytes. Full formatted result stored at: {{tmp}}/a-much-longer-spill-path/bash-1.txt. Use read.)", true},
		{"bash spill, other whole size", "bash",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1418 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)", false},
		{"bash spill, other head", "bash",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)",
			"X" + strings.Repeat("h", 299) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)", false},
		{"bash spill, twice as much shown inline", "bash",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)",
			strings.Repeat("h", 600) + strings.Repeat("t", 600) + "\n\n(Omitted 817 bytes. Full formatted result stored at: {{tmp}}/spill/bash-1.txt. Use read.)", false},
		{"bash spill, half as much shown inline", "bash",
			strings.Repeat("h", 300) + strings.Repeat("t", 300) + "\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/d/1-bash.txt. Use read.)",
			strings.Repeat("h", 150) + strings.Repeat("t", 150) + "\n\n(Omitted 1717 bytes. Full formatted result stored at: {{tmp}}/spill/bash-1.txt. Use read.)", false},
		{"bash spill against whole", "bash",
			"headtail\n\n(Omitted 1417 bytes. Full formatted result stored at: /tmp/x. Use read.)", "headtail", false},
		{"bash sandbox denial", "bash",
			"touch: cannot touch '/x': Permission denied\n[sandbox: file access denied under workspace-write mode]\n[exit code: 1]",
			"[sandbox denied: mode workspace-write] the sandbox blocked a write outside the writable roots; the command's other effects stand.\ntouch: cannot touch '/x': Permission denied\n[exit code 1]", true},
		{"bash denial against none", "bash",
			"x\n[sandbox: file access denied under read-only mode]\n[exit code: 1]", "x\n[exit code 1]", false},
		{"glob order and prefix", "glob", "tree/a.ts\ntree/b.ts", "{{cwd}}/tree/b.ts\ntree/a.ts", true},
		{"glob other path", "glob", "tree/a.ts\ntree/b.ts", "tree/a.ts\ntree/c.ts", false},
		{"glob nothing", "glob", "No files found", `No files match "*.go" in {{cwd}}`, true},
		{"glob sampled against all", "glob",
			"tree/a\ntree/b\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)",
			"tree/a\ntree/b\ntree/c", false},
		{"glob both cut", "glob",
			"tree/a\ntree/b\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)",
			"tree/b\ntree/a\n\n(Showing 2 of 3 matching files, newest first. The full list is saved to {{tmp}}/x. Narrow the pattern or path to see the rest.)", true},
		{"grep content", "grep",
			"Found 3 matches\n\nsrc/a.go\nLine 3: foo\nLine 9: foo bar\n\n{{cwd}}/b.txt\nLine 1: foo",
			"b.txt:1:foo\nsrc/a.go:3:foo\nsrc/a.go:9:foo bar", true},
		{"grep other line", "grep", "Found 1 match\n\na.go\nLine 3: foo", "a.go:4:foo", false},
		{"grep files against content", "grep", "Found 1 match\n\na.go\nLine 3: foo", "a.go", false},
		{"grep nothing", "grep", "No matches found", "No matches found", true},
		{"write created", "write",
			"<path>{{cwd}}/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>",
			"Wrote 11 bytes to {{cwd}}/notes.txt (new file)", true},
		{"write replaced", "write",
			"<path>{{cwd}}/data.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>",
			"Wrote 8 bytes to {{cwd}}/data.txt", true},
		{"write created against replaced", "write",
			"<path>{{cwd}}/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>",
			"Wrote 11 bytes to {{cwd}}/notes.txt", false},
		{"write other path", "write",
			"<path>{{cwd}}/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>",
			"Wrote 11 bytes to {{cwd}}/other.txt (new file)", false},
		{"edit", "edit", "The file {{cwd}}/a.txt has been updated successfully.", "Edited a.txt: replaced 1 occurrence", true},
		{"edit all", "edit", "The file a.txt has been updated. All occurrences were successfully replaced.", "Edited {{cwd}}/a.txt: replaced 3 occurrences", true},
		{"edit other path", "edit", "The file a.txt has been updated successfully.", "Edited b.txt: replaced 1 occurrence", false},
		{"todo", "todo_write", "Updated todo list: 1 pending, 2 in progress, 0 completed.", "Updated todo list: 1 pending, 2 in progress, 0 completed.", true},
		{"subagent background start", "subagent", "started subagent 33333333-3333-4333-8333-333333333333", "started subagent 33333333-3333-4333-8333-333333333333", true},
		{"subagent background start, other child", "subagent", "started subagent 33333333-3333-4333-8333-333333333333", "started subagent 44444444-4444-4444-8444-444444444444", false},
		{"subagent background start against a final text", "subagent", "started subagent 33333333-3333-4333-8333-333333333333", "CHILD_OK", false},
		{"send_message", "send_message", "message queued as the next turn for subagent 33333333-3333-4333-8333-333333333333", "message queued as the next turn for subagent 33333333-3333-4333-8333-333333333333\n", true},
		{"send_message other child", "send_message", "message queued as the next turn for subagent 33333333-3333-4333-8333-333333333333", "message queued as the next turn for subagent 22222222-2222-4222-8222-222222222222", false},
		{"list_agents", "list_agents", "33333333-3333-4333-8333-333333333333 [ready] — Reply with CHILD_OK", "33333333-3333-4333-8333-333333333333 [ready] — Reply with CHILD_OK \n", true},
		{"list_agents other status", "list_agents", "33333333-3333-4333-8333-333333333333 [ready] — Reply with CHILD_OK", "33333333-3333-4333-8333-333333333333 [idle] — Reply with CHILD_OK", false},
		{"list_agents other label", "list_agents", "c1 [ready] — Reply with CHILD_OK", "c1 [ready] — Reply with CHILD", false},
		{"list_agents order", "list_agents", "c1 [ready] — a\nc2 [running] — b", "c2 [running] — b\nc1 [ready] — a", false},
		{"list_agents one missing", "list_agents", "c1 [ready] — a\nc2 [running] — b", "c1 [ready] — a", false},
		{"list_agents none", "list_agents", "(no subagents)", "(no subagents)\n", true},
		{"list_agents none against one", "list_agents", "(no subagents)", "c1 [ready] — a", false},
		{"list_agents descendants", "list_agents", "c1 [idle] parent=p depth=1 — a", "c1 [idle] parent=p depth=1 — a", true},
		{"list_agents diagnostic", "list_agents", "c1 [diagnostic: corrupt]", "c1 [diagnostic: unavailable]", false},
		{"report", "report", "report accepted by the agent that started you as message 87627538-d804-4d36-bb10-4768b6fcfb65", "report accepted by the agent that started you as message ec024a7a-5506-4ebf-a9d8-82ce01dc88b4", true},
		{"interrupt_agent", "interrupt_agent", "interrupt requested for agent c1", "interrupt requested for agent c1", true},
		{"interrupt_agent other agent", "interrupt_agent", "interrupt requested for agent c1", "interrupt requested for agent c2", false},
		{"todo other counts", "todo_write", "Updated todo list: 1 pending, 2 in progress, 0 completed.", "Updated todo list: 0 pending, 2 in progress, 1 completed.", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rule := toolRule(c.tool)
			if rule == nil {
				t.Fatalf("no rule for %s", c.tool)
			}
			a, ok := rule.essence(c.ref, nil)
			if !ok {
				t.Fatalf("the reference result is not recognized: %q", c.ref)
			}
			b, ok := rule.essence(c.reel, nil)
			if !ok {
				t.Fatalf("reel's result is not recognized: %q", c.reel)
			}
			if a.equal(b) != c.equal {
				t.Errorf("equal = %v, want %v\n  ref:  %s\n  reel: %s", !c.equal, c.equal, a, b)
			}
			if !c.equal && firstDifference(a, b) == "" {
				t.Errorf("firstDifference names nothing for %s / %s", a, b)
			}
			if !a.equal(a) || !b.equal(b) {
				t.Error("an essence is not equal to itself")
			}
		})
	}
}

// TestToolEssenceRefuses lists texts that are no result of the tool: the
// check must not read them as one.
func TestToolEssenceRefuses(t *testing.T) {
	cases := []struct{ tool, text string }{
		{"read", "ok"},
		{"read", "garbage 1: \x7f~#%q)"},
		{"read", "(no result)"},
		{"read", "<path>d</path>\n<type>directory</type>\n<content>\na\n</content>"},
		{"read", ""},
		{"bash", ""},
		{"glob", ""},
		{"glob", "\n\n(Showing 1 of 2 paths.)"},
		{"grep", ""},
		{"grep", "Found 1 match\n\na.go\nnot a row"},
		{"write", "ok"},
		{"write", "<path>p</path>\n<type>file</type>\n<content>\nsomething\n</content>"},
		{"edit", "ok"},
		{"todo_write", "ok"},
		{"send_message", "message queued"},
		{"send_message", "Error: subagent \"x\" is unavailable"},
		{"list_agents", ""},
		{"list_agents", "CHILD_OK"},
		{"list_agents", "c1 [ready] — a\nnot an entry"},
		{"report", "report accepted"},
		{"report", "ok"},
		{"interrupt_agent", "interrupted"},
		{"job_output", ""},
		{"job_output", "hello"},
		{"job_output", "hello\n[status: ]"},
		{"job_output", "[status: running] trailing"},
		{"job_kill", ""},
		{"job_kill", "requested cancellation of job "},
		{"job_kill", "job bash-1 had already finished"},
		{"job_kill", "Error: unknown job bash-9"},
		{"session_event_read", "Session a — t"},
		{"session_event_read", "Target event seq 5:"},
		{"session_event_read", ""},
	}
	for _, c := range cases {
		if e, ok := toolRule(c.tool).essence(c.text, nil); ok {
			t.Errorf("%s essence of %q = %s, want refused", c.tool, c.text, e)
		}
	}
}

// TestToolRulesDocumented keeps the table complete: every reel tool has a
// documented row.
func TestToolRulesDocumented(t *testing.T) {
	for _, name := range []string{"bash", "read", "write", "edit", "glob", "grep", "todo_write",
		"subagent", "subagent_fork", "send_message", "list_agents", "report", "interrupt_agent", "job_output", "job_kill"} {
		r := toolRule(name)
		if r == nil || r.Compared == "" || r.Normalized == "" || r.essence == nil {
			t.Errorf("tool %s has no complete row in ToolRules", name)
		}
	}
	for _, r := range MessageRules {
		if r.Class == "" || r.Source == "" || r.Compared == "" || r.match == nil || (!r.Presentation && r.identity == nil) {
			t.Errorf("message rule %q is incomplete", r.Class)
		}
	}
}

// TestWebFetchEssence: the recorded page (turndown's Markdown) and another
// Markdown rendering of the same page agree; a different page, status or
// URL does not.
func TestWebFetchEssence(t *testing.T) {
	recorded := "Fetched http://127.0.0.1:43117/menu.html (HTTP 200)\n\nMenu\n\n# Café menu\n\nPrices include **service & _tax_** — updated daily.\n\n-   Espresso\n-   Flat white\n\n| Drink | Price |\n| --- | --- |\n| Espresso | €2  |\n| Flat white | €3  |\n\nSee [today’s specials](https://fixture.invalid/specials)."
	other := "Fetched http://127.0.0.1:43117/menu.html (HTTP 200)\n\nMenu\n\nCafé menu\n=========\n\nPrices include *__service & *tax*__* — updated daily.\n\n- Espresso\n- Flat white\n\n|Drink|Price|\n|:---|:---|\n|Espresso|€2|\n|Flat white|€3|\n\nSee [today’s specials](https://fixture.invalid/specials).\n"
	want, ok := webFetchEssence(recorded, nil)
	if !ok {
		t.Fatal("the recorded result is not recognized")
	}
	if got, ok := webFetchEssence(other, nil); !ok || !want.equal(got) {
		t.Errorf("another rendering of the page differs:\n%s\n%s", want, got)
	}
	for name, text := range map[string]string{
		"another word":   strings.Replace(recorded, "Flat white | €3", "Flat black | €3", 1),
		"another price":  strings.Replace(recorded, "€3", "€4", 1),
		"another status": strings.Replace(recorded, "HTTP 200", "HTTP 404", 1),
		"another URL":    strings.Replace(recorded, "menu.html (", "menu.htm (", 1),
		"a word dropped": strings.Replace(recorded, "updated daily", "updated", 1),
	} {
		if got, _ := webFetchEssence(text, nil); want.equal(got) {
			t.Errorf("%s: still equal", name)
		}
	}
	if _, ok := webFetchEssence("Error: fetch failed", nil); ok {
		t.Error("a text without the Fetched line is recognized")
	}
}
