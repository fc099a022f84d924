package tools

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The typed values of Result.Value: what a program calling a tool as a
// function (run_code) gets back. Their shapes are declared to the model
// by package agent/codemode; keep the two in step.

// bashStream is one output stream of a foreground command's value.
type bashStream struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	SpillPath string `json:"spillPath,omitempty"`
}

// bashForeground is the value of a bash call that ran in the foreground.
// reel collects stdout and stderr interleaved on one pipe, so Stdout holds
// both and Stderr is always empty.
type bashForeground struct {
	Kind      string     `json:"kind"`
	ExitCode  *int       `json:"exitCode"`
	Signal    *string    `json:"signal"`
	TimedOut  bool       `json:"timedOut"`
	Aborted   bool       `json:"aborted"`
	TimeoutMS int        `json:"timeoutMs"`
	Stdout    bashStream `json:"stdout"`
	Stderr    bashStream `json:"stderr"`
	// Sandbox is set when the sandbox denied an effect of the command.
	Sandbox *bashSandbox `json:"sandbox,omitempty"`
}

// bashSandbox is the sandbox's part in a foreground command's value.
type bashSandbox struct {
	Mode   string `json:"mode"`
	Denied bool   `json:"denied"`
}

// foregroundValue is the value of a foreground bash call that ended with
// state, whose collected output out was finished as text.
func foregroundValue(state *os.ProcessState, out *collector, text, spillPath string, timeout int, timedOut, aborted bool) json.RawMessage {
	v := bashForeground{Kind: "foreground", TimedOut: timedOut, Aborted: aborted, TimeoutMS: timeout}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := signalName(ws.Signal())
		v.Signal = &name
	} else {
		code := state.ExitCode()
		v.ExitCode = &code
	}
	v.Stdout = bashStream{Text: text, Truncated: out.spilling, SpillPath: spillPath}
	if !out.spilling {
		v.Stdout.Text = strings.TrimSuffix(text, out.suffix)
	}
	return valueJSON(v)
}

// signalName is sig's conventional name ("SIGKILL").
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return "SIG" + strconv.Itoa(int(sig))
}

// MarkDenied returns the value of a foreground bash call (as Bash.Run
// made it) with the sandbox's denial recorded, "sandbox": {"mode": mode,
// "denied": true}; any other value is returned as it is.
func MarkDenied(value json.RawMessage, mode string) json.RawMessage {
	var v bashForeground
	if json.Unmarshal(value, &v) != nil || v.Kind != "foreground" {
		return value
	}
	v.Sandbox = &bashSandbox{Mode: mode, Denied: true}
	return valueJSON(v)
}

// backgroundValue is the value of a bash call started in the background.
func backgroundValue(id string) json.RawMessage {
	return valueJSON(struct {
		Kind  string `json:"kind"`
		JobID string `json:"jobId"`
	}{"background", id})
}

// readLine is one line of a read value.
type readLine struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
}

// readValue is the value of a read of path from line offset that showed
// text (readWindow's rows, "%6d\t" then the line, and its notes).
func readValue(path string, offset int, text string) json.RawMessage {
	if offset < 1 {
		offset = 1
	}
	v := struct {
		Path       string     `json:"path"`
		Offset     int        `json:"offset"`
		Lines      []readLine `json:"lines"`
		TotalLines int        `json:"totalLines"`
	}{Path: path, Offset: offset, Lines: []readLine{}}
	rest := text
	for rest != "" {
		row, next, _ := strings.Cut(rest, "\n")
		num, line, ok := strings.Cut(row, "\t")
		n, err := strconv.Atoi(strings.TrimLeft(num, " "))
		if !ok || err != nil || len(num) < 6 {
			break
		}
		v.Lines = append(v.Lines, readLine{Number: n, Text: line})
		rest = next
	}
	v.TotalLines = offset - 1 + len(v.Lines)
	// A window note names the total ("(Showing lines A-B of [at least] N.");
	// an offset past the end names the lines the file has.
	var count string
	if note, ok := strings.CutPrefix(rest, "\n(Showing lines "); ok && len(v.Lines) > 0 {
		_, count, _ = strings.Cut(note, " of ")
		count = strings.TrimPrefix(count, "at least ")
	} else if i := strings.LastIndex(text, ", which has "); len(v.Lines) == 0 && strings.HasPrefix(text, "(offset ") && i >= 0 {
		count = text[i+len(", which has "):]
	}
	if end := strings.IndexFunc(count, func(r rune) bool { return r < '0' || r > '9' }); end > 0 {
		if n, err := strconv.Atoi(count[:end]); err == nil {
			v.TotalLines = n
		}
	}
	return valueJSON(v)
}

// valueJSON encodes v, whose types cannot fail to encode, without HTML
// escaping.
func valueJSON(v any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
