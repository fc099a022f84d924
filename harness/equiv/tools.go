package equiv

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ToolRule says how the successful results of one tool are compared. The
// outcome (isError) of every call is always compared; a rule adds what
// must also agree when both sides succeeded.
//
// Every essence function accepts both presentations — the reference
// system's and reel's — so one function reduces either side, and `reel
// log diff` works on any two logs. A result the function does not
// recognize is reported: on the side under test as a difference (it is no
// result this tool produces), on the expected side as unchecked.
type ToolRule struct {
	// Tool is the tool's name.
	Tool string
	// Compared is the essential content that must be equal.
	Compared string
	// Normalized lists the presentation differences taken out first.
	Normalized string
	// essence reduces a successful result to its essential content; ok is
	// false when text is in no presentation the rule knows.
	essence func(text string, meta json.RawMessage) (e Essence, ok bool)
}

// Essence is the essential content of one tool result.
type Essence struct {
	// Facts are scalar facts ("exit 0", "path notes.txt", "created"), in
	// order.
	Facts []string
	// Items are the content lines (file lines, output lines, paths,
	// matches).
	Items []string
	// Unordered says Items are compared as a multiset: the two systems
	// order them differently (a glob listing, grep matches, interleaved
	// stdout and stderr).
	Unordered bool
	// Inline is, for a spilled bash result, how many bytes the model is
	// shown: the result's whole text less the spill path its notice names
	// (0: not spilled). Two are equal within spillSlack bytes.
	Inline int
}

