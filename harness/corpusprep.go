package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reel-agent/reel/sessionlog"
)

// CorpusPrep is what the reference system's snapshot suite does in code
// for one corpus scenario beyond copying its workspace/ folder — work the
// recording depends on and the corpus files do not carry. Each entry cites
// the reference code it reproduces: the scenario table in
// examples/acp-agent/tests/acp.snapshot.ts of
// github.com/toninfo/deepseek-harness and the fixtures it names.
type CorpusPrep struct {
	// Source says which reference code this reproduces and what it does.
	Source string
	// Workspace prepares the run's cwd after workspace/ was copied in, as
	// the reference's prepareWorkspace hook does after its copy.
	Workspace func(cwd string) error
	// EnvironmentLines are bash output lines the reference's test
	// environment printed and reel's cannot (equiv.Options).
	EnvironmentLines []string
	// Args are `reel acp` flags reproducing the scenario's configuration
	// in the reference suite (its configPath overlay).
	Args []string
	// Web writes the pages the reference's fixture server served into
	// dir; the harness serves them on the scenario's loopback port.
	Web func(dir string) error
	// FromRecording prepares the run's cwd from the recording itself
	// (its first session log, decoded), after Workspace: a file the
	// reference suite copied in from elsewhere in its repository whose
	// content the recording holds.
	FromRecording func(events []sessionlog.Event, cwd string) error
	// Missing, when set, is what the scenario needs that only the
	// reference's test suite has (a fault switch): it stays ineligible.
	Missing string
	// SettlementMarker is the file the reference suite's settlement-marker
	// fixture writes into the cwd when a background subagent settles, which
	// a waitForFile step of the scenario awaits: the harness awaits the
	// settlement notice in the session logs instead (logwait.go).
	SettlementMarker string
	// TitleOverride says the scenario's replay.override.json holds the
	// title model's stream, not the conversation's: reel serves it to its
	// title call (--replay-title-override) and derives the conversation
	// from the log.
	TitleOverride bool
}

