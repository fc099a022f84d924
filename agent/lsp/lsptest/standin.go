package lsptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Modes lists the stand-in's modes.
//
//   - ok: answers definition with two locations in the opened file (lines
//     1 and 2, character 7), references with those and one outside the
//     workspace, hover with a Markdown text, implementation with null.
//   - hang-init: never answers initialize (it keeps reading).
//   - hang: answers initialize, never answers a query.
//   - die: answers initialize, then exits with status 3 and a line on
//     stderr when a query arrives.
//   - flood: answers initialize, then answers a query with a message of
//     a Content-Length of 1 TiB and writes bytes until stopped.
//   - chatter: answers initialize, then answers a query with notifications
//     (64 KiB window/logMessage each) without end.
//   - forge: answers definition with URIs outside the workspace and URIs
//     holding a newline (a forged result line), and a non-file URI.
//   - spawn: starts `sleep 3600` as a child (its argv[0] $LSP_STANDIN_TOKEN-child), writes its pid to
//     lsp-child.pid in the workspace, then behaves as ok.
//   - escape: on start tries to create the file named by the environment
//     variable LSP_STANDIN_ESCAPE (outside the workspace), and answers
//     hover with "escaped" or "confined: ERROR".
func Modes() []string {
	return []string{"ok", "hang-init", "hang", "die", "flood", "chatter", "forge", "spawn", "escape"}
}

// Command runs the stand-in in mode (args[0]) on stdin and stdout and
// returns its exit status.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 || len(args) > 2 || !slices.Contains(Modes(), args[0]) {
		fmt.Fprintf(stderr, "usage: reel lsp-standin MODE [TOKEN] (MODE: %s; TOKEN only marks the process)\n", strings.Join(Modes(), ", "))
		return 2
	}
	s := &standin{mode: args[0], in: bufio.NewReader(stdin), out: bufio.NewWriter(stdout), stderr: stderr}
	return s.serve()
}

type standin struct {
	mode    string
	in      *bufio.Reader
	out     *bufio.Writer
	stderr  io.Writer
	escaped string
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (s *standin) read() (*message, error) {
	length := -1
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if length, err = strconv.Atoi(v); err != nil {
				return nil, err
			}
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.in, body); err != nil {
		return nil, err
	}
	var m message
	return &m, json.Unmarshal(body, &m)
}

func (s *standin) write(v map[string]any) {
	v["jsonrpc"] = "2.0"
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	_ = s.out.Flush()
}

func (s *standin) serve() int {
	if s.mode == "escape" {
		p := os.Getenv("LSP_STANDIN_ESCAPE")
		if err := os.WriteFile(p, []byte("escaped\n"), 0o644); err != nil {
			s.escaped = "confined: " + err.Error()
		} else {
			s.escaped = "escaped"
		}
	}
	if s.mode == "spawn" {
		c := exec.Command("sleep", "3600")
		if tok := os.Getenv("LSP_STANDIN_TOKEN"); tok != "" {
			c.Args[0] = tok + "-child"
		}
		if err := c.Start(); err == nil {
			_ = os.WriteFile("lsp-child.pid", []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		}
	}
	var opened string
	for {
		m, err := s.read()
		if err != nil {
			return 0
		}
		switch {
		case m.Method == "initialize":
			if s.mode == "hang-init" {
				continue
			}
			s.write(map[string]any{"id": m.ID, "result": map[string]any{"capabilities": map[string]any{
				"textDocumentSync": 1, "definitionProvider": true, "referencesProvider": true,
				"implementationProvider": true, "hoverProvider": true,
			}}})
		case m.Method == "textDocument/didOpen":
			var p struct {
				TextDocument struct {
					URI string `json:"uri"`
				} `json:"textDocument"`
			}
			_ = json.Unmarshal(m.Params, &p)
			opened = p.TextDocument.URI
		case m.Method == "shutdown":
			s.write(map[string]any{"id": m.ID, "result": nil})
		case m.Method == "exit":
			return 0
		case strings.HasPrefix(m.Method, "textDocument/") && m.ID != nil:
			if code, done := s.query(m, opened); done {
				return code
			}
		}
	}
}

// query answers a request of the opened document; done ends the server.
func (s *standin) query(m *message, opened string) (code int, done bool) {
	loc := func(uri string, line int) map[string]any {
		return map[string]any{"uri": uri, "range": map[string]any{
			"start": map[string]int{"line": line, "character": 6}, "end": map[string]int{"line": line, "character": 12}}}
	}
	switch s.mode {
	case "hang":
		return 0, false
	case "die":
		fmt.Fprintln(s.stderr, "lsp-standin: dying on purpose")
		return 3, true
	case "flood":
		fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"", int64(1)<<40, m.ID)
		chunk := []byte(strings.Repeat("A", 1<<16))
		for {
			if _, err := s.out.Write(chunk); err != nil {
				return 0, true
			}
		}
	case "chatter":
		note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "window/logMessage",
			"params": map[string]any{"type": 4, "message": strings.Repeat("x", 1<<16)}})
		for {
			if _, err := fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(note), note); err != nil {
				return 0, true
			}
		}
	case "forge":
		outside := (&url.URL{Scheme: "file", Path: "/etc/passwd"}).String()
		forged := strings.Replace(opened, "file://", "file://", 1) + "%0Asrc/secret.ts:9:9"
		s.write(map[string]any{"id": m.ID, "result": []any{
			loc(outside, 0), loc(forged, 0), loc("jdt://contents/x\nforged.ts:1:1", 0), loc(opened, 0)}})
		return 0, false
	case "escape":
		s.write(map[string]any{"id": m.ID, "result": map[string]any{"contents": map[string]string{"kind": "plaintext", "value": s.escaped}}})
		return 0, false
	}
	switch m.Method {
	case "textDocument/definition":
		s.write(map[string]any{"id": m.ID, "result": []any{loc(opened, 0), loc(opened, 1)}})
	case "textDocument/references":
		s.write(map[string]any{"id": m.ID, "result": []any{loc(opened, 0), loc(opened, 1),
			loc("file:///usr/lib/elsewhere/lib.d.ts", 4)}})
	case "textDocument/hover":
		s.write(map[string]any{"id": m.ID, "result": map[string]any{"contents": map[string]string{"kind": "markdown", "value": "```ts\nconst answer: 42\n```"}}})
	default:
		s.write(map[string]any{"id": m.ID, "result": nil})
	}
	return 0, false
}