// ToolRules is the per-tool normalization table: for each tool, what of a
// successful result is compared and which presentation differences between
// the reference's and reel's formats are normalized away. It is rendered
// into docs/scenarios.md (see MarkdownTables).
var ToolRules = []ToolRule{
	{
		Tool:     "read",
		Compared: "the file lines shown, each with its line number, in order (an empty file: no lines)",
		Normalized: "the reference's `<path>/<type>/<content>` envelope and `N: text` rows against reel's `cat -n` rows (`%6d\\t`); " +
			"end-of-file and window notes (`(End of file - total N lines)`, `(Showing lines …)`); " +
			"a line longer than 2000 characters is compared on its first 2000 (the two mark the cut differently)",
		essence: readEssence,
	},
	{
		Tool: "bash",
		Compared: "the exit status (code, or the signal that killed it), a timeout, a sandbox denial, whether the output was spilled to a file and the whole result's size (shown + omitted bytes), and the output lines; " +
			"a spilled result by that size, how much of it is shown inline (the result's text less the spill path it names, within " + spillSlackText + " bytes: " +
			"both fill the inline cap, and each system's spill path has its own length) and the first and last " + spillEdgeText + " bytes shown",
		Normalized: "`[exit code: N]` against `[exit code N]`, `[killed by signal: SIGX]` against `[killed by signal N (description)]` (N mapped to its Linux name), `[timed out after Nms]` against `[timed out after N ms]`; " +
			"the reference's trailing `[sandbox: file access denied under M mode]` against reel's leading `[sandbox denied: mode M]` line; " +
			"`(no output)` is no lines; the reference prints stderr after stdout under a `[stderr]` line while reel interleaves the two streams, " +
			"so output with a stderr part is compared as a multiset of lines; the spill file's path (its length within the slack above); trailing newlines",
		essence: bashEssence,
	},
	{
		Tool:     "glob",
		Compared: "the set of paths listed, relative to the working directory, and the total when the list is cut (`Showing K of N`)",
		Normalized: "order (both list by modification time, oldest first, and may sample across top-level entries); " +
			"`No files found` against `No files match …`; absolute against cwd-relative paths; the wording of the cut and recovery notes",
		essence: globEssence,
	},
	{
		Tool:     "grep",
		Compared: "the set of matches as path:line:text (a file list: the set of paths; counts: path and count)",
		Normalized: "the reference's `Found N matches` header and per-file `Line N: text` sections against reel's `path:line:text` rows; " +
			"order; `No matches found`; absolute against cwd-relative paths; cut and recovery notes",
		essence: grepEssence,
	},
	{
		Tool:       "write",
		Compared:   "the path written and whether the file was created or replaced",
		Normalized: "the reference's envelope with `Created file` / `Updated file` against reel's `Wrote N bytes to P (new file)` / `Wrote N bytes to P`; absolute against cwd-relative paths",
		essence:    writeEssence,
	},
	{
		Tool:       "edit",
		Compared:   "the path edited",
		Normalized: "`The file P has been updated successfully.` (or `… All occurrences were successfully replaced.`) against `Edited P: replaced N occurrence(s)`; absolute against cwd-relative paths",
		essence:    editEssence,
	},
	{
		Tool:       "todo_write",
		Compared:   "the pending, in-progress and completed counts",
		Normalized: "none: both print `Updated todo list: X pending, Y in progress, Z completed.`",
		essence:    todoEssence,
	},
	{
		Tool:     "web_fetch",
		Compared: "the URL fetched, the HTTP status, and the words of the page as text, in order",
		Normalized: "the Markdown each system makes of the page: list markers and their spacing, table pipes, alignment rows and " +
			"padding, emphasis, heading (`#`, `===`) and quote marks, link syntax (the link text and its URL are words like any other)",
		essence: webFetchEssence,
	},
	{
		Tool:       "read_image",
		Compared:   "the image file's path (relative to the working directory), its media type, dimensions and size as the text states them, and the image part the result carries: attachment id (the digest of the bytes), media type, dimensions and size",
		Normalized: "the file name an attachment reference may carry",
		essence:    readImageEssence,
	},
	{
		Tool: "subagent",
		Compared: "a foreground child's final text, line by line (the call's description, prompt and run_in_background are compared with every call's arguments; " +
			"a failed child is compared by isError only); a background start by the child id it names",
		Normalized: "the lines' trailing blanks and the result's trailing empty lines",
		essence:    subagentEssence,
	},
	{
		Tool:       "subagent_fork",
		Compared:   "the forked child's final text, line by line (description and prompt are compared with every call's arguments; a failed child is compared by isError only)",
		Normalized: "the lines' trailing blanks and the result's trailing empty lines",
		essence:    subagentEssence,
	},
	{
		Tool:       "send_message",
		Compared:   "the child the turn was queued for (the message is compared with every call's arguments; a refusal, such as an unknown id, by isError only)",
		Normalized: "none: both answer `message queued as the next turn for subagent <id>`",
		essence:    sendMessageEssence,
	},
	{
		Tool:       "list_agents",
		Compared:   "the lines, in order: each child's id, status (`running`, `idle`, `ready`) and label; `(no subagents)`",
		Normalized: "the lines' trailing blanks and the result's trailing empty lines",
		essence:    listAgentsEssence,
	},
	{
		Tool:       "report",
		Compared:   "that the report was accepted",
		Normalized: "the id of the parent's message the text names (each system mints its own)",
		essence:    reportEssence,
	},
	{
		Tool:       "interrupt_agent",
		Compared:   "the agent the interrupt was requested for",
		Normalized: "none: both answer `interrupt requested for agent <id>`",
		essence:    interruptEssence,
	},
	{
		Tool: "job_output",
		Compared: "the status line (status and detail), the sandbox's verdict (a runner that failed, a denial), that the process could not be spawned, " +
			"and the other output lines in order (stdout, the `[stderr]` line and stderr)",
		Normalized: "the wording of a spawn failure's operating-system error (Node's `Error: spawn PATH ENOENT` against Go's `fork/exec PATH: …`); " +
			"the wording of a denial line; `(no output)`; trailing blanks and trailing empty lines",
		essence: jobOutputEssence,
	},
	{
		Tool:       "job_kill",
		Compared:   "the job named and whether its cancellation was requested or it had already finished (with its status line)",
		Normalized: "none: both answer `requested cancellation of job <id>` or `job <id> had already finished [status: …]`",
		essence:    jobKillEssence,
	},
	{
		Tool:     "session_event_read",
		Compared: "the session's title the result names and the seq read",
		Normalized: "the session id (each system's own); the event at the seq, its JSON and the neighbours' summaries: the two systems lay a log out " +
			"differently (the reference's runtime-context message, reel's sandbox/mode and approval/policy events), so one seq names different events; whether it was spilled",
		essence: eventReadEssence,
	},
	{
		Tool: "run_code",
		Compared: "the program's output, line by line: the lines it printed, then its return value (a string as it is, other values as indented JSON); " +
			"the tool calls the program made are compared as the model's calls are (\"program call N\": tool, arguments, call id, outcome and, by the called tool's rule, essential content)",
		Normalized: "the lines' trailing blanks and the result's trailing empty lines",
		essence:    runCodeEssence,
	},
	{
		Tool:       "skill",
		Compared:   "the skill's name, its base directory (relative to the working directory) and the lines of its instructions, in order",
		Normalized: "the lines' surrounding blanks and empty lines",
		essence:    skillEssence,
	},
	{
		Tool:       "terminal_open",
		Compared:   "the terminal's id, display name and backend type",
		Normalized: "the startup output (each system's shell prints its own prompt)",
		essence:    terminalOpenEssence,
	},
	{
		Tool:     "terminal_send",
		Compared: "the wait reason, the shell's status and the output lines (from the logged viewport when the result has one, else from the text)",
		Normalized: "each line's leading shell prompt (`dsh> `, `reel> `) and prompt-only lines; " +
			"a result cut to its tail is compared by its viewport (the reference logs it whole)",
		essence: terminalSendEssence,
	},
	{
		Tool:       "terminal_read",
		Compared:   "the page's place (`[lines: A-B of N]`), whether output was dropped, and its lines",
		Normalized: "each line's leading shell prompt and prompt-only lines",
		essence:    terminalReadEssence,
	},
	{
		Tool:       "terminal_signal",
		Compared:   "the signal delivered",
		Normalized: "the foreground process group's id (each run's own)",
		essence:    terminalSignalEssence,
	},
	{
		Tool:       "terminal_list",
		Compared:   "a line per terminal: id, name, type and status, in order; `(no terminal sessions)`",
		Normalized: "the `pid=N` each line may end with",
		essence:    terminalListEssence,
	},
	{
		Tool:       "terminal_close",
		Compared:   "the terminal closed (or already closing)",
		Normalized: "none: both answer `closed terminal session <id>`",
		essence:    terminalCloseEssence,
	},
	{
		Tool:       "lsp",
		Compared:   "the result's lines, in order: each location as path:line:character, the omission note, `No results.`; a hover's text",
		Normalized: "absolute against cwd-relative paths of locations; the lines' trailing blanks and the result's trailing empty lines",
		essence:    lspEssence,
	},
}