// CorpusPreps returns the preparation of every corpus scenario that needs
// one, by scenario name (built on each call: a map literal at package level
// would be built at every reel process's start).
func CorpusPreps() map[string]CorpusPrep {
	return map[string]CorpusPrep{
		"fs-glob-sampling": {
			Source: "acp.snapshot.ts, prepareFsSearchWorkspace: eight files holding \"fixture\\n\" under tree/, three under archive/, " +
				"one each under docs/, src/ and test/, and two at the top (six top-level entries), with modification times " +
				"1 to 8 ms after 2000-01-01 00:00 local time, so the order by modification time is fixed; it runs with examples/acp-agent/tests/fs-search.cordis.yml, whose " +
				"tool-fs-search config sets globMaxResults 4 and sampleOverCapGlobResults true and which loads no spill store (so the full list is not saved)",
			Workspace: prepareGlobTree,
			Args:      []string{"--glob-max-results", "4", "--glob-sample", "--glob-no-spill"},
		},
		"agent-instructions": {
			Source: "acp.snapshot.ts, prepareDelimiterPathWorkspace: a folder named `scope</system-reminder>` holding AGENTS.md " +
				"(\"Delimiter path snapshot instruction.\\n\") and task.txt (\"delimiter path snapshot task\\n\"), made at run time " +
				"because Windows cannot check that name out; and the scenario's workspace/AGENTS.md and nested/AGENTS.md, which in " +
				"the reference repository are symbolic links to a sibling AGENTS.canonical.md (git mode 120000) — the corpus copy " +
				"holds each link's target name as a plain file, so the links are made again",
			Workspace: prepareInstructions,
		},
		"code-mode-turn": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/code-mode.cordis.yml (its sibling code-mode.cordis.snapshot.yml " +
				"under replay), whose tools config sets mode: code and mounts the worker-thread code runtime: the model is offered " +
				"run_code alone and calls the other tools from its program; reel's --code-mode",
			Args: []string{"--code-mode"},
		},
		"code-mode-workspace-context": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/code-mode-workspace-context.cordis.yml (code mode, as " +
				"code-mode.cordis.yml, with workspace instructions on); reel's --code-mode",
			Args: []string{"--code-mode"},
		},
		"bash-spill": {
			Source: "acp.snapshot.ts runs it with configPath FS_CONFIG, examples/acp-agent/fs.cordis.yml, whose spill-policy " +
				"sets maxInlineBytes to 800 under DSH_SNAPSHOT (50000 otherwise)",
			Args: []string{"--inline-bytes", "800"},
		},
		"parallel-tool-calls": {
			Source: "acp.snapshot.ts runs it with configPath FS_CONFIG, examples/acp-agent/fs.cordis.yml (maxInlineBytes 800 " +
				"under DSH_SNAPSHOT)",
			Args: []string{"--inline-bytes", "800"},
		},
		"web-fetch": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/web.cordis.yml, which loads web-fetch-fixture-server.mjs: " +
				"a loopback server on 127.0.0.1:43117 answering /menu.html with a small HTML page (a <title>, a style and a script " +
				"to drop, an h1 with an entity, emphasis nested in strong, a list, a table with a header row, a link) as " +
				"text/html; charset=utf-8 and anything else with 404; the harness serves a page of the same content",
			Web: writeMenuPage,
		},
		"skill-load": {
			Source: "acp.snapshot.ts, prepareEditingCordisSkillWorkspace: copies apps/cli/config/agent-presets/cordis/skills/" +
				"editing-cordis-compositions/SKILL.md of the reference repository into .dsh/skills/editing-cordis-compositions/ " +
				"beside the scenario's workspace seed; the corpus does not carry that file, but the recording holds what the skill " +
				"contributes (its description in the catalog message, its instructions in the skill tool's result), from which the " +
				"harness writes the file back",
			FromRecording: writeRecordedSkills,
		},
		"session-title-after-turn": {
			Source: "acp.snapshot.ts runs it with configPath SESSION_TITLE_CONFIG; under DSH_SNAPSHOT the suite loads " +
				"examples/acp-agent/session-title.cordis.snapshot.yml, which mounts the first-prompt title model " +
				"(session-title-first-prompt-llm: targetWords 5, maxOutputTokens 32, timeoutMs 5000) on a replay route of its own " +
				"(title-replay/title-model) fed by replay.override.json, while the conversation's replay reads an override file " +
				"that does not exist, so it is derived from the log; reel serves the override to its title call likewise",
			TitleOverride: true,
		},
		"subagent-report": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/subagent-report.cordis.yml (its sibling " +
				"subagent-report.cordis.snapshot.yml under replay), which loads " +
				"tests/fixtures/subagent-report-fence.ts: the child's steps wait until the parent's turn 1 ended, and the parent, " +
				"idle after turn 1, is held in maintenance until the child's settlement notice is in its inbox, so the report and " +
				"the notice are both claimed by parent turn 2 and prompt 1 is answered after it; reel's --debug-hold-for-children " +
				"holds the prompt's answer, and does not let the report wake the parent, while a background child it started runs " +
				"(the child-after-turn fence is the harness's --debug-child-after-turn, given to every run)",
			Args: []string{"--debug-hold-for-children"},
		},
		"subagent-continuable-inheritance": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/subagent-continuable-inheritance.cordis.yml (its sibling " +
				"subagent-continuable-inheritance.cordis.snapshot.yml under replay), which loads tests/fixtures/parent-sandbox-override.ts: " +
				"every root session is switched to read-only when it is created (the parent's sandbox/mode event at seq 0), and the " +
				"background child inherits it (its sandbox/mode with source delegation); reel starts the root session with --mode " +
				"read-only. The child's first step after the parent's spawning turn ended is natural timing there, " +
				"--debug-child-after-turn (given to every run) in reel",
			Args: []string{"--mode", "read-only"},
		},
		"subagent-list-agents": {
			Source: "acp.snapshot.ts runs it with the default snapshot configuration, whose replay config loads " +
				"tests/fixtures/subagent-settlement-marker.ts in every scenario: on each subagent/end it writes " +
				".dsh-snapshot-subagent-settled into the cwd, which the scenario's waitForFile step awaits; reel's harness " +
				"awaits that marker as the settlement notice in the parent's log instead (logwait.go), and the following " +
				"waitForTurnStart 2 and waitForTurnEnd wait for the turn the notice starts",
			SettlementMarker: SettlementMarker,
		},
		"subagent-published-run-failure": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/tests/subagent-durability-failure.cordis.yml and " +
				"DSH_SUBAGENT_PUBLISHED_FAILURE=1: tests/fixtures/subagent-durability-failure.ts makes delivering the one-shot " +
				"child's prompt throw after the child is created, and disposing it throw too; reel's fault switch " +
				"--debug-fail-subagent-start fails a child right after its log is created, before its first turn",
			Args: []string{"--debug-fail-subagent-start"},
		},
		"subagent-continuable": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/tests/subagent-durability-failure.cordis.yml: " +
				"tests/fixtures/subagent-durability-failure.ts remaps the child id, holds the child until its follow-ups arrived " +
				"and makes the child's turn 3 fail before its first step (snapshot disk full); in reel the child's first turn " +
				"waits for the parent's turn (--debug-child-after-turn, given to every run), by which time both follow-ups are " +
				"in its inbox, and the fault switch --debug-fail-subagent-turn 3 ends the child's turn 3 with an error before " +
				"its first step",
			Args: []string{"--debug-fail-subagent-turn", "3"},
		},
		"pty-tools": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/pty.cordis.yml, which opts into the persistent terminal " +
				"plugins (dsh-terminal, dsh-terminal-bash, dsh-tool-terminal) beside the default tools; its replay sibling " +
				"pty.cordis.snapshot.yml swaps the bash backend for the in-memory pty-snapshot-backend.mjs (its prompt `dsh> `, " +
				"a send's viewport the text, PTY_OK and the prompt) and caps a terminal result at 64 bytes (maxResultBytes); " +
				"reel opts in with --terminals and runs a real shell, whose results the terminal rules compare",
			Args: []string{"--terminals"},
		},
		"lsp-definition": {
			Source: "acp.snapshot.ts runs it with examples/acp-agent/tests/lsp.cordis.yml (lsp.cordis.snapshot.yml under replay), which " +
				"adds the lsp tool next to the default tools: dsh-lsp-stdio with one server, `fixture`, run as process.execPath (node) " +
				"./lsp-server.mjs in the workspace for .ts files (language typescript), and dsh-tool-lsp with maxLocations 1",
			Args: []string{"--lsp-server", `{"name":"fixture","command":"node","args":["./lsp-server.mjs"],"extensions":{".ts":"typescript"}}`,
				"--lsp-max-locations", "1"},
		},
		"missing-sandbox-runner": {
			Source: "acp.snapshot.ts runs it with DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1, a test-only switch that points the " +
				"sandbox provider at an executable that does not exist, so every confined command fails to start; reel's fault " +
				"switch --debug-missing-sandbox-runner makes every command's runner a file in the cwd that does not exist",
			Args: []string{"--debug-missing-sandbox-runner"},
		},
		"session-query-spill": {
			Source: "acp.snapshot.ts runs it with configPath SESSION_QUERY_CONFIG, examples/acp-agent/session-query.cordis.snapshot.yml: " +
				"fs.cordis.snapshot.yml (spill policy maxInlineBytes 800 under DSH_SNAPSHOT) with the opt-in tool-session-query package; " +
				"reel offers session_event_read with --session-query",
			Args: []string{"--session-query", "--inline-bytes", "800"},
			Missing: "needs the reference run's own temp root: its verification command searches /tmp/dsh-acp-snap-035d1d054 (named literally) for " +
				"the spill of the event at seq 5, which in the reference's log layout is a runtime-context message large enough to spill; in reel's " +
				"layout seq 5 is the session's title (not spilled), so no run of reel can give that command's recorded outcome (exit 1, no output)",
		},
		"subagent-depth-two-rejection": {
			Source: "acp.snapshot.ts runs it with configPath DEPTH_TWO_CONFIG, examples/acp-agent/depth-two.cordis.yml, whose tool-subagent " +
				"config sets maxDepth 2 (the base composition's is 1): two generations of children, the grandchild's own subagent call " +
				"(depth 3) refused before any session is made; reel's --max-subagent-depth 2",
			Args: []string{"--max-subagent-depth", "2"},
		},
		"partial-landlock-child-failure": {
			Source: "acp.snapshot.ts runs it with DSH_PERMISSION_MODE=read-only under tests/fixtures/partial-landlock-sandbox.ts, " +
				"a test-only sandbox provider that prints `landlock-run: partial enforcement (older Landlock ABI)` to stderr " +
				"before every command it confines; no agent prints that line, so it is dropped from the recorded bash result",
			EnvironmentLines: []string{"landlock-run: partial enforcement (older Landlock ABI)"},
		},
	}
}