// lspEssence reduces an lsp result to its lines, a location's path made
// cwd-relative.
func lspEssence(text string, _ json.RawMessage) (Essence, bool) {
	e := Essence{Facts: []string{"lsp result"}}
	body := strings.TrimRight(text, " \t\n")
	if body == "" {
		return e, true
	}
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimRight(l, " \t")
		if m := lspLocation.get().FindStringSubmatch(l); m != nil {
			l = relPath(m[1]) + m[2]
		}
		e.Items = append(e.Items, l)
	}
	return e, true
}

// lspLocation is one location line of an lsp result.
var lspLocation = &pattern{expr: `^(.+)(:\d+:\d+)$`}

// toolRule returns the rule for a tool, or nil.
func toolRule(name string) *ToolRule {
	for i := range ToolRules {
		if ToolRules[i].Tool == name {
			return &ToolRules[i]
		}
	}
	return nil
}

// relPath strips the {{cwd}} prefix (and "./") from a path, so an absolute
// path under the working directory and a cwd-relative one agree.
func relPath(p string) string {
	p = strings.TrimSpace(p)
	switch {
	case p == cwdToken:
		return "."
	case strings.HasPrefix(p, cwdToken+"/"):
		p = p[len(cwdToken)+1:]
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// maxLineRunes is where both systems cut a long line of read and grep.
const maxLineRunes = 2000

var (
	refLineCut  = &pattern{expr: `\.\.\. \(line truncated to \d+ chars\)$`}
	reelLineCut = &pattern{expr: `… \[line cut: \d+ characters\]$`}
)

// lineText normalizes one shown line: the cut markers removed, at most
// maxLineRunes characters.
func lineText(s string) string {
	s = refLineCut.get().ReplaceAllString(s, "")
	s = reelLineCut.get().ReplaceAllString(s, "")
	if utf8.RuneCountInString(s) > maxLineRunes {
		s = string([]rune(s)[:maxLineRunes])
	}
	return s
}

var (
	refReadRow  = &pattern{expr: `^(\d+): ?(.*)$`}
	reelReadRow = &pattern{expr: `^ *(\d+)\t(.*)$`}
	reelEmpty   = &pattern{expr: `^\(.* is empty\)$`}
)

// readEssence reduces a read result to its numbered lines.
func readEssence(text string, _ json.RawMessage) (Essence, bool) {
	if strings.HasPrefix(text, "<path>") {
		head, body, ok := strings.Cut(text, "\n<content>\n")
		if !ok || !strings.Contains(head, "\n<type>file</type>") {
			return Essence{}, false
		}
		body = strings.TrimSuffix(strings.TrimRight(body, "\n"), "</content>")
		var e Essence
		for _, line := range strings.Split(body, "\n") {
			m := refReadRow.get().FindStringSubmatch(line)
			if m == nil {
				break
			}
			e.Items = append(e.Items, m[1]+": "+lineText(m[2]))
		}
		return e, true
	}
	if reelEmpty.get().MatchString(strings.TrimSpace(text)) {
		return Essence{}, true
	}
	var e Essence
	for _, line := range strings.Split(text, "\n") {
		m := reelReadRow.get().FindStringSubmatch(line)
		if m == nil {
			break
		}
		e.Items = append(e.Items, m[1]+": "+lineText(m[2]))
	}
	if len(e.Items) == 0 {
		return Essence{}, false
	}
	return e, true
}

var (
	spillNotice = &pattern{expr: `(?s)(?:\n\n)?\(Omitted (\d+) bytes\. [^\n]*\)$`}
	streamCut   = &pattern{expr: `\n\[output truncated; full output: [^\]\n]*\]`}
	// bashMarker matches one trailing status line of either system.
	bashMarker = &pattern{expr: `^(?:` +
		`\[exit code:? (\d+)\]` + // 1: exit code
		`|\[killed by signal (\d+) \([^)\]]*\)\]` + // 2: signal number (reel)
		`|\[killed by signal: ([A-Za-z0-9]+)\]` + // 3: signal name (reference)
		`|\[timed out after (\d+) ?ms\]` + // 4: timeout
		`|\[sandbox: file access denied under ([a-z-]+) mode\]` + // 5: reference denial
		`|\[sandbox: escalation available[^\]]*\]` +
		`|\[cancelled\])$`}
	// reelDenial is reel's denial marker, which starts the result.
	reelDenial = &pattern{expr: `^\[sandbox denied: mode ([a-z-]+)\][^\n]*\n`}
)

// bashEssence reduces a bash result to its status and output lines.
func bashEssence(text string, _ json.RawMessage) (Essence, bool) {
	if text == "" {
		return Essence{}, false
	}
	var e Essence
	exit, signal, denied, timeout := "0", "", "", false
	if m := reelDenial.get().FindStringSubmatch(text); m != nil {
		denied = m[1]
		text = text[len(m[0]):]
	}
	spilled := ""
	if m := spillNotice.get().FindStringSubmatchIndex(text); m != nil {
		// What fits beside the notice depends on the notice's length (the
		// spill path), so the two systems show and omit different byte
		// counts of the same result: its whole size is the fact.
		omitted, _ := strconv.Atoi(text[m[2]:m[3]])
		e.Inline = len(text) - len(spillPath(text[m[0]:]))
		text = text[:m[0]]
		spilled = strconv.Itoa(len(text) + omitted)
	}
	truncated := streamCut.get().MatchString(text)
	text = streamCut.get().ReplaceAllString(text, "")
	// Status lines come last, each on its own line.
	for {
		i := strings.LastIndexByte(text, '\n')
		last := text[i+1:]
		m := bashMarker.get().FindStringSubmatch(last)
		if m == nil {
			break
		}
		switch {
		case m[1] != "":
			exit = m[1]
		case m[2] != "":
			signal = signalName(m[2])
		case m[3] != "":
			signal = m[3]
		case m[4] != "":
			timeout = true
		case m[5] != "":
			denied = m[5]
		}
		if i < 0 {
			text = ""
			break
		}
		text = text[:i]
	}
	if signal != "" {
		e.Facts = append(e.Facts, "killed by signal "+signal)
	} else {
		e.Facts = append(e.Facts, "exit "+exit)
	}
	if timeout {
		e.Facts = append(e.Facts, "timed out")
	}
	if denied != "" {
		e.Facts = append(e.Facts, "sandbox denied ("+denied+")")
	}
	if spilled != "" {
		e.Facts = append(e.Facts, "spilled, the whole result "+spilled+" bytes")
	}
	if truncated {
		e.Facts = append(e.Facts, "output cut")
	}
	body := strings.TrimRight(text, "\n")
	if body == "(no output)" {
		body = ""
	}
	if before, after, ok := cutLine(body, "[stderr]"); ok {
		body = strings.TrimRight(before, "\n")
		if body != "" && after != "" {
			body += "\n"
		}
		body += after
		e.Unordered = true
	}
	if spilled != "" {
		// A spilled result shows a head and a tail of the whole, each as
		// long as the notice leaves room for: compare the edges both
		// systems show whatever their notice's length.
		e.Items = spillEdges(body, spillEdge)
		return e, true
	}
	if body != "" {
		e.Items = strings.Split(body, "\n")
	}
	return e, true
}

// spillSlack is how far apart two spilled results' inline sizes may be
// and still be equal. Both systems fill the inline cap with the head, the
// tail and the notice, and the notice names the spill file, whose path
// has a length of its own in each system and run (the reference's
// /tmp/dsh-acp-snap-…/session-…/…-bash.txt, reel's
// <state>/reel/spill/<session>/bash-N.txt; a normalized log shows
// {{tmp}}), so the size less the path still differs by the two paths'
// lengths. Showing twice as much, or half, differs by far more under the
// smallest cap the corpus uses (800 bytes).
const spillSlack = 100

// spillSlackText is spillSlack in decimal, for the rule's text (a
// constant, so ToolRules is initialized statically; TestSpillTexts holds
// the two together).
const spillSlackText = "100"

// spillStoredAt finds the spill path in a notice: "stored at: PATH. Use …"
// (reel and the reference alike; reel's "only its first N bytes are
// stored at: PATH. …" too).
var spillStoredAt = &pattern{expr: `stored at: (.*?)\. [A-Z]`}

// spillPath is the spill path a notice names, or "" when it names none
// (the result was not stored).
func spillPath(notice string) string {
	if m := spillStoredAt.get().FindStringSubmatch(notice); m != nil {
		return m[1]
	}
	return ""
}

// spillEdge is how much of a spilled result's head and of its tail are
// compared: less than either system shows beside its notice under an
// 800-byte cap (the smallest the corpus uses).
const spillEdge = 200

// spillEdgeText is spillEdge in decimal (see spillSlackText).
const spillEdgeText = "200"

// spillEdges is the first and last n bytes of a spilled result's shown
// text (cut on character boundaries), as two items.
func spillEdges(body string, n int) []string {
	if len(body) <= 2*n {
		return []string{"head+tail: " + body}
	}
	head, tail := body[:n], body[len(body)-n:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return []string{"head: " + head, "tail: " + tail}
}

// signalName maps a signal number to its name ("9" → "SIGKILL"); an
// unknown number stays a number. reel prints the number (and Go's
// description), the reference the name; these are the Linux numbers.
func signalName(n string) string {
	switch n {
	case "1":
		return "SIGHUP"
	case "2":
		return "SIGINT"
	case "3":
		return "SIGQUIT"
	case "4":
		return "SIGILL"
	case "6":
		return "SIGABRT"
	case "7":
		return "SIGBUS"
	case "8":
		return "SIGFPE"
	case "9":
		return "SIGKILL"
	case "10":
		return "SIGUSR1"
	case "11":
		return "SIGSEGV"
	case "12":
		return "SIGUSR2"
	case "13":
		return "SIGPIPE"
	case "14":
		return "SIGALRM"
	case "15":
		return "SIGTERM"
	}
	return "signal " + n
}

// cutLine splits s around the first line that is exactly line.
func cutLine(s, line string) (before, after string, ok bool) {
	switch {
	case s == line:
		return "", "", true
	case strings.HasPrefix(s, line+"\n"):
		return "", s[len(line)+1:], true
	}
	if i := strings.Index(s, "\n"+line+"\n"); i >= 0 {
		return s[:i+1], s[i+len(line)+2:], true
	}
	if strings.HasSuffix(s, "\n"+line) {
		return s[:len(s)-len(line)], "", true
	}
	return s, "", false
}

var (
	showing   = &pattern{expr: `\(Showing (\d+) of (\d+) `}
	globStop  = &pattern{expr: `\(glob stopped `}
	reelNoHit = &pattern{expr: `^No files match `}
)

// globEssence reduces a glob result to its set of paths.
func globEssence(text string, _ json.RawMessage) (Essence, bool) {
	e := Essence{Unordered: true}
	list, notes, _ := strings.Cut(text, "\n\n(")
	notes = "(" + notes
	if m := showing.get().FindStringSubmatch(notes); m != nil {
		e.Facts = append(e.Facts, "total "+m[2])
	}
	if globStop.get().MatchString(notes) {
		e.Facts = append(e.Facts, "search stopped early")
	}
	list = strings.TrimSpace(list)
	switch {
	case list == "":
		return Essence{}, false
	case list == "No files found", reelNoHit.get().MatchString(list):
		return e, true
	}
	for _, p := range strings.Split(list, "\n") {
		e.Items = append(e.Items, relPath(p))
	}
	slices.Sort(e.Items)
	return e, true
}

var (
	refGrepHead = &pattern{expr: `^Found (?:(\d+) of )?(\d+) match(?:es)?$`}
	refGrepRow  = &pattern{expr: `^Line (\d+): ?(.*)$`}
	reelGrepRow = &pattern{expr: `^(.+?):(\d+):(.*)$`}
	reelGrepCnt = &pattern{expr: `^(.+):(\d+)$`}
)

// grepEssence reduces a grep result to its set of matches.
func grepEssence(text string, _ json.RawMessage) (Essence, bool) {
	e := Essence{Unordered: true}
	if strings.HasPrefix(strings.TrimSpace(text), "No matches found") {
		return e, true
	}
	head, rest, _ := strings.Cut(text, "\n\n")
	if refGrepHead.get().MatchString(head) {
		// Reference: sections "path\nLine N: text…" separated by blank
		// lines, then an optional "(…)" footer.
		for _, sec := range strings.Split(rest, "\n\n") {
			if strings.HasPrefix(sec, "(") {
				break
			}
			lines := strings.Split(sec, "\n")
			path := relPath(lines[0])
			for _, l := range lines[1:] {
				m := refGrepRow.get().FindStringSubmatch(l)
				if m == nil {
					return Essence{}, false
				}
				e.Items = append(e.Items, path+":"+m[1]+":"+lineText(m[2]))
			}
		}
		slices.Sort(e.Items)
		return e, true
	}
	list, _, _ := strings.Cut(text, "\n\n(")
	list = strings.TrimSpace(list)
	if list == "" {
		return Essence{}, false
	}
	for _, l := range strings.Split(list, "\n") {
		if m := reelGrepRow.get().FindStringSubmatch(l); m != nil {
			e.Items = append(e.Items, relPath(m[1])+":"+m[2]+":"+lineText(m[3]))
		} else if m := reelGrepCnt.get().FindStringSubmatch(l); m != nil {
			e.Items = append(e.Items, relPath(m[1])+": "+m[2]+" matches")
		} else {
			e.Items = append(e.Items, relPath(l))
		}
	}
	slices.Sort(e.Items)
	return e, true
}

var (
	envelopePath = &pattern{expr: `^<path>([^\n]*)</path>\n`}
	reelWrote    = &pattern{expr: `^Wrote \d+ bytes to (.+?)( \(new file\))?$`}
	refEdited    = &pattern{expr: `^The file (.+) has been updated(?: successfully\.|\. All occurrences were successfully replaced\.)$`}
	reelEdited   = &pattern{expr: `^Edited (.+): replaced \d+ occurrences?$`}
	todoCounts   = &pattern{expr: `^Updated todo list: (\d+) pending, (\d+) in progress, (\d+) completed\.$`}
)

// writeEssence reduces a write result to its path and kind.
func writeEssence(text string, _ json.RawMessage) (Essence, bool) {
	text = strings.TrimSpace(text)
	if m := envelopePath.get().FindStringSubmatch(text); m != nil {
		switch {
		case strings.Contains(text, "\n<content>\nCreated file\n</content>"):
			return Essence{Facts: []string{"path " + relPath(m[1]), "created"}}, true
		case strings.Contains(text, "\n<content>\nUpdated file\n</content>"):
			return Essence{Facts: []string{"path " + relPath(m[1]), "replaced"}}, true
		}
		return Essence{}, false
	}
	if m := reelWrote.get().FindStringSubmatch(text); m != nil {
		kind := "replaced"
		if m[2] != "" {
			kind = "created"
		}
		return Essence{Facts: []string{"path " + relPath(m[1]), kind}}, true
	}
	return Essence{}, false
}

// editEssence reduces an edit result to its path.
func editEssence(text string, _ json.RawMessage) (Essence, bool) {
	text = strings.TrimSpace(text)
	for _, re := range []*regexp.Regexp{refEdited.get(), reelEdited.get()} {
		if m := re.FindStringSubmatch(text); m != nil {
			return Essence{Facts: []string{"path " + relPath(m[1]), "edited"}}, true
		}
	}
	return Essence{}, false
}

// todoEssence reduces a todo_write result to its counts.
func todoEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := todoCounts.get().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Essence{}, false
	}
	return Essence{Facts: []string{m[1] + " pending", m[2] + " in progress", m[3] + " completed"}}, true
}

// equal reports whether two essences agree.
func (e Essence) equal(o Essence) bool {
	if !slices.Equal(e.Facts, o.Facts) || !inlineEqual(e.Inline, o.Inline) {
		return false
	}
	if e.Unordered || o.Unordered {
		a, b := slices.Clone(e.Items), slices.Clone(o.Items)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	return slices.Equal(e.Items, o.Items)
}

// inlineEqual says two inline sizes agree: both 0 (not spilled), or both
// set and within spillSlack bytes.
func inlineEqual(a, b int) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	return abs(a-b) <= spillSlack
}

// abs is |n|.
func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// String renders an essence for a message: facts, then items, one per
// line, at most a screenful.
func (e Essence) String() string {
	var b strings.Builder
	if len(e.Facts) > 0 {
		b.WriteString("[" + strings.Join(e.Facts, "; ") + "]")
	}
	if e.Inline != 0 {
		b.WriteString("[shown inline: " + strconv.Itoa(e.Inline) + " bytes besides the spill path]")
	}
	const most = 12
	for i, it := range e.Items {
		if i == most {
			b.WriteString("\n    … " + strconv.Itoa(len(e.Items)-most) + " more line(s)")
			break
		}
		b.WriteString("\n    | " + clip(it, 160))
	}
	if len(e.Items) == 0 {
		b.WriteString(" (no lines)")
	}
	return b.String()
}

// firstDifference names the first fact or item where two essences part.
func firstDifference(a, b Essence) string {
	for i := 0; i < max(len(a.Facts), len(b.Facts)); i++ {
		if x, y := nth(a.Facts, i), nth(b.Facts, i); x != y {
			return "fact " + strconv.Itoa(i+1) + ": " + x + " vs " + y
		}
	}
	if !inlineEqual(a.Inline, b.Inline) {
		return "shown inline: " + strconv.Itoa(a.Inline) + " vs " + strconv.Itoa(b.Inline) + " bytes besides the spill path (more than " + spillSlackText + " apart)"
	}
	ai, bi := a.Items, b.Items
	what := "line"
	if a.Unordered || b.Unordered {
		ai, bi = slices.Clone(ai), slices.Clone(bi)
		slices.Sort(ai)
		slices.Sort(bi)
		what = "sorted line"
	}
	for i := 0; i < max(len(ai), len(bi)); i++ {
		if x, y := nth(ai, i), nth(bi, i); x != y {
			return what + " " + strconv.Itoa(i+1) + ": " + x + " vs " + y
		}
	}
	return ""
}

// nth is s[i] quoted, or "(none)" past the end.
func nth(s []string, i int) string {
	if i < len(s) {
		return strconv.Quote(clip(s[i], 120))
	}
	return "(none)"
}

// clip shortens s to n bytes (on a rune boundary) with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var webFetched = &pattern{expr: `^Fetched (\S+) \(HTTP (\d{3})\)`}

// webWords splits a page's text into its words: runs of letters, digits
// and marks, and every other character that is neither space nor one of
// Markdown's marks (`*_#|-:[]()=>` and the backquote), one by one.
func webWords(s string) []string {
	var out []string
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	start := -1
	for i, r := range s {
		if word(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
		if !unicode.IsSpace(r) && !strings.ContainsRune("*_#|-:[]()=>`", r) {
			out = append(out, string(r))
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// webFetchEssence reduces a web_fetch result to its URL, status and the
// words of the page.
func webFetchEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := webFetched.get().FindStringSubmatch(text)
	if m == nil {
		return Essence{}, false
	}
	body := strings.TrimPrefix(text, m[0])
	return Essence{Facts: []string{"url " + m[1], "status " + m[2]}, Items: webWords(body)}, true
}

var (
	skillName    = &pattern{expr: `^<skill_content name="([^"]*)">`}
	skillBase    = &pattern{expr: `(?m)^Base directory for this skill: (.*)$`}
	skillInstrRe = &pattern{expr: `(?s)<skill_instructions>\n?(.*?)\n?</skill_instructions>`}
)

// skillEssence reduces a skill result to the skill's name, base directory
// and instruction lines.
func skillEssence(text string, _ json.RawMessage) (Essence, bool) {
	n := skillName.get().FindStringSubmatch(text)
	b := skillBase.get().FindStringSubmatch(text)
	in := skillInstrRe.get().FindStringSubmatch(text)
	if n == nil || b == nil || in == nil {
		return Essence{}, false
	}
	e := Essence{Facts: []string{"skill " + n[1], "base " + relPath(b[1])}}
	for _, l := range strings.Split(in[1], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			e.Items = append(e.Items, l)
		}
	}
	return e, true
}

// backgroundStart is the result of a background (continuable) subagent
// call: the reference answers as soon as the child accepted its prompt.
var backgroundStart = &pattern{expr: `^started subagent (\S+)$`}

// runCodeEssence reduces a run_code result — the program's printed lines
// and rendered return value, verbatim in both systems — to its lines.
func runCodeEssence(text string, _ json.RawMessage) (Essence, bool) {
	e := Essence{Facts: []string{"program output"}}
	body := strings.TrimRight(text, " \t\n")
	if body == "" {
		return e, true
	}
	for _, l := range strings.Split(body, "\n") {
		e.Items = append(e.Items, strings.TrimRight(l, " \t"))
	}
	return e, true
}

// subagentEssence reduces a subagent or subagent_fork result — the
// child's final output verbatim, no framing, possibly empty — to its
// lines; a background start to the child it names.
func subagentEssence(text string, _ json.RawMessage) (Essence, bool) {
	if m := backgroundStart.get().FindStringSubmatch(strings.TrimSpace(text)); m != nil {
		return Essence{Facts: []string{"started background child " + m[1]}}, true
	}
	e := Essence{Facts: []string{"child's final text"}}
	body := strings.TrimRight(text, " \t\n")
	if body == "" {
		return e, true
	}
	for _, l := range strings.Split(body, "\n") {
		e.Items = append(e.Items, strings.TrimRight(l, " \t"))
	}
	return e, true
}