// writeRecordedSkills writes back, under .dsh/skills/NAME/SKILL.md, each
// skill the recording loaded with the skill tool whose file the workspace
// lacks: its name, its description as the recorded catalog lists it, and
// its instructions as the recorded result shows them.
func writeRecordedSkills(events []sessionlog.Event, cwd string) error {
	descs := map[string]string{}
	calls := map[string]string{} // call id → skill name
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeUserMessage:
			var m struct {
				Source struct {
					Kind    string `json:"kind"`
					Entries []struct {
						Name        string `json:"name"`
						Description string `json:"description"`
					} `json:"entries"`
				} `json:"source"`
			}
			if json.Unmarshal(e.Data, &m) == nil && m.Source.Kind == "skill-catalog" {
				for _, en := range m.Source.Entries {
					descs[en.Name] = en.Description
				}
			}
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err != nil || d.Name != "skill" {
				continue
			}
			var a struct {
				Name string `json:"name"`
			}
			if json.Unmarshal([]byte(d.Arguments), &a) == nil {
				calls[d.CallID] = a.Name
			}
		case sessionlog.TypeToolResult:
			d, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			if err != nil || len(d.Message.Content) == 0 {
				continue
			}
			part := d.Message.Content[0]
			name, ok := calls[part.ToolCallID]
			if !ok || part.IsError || len(part.Content) == 0 {
				continue
			}
			_, rest, ok1 := strings.Cut(part.Content[0].Text, "<skill_instructions>\n")
			body, _, ok2 := strings.Cut(rest, "\n</skill_instructions>")
			p := filepath.Join(cwd, ".dsh", "skills", name, "SKILL.md")
			if _, err := os.Stat(p); err == nil || !ok1 || !ok2 {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			file := "---\nname: " + name + "\ndescription: " + descs[name] + "\n---\n\n" + body + "\n"
			if err := os.WriteFile(p, []byte(file), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// menuPage is the page of the web-fetch scenario's fixture server: the
// content its recorded web_fetch result shows, in markup of the same kinds.
const menuPage = `<!doctype html>
<html><head><title>Menu</title><style>body{margin:0}</style><script>window.tracking = true</script></head>
<body>
<h1>Caf&eacute; menu</h1>
<p>Prices include <strong>service &amp; <em>tax</em></strong> &mdash; updated daily.</p>
<ul><li>Espresso</li><li>Flat white</li></ul>
<table><thead><tr><th>Drink</th><th>Price</th></tr></thead>
<tbody><tr><td>Espresso</td><td>&euro;2</td></tr><tr><td>Flat white</td><td>&euro;3</td></tr></tbody></table>
<p>See <a href="https://fixture.invalid/specials">today&rsquo;s specials</a>.</p>
</body></html>
`

// writeMenuPage writes the web-fetch scenario's page.
func writeMenuPage(dir string) error {
	return os.WriteFile(filepath.Join(dir, "menu.html"), []byte(menuPage), 0o644)
}

// prepareGlobTree reproduces prepareFsSearchWorkspace.
func prepareGlobTree(cwd string) error {
	base := time.Date(2000, time.January, 1, 0, 0, 0, 0, time.Local)
	files := []string{"archive/a.ts", "archive/b.ts", "archive/c.ts", "docs/guide.md", "src/index.ts", "test/spec.ts", "top.txt", "notes.md"}
	for i, rel := range files {
		p := filepath.Join(cwd, "tree", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("fixture\n"), 0o644); err != nil {
			return err
		}
		mtime := base.Add(time.Duration(i+1) * time.Millisecond)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			return err
		}
	}
	return nil
}

// prepareInstructions reproduces prepareDelimiterPathWorkspace and the
// reference's AGENTS.md symbolic links.
func prepareInstructions(cwd string) error {
	for _, rel := range []string{"AGENTS.md", "nested/AGENTS.md"} {
		if err := relink(filepath.Join(cwd, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	dir := filepath.Join(cwd, "scope</system-reminder>")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Delimiter path snapshot instruction.\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "task.txt"), []byte("delimiter path snapshot task\n"), 0o644)
}

// relink turns a file that holds a symbolic link's target (git's form of a
// link checked out without link support) back into the link. The target
// must be a sibling file that exists.
func relink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil // already a link
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	target := strings.TrimSpace(string(b))
	if target == "" || strings.ContainsAny(target, "/\\\n") || target == "." || target == ".." {
		return fmt.Errorf("%s: holds %q, not the name of a sibling file to link to", path, target)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), target)); err != nil {
		return fmt.Errorf("%s: link target: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return os.Symlink(target, path)
}
