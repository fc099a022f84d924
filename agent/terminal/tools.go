package terminal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/reel-agent/reel/agent/tools"
)

// Tool names.
const (
	OpenName   = "terminal_open"
	SendName   = "terminal_send"
	ReadName   = "terminal_read"
	SignalName = "terminal_signal"
	ListName   = "terminal_list"
	CloseName  = "terminal_close"
)

// Tools returns the six terminal tools, sorted by name as the reference
// lists them.
func Tools() []tools.Tool {
	return []tools.Tool{closeTool{}, listTool{}, openTool{}, readTool{}, sendTool{}, signalTool{}}
}

// signals are the signals terminal_signal delivers, by name.
func signalByName(name string) (syscall.Signal, bool) {
	switch name {
	case "SIGINT":
		return syscall.SIGINT, true
	case "SIGTERM":
		return syscall.SIGTERM, true
	case "SIGKILL":
		return syscall.SIGKILL, true
	case "SIGTSTP":
		return syscall.SIGTSTP, true
	case "SIGHUP":
		return syscall.SIGHUP, true
	}
	return 0, false
}

// scope finds the calling session's terminals.
func scope(env *tools.Env) (Scope, error) {
	if env != nil {
		if h, ok := env.Owner.(Host); ok {
			if s := h.Terminals(); s.Manager != nil {
				return s, nil
			}
		}
	}
	return Scope{}, errors.New("persistent terminals are unavailable in this session")
}

// failed is the error result of a call: "Error: MSG".
func failed(title string, kind tools.Kind, err error) tools.Result {
	return tools.Result{Text: "Error: " + err.Error(), IsError: true, Kind: kind, Title: title}
}

// lookup finds the calling session's terminal id.
func lookup(env *tools.Env, id string) (*Terminal, error) {
	s, err := scope(env)
	if err != nil {
		return nil, err
	}
	return s.Manager.Get(id)
}

// target is the terminal the sessionId argument names, and that id.
func target(env *tools.Env, a args) (*Terminal, string, error) {
	id, err := sessionArg(a)
	if err != nil {
		return nil, "", err
	}
	t, err := lookup(env, id)
	return t, id, err
}

// sessionArg is the sessionId argument, which must not be empty.
func sessionArg(a args) (string, error) {
	id := a.str("sessionId")
	if id == "" {
		return "", errors.New("sessionId must be a non-empty string")
	}
	return id, nil
}

// The arguments of each tool (the specs are constant; a function keeps
// them so).
func openSpecs() []argSpec {
	return []argSpec{{"type", argString, true}, {"name", argString, false}, {"cwd", argString, false}}
}

func sendSpecs() []argSpec {
	return []argSpec{{"sessionId", argString, true}, {"text", argString, true}, {"submit", argBool, false}, {"run_in_background", argBool, false}}
}

func readSpecs() []argSpec {
	return []argSpec{{"sessionId", argString, true}, {"offset", argNumber, false}, {"count", argNumber, false}}
}

func signalSpecs() []argSpec {
	return []argSpec{{"sessionId", argString, true}, {"signal", argString, true}}
}

func idSpecs() []argSpec { return []argSpec{{"sessionId", argString, true}} }

type openTool struct{}

func (openTool) Name() string { return OpenName }

func (openTool) Schema() tools.Schema {
	return tools.Schema{Name: OpenName,
		Description: "Create a persistent, owner-isolated terminal session from a registered backend type. Use this for shell or REPL state that must survive across tool calls.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"type":{"type":"string","description":"Registered terminal backend type, usually \"shell\"."},"name":{"type":"string","description":"Optional owner-local display name such as \"main\" or \"gdb\"."},"cwd":{"type":"string","description":"Initial working directory. Defaults to the deployment workspace root."}},"required":["type"]}`)}
}

func (openTool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := decodeArgs(OpenName, raw, openSpecs())
	if err != nil {
		return OpenName, tools.KindExecute, nil
	}
	return openTool{}.title(a), tools.KindExecute, nil
}

// title names the call from its decoded arguments (Describe and Run share it).
func (openTool) title(a args) string {
	label := a.str("name")
	if label == "" {
		label = a.str("type")
	}
	return "Open terminal " + label
}

func (o openTool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeArgs(OpenName, raw, openSpecs())
	if err != nil {
		return tools.Result{}, err
	}
	title, kind := o.title(a), tools.KindExecute
	if a.str("type") == "" {
		return failed(title, kind, errors.New("type must be a non-empty string")), nil
	}
	if n, ok := a["name"]; ok && n == "" {
		return failed(title, kind, errors.New("PTY session name must be non-empty")), nil
	}
	s, err := scope(env)
	if err != nil {
		return failed(title, kind, err), nil
	}
	t, motd, err := s.Open(ctx, a.str("type"), a.str("name"), a.str("cwd"))
	if err != nil {
		return failed(title, kind, err), nil
	}
	return tools.Result{Text: renderOpen(t, motd, MaxResultBytes), Kind: kind, Title: title}, nil
}

type sendTool struct{}

func (sendTool) Name() string { return SendName }

func (sendTool) Schema() tools.Schema {
	return tools.Schema{Name: SendName,
		Description: "Send text to a persistent terminal. By default Enter is submitted and the call waits for a prompt, stdin wait, output silence, timeout, or session exit. Background mode returns a job id for job_output/job_kill.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"sessionId":{"type":"string","description":"Terminal session id returned by terminal_open or terminal_list."},"text":{"type":"string","description":"UTF-8 text to write to the terminal."},"submit":{"type":"boolean","description":"Submit Enter after text (default true). Set false for control characters or incomplete REPL input."},"run_in_background":{"type":"boolean","description":"Return a job id immediately; collect with job_output or stop with job_kill."}},"required":["sessionId","text"]}`)}
}

func (sendTool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := decodeArgs(SendName, raw, sendSpecs())
	if err != nil {
		return "(send input)", tools.KindExecute, nil
	}
	return sendTool{}.title(a), tools.KindExecute, nil
}

// title names the call from its decoded arguments (Describe and Run share it).
func (sendTool) title(a args) string {
	if t := a.str("text"); t != "" {
		return t
	}
	return "(send input)"
}

// sendMeta is the structured detail of a foreground send, logged as the
// result's meta as the reference logs it.
type sendMeta struct {
	Viewport      string     `json:"viewport"`
	WaitReason    string     `json:"waitReason"`
	SessionStatus statusJSON `json:"sessionStatus"`
	Truncated     bool       `json:"truncated"`
}

// statusJSON is a Status as the reference encodes it.
type statusJSON struct {
	Kind     string  `json:"kind"`
	ExitCode *int    `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
}

func encodeStatus(s Status) statusJSON {
	if s.Running {
		return statusJSON{Kind: "running"}
	}
	j := statusJSON{Kind: "exited", ExitCode: s.ExitCode}
	if s.Signal != "" {
		j.Signal = &s.Signal
	}
	return j
}

func (o sendTool) Run(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeArgs(SendName, raw, sendSpecs())
	if err != nil {
		return tools.Result{}, err
	}
	title, kind := o.title(a), tools.KindExecute
	t, id, err := target(env, a)
	if err != nil {
		return failed(title, kind, err), nil
	}
	if a.boolean("run_in_background", false) {
		jid, err := sendInBackground(ctx, env, t, a.str("text"), a.boolean("submit", true))
		if err != nil {
			return failed(title, kind, err), nil
		}
		return tools.Result{Text: "started background job " + jid, Kind: kind, Title: "Send to terminal " + id + " in background"}, nil
	}
	r, err := t.Send(ctx, a.str("text"), a.boolean("submit", true))
	if ctx.Err() != nil {
		res := failed(title, kind, errors.New("terminal send aborted"))
		return res, fmt.Errorf("terminal: send to %s: %w", id, ctx.Err())
	}
	if err != nil {
		return failed(title, kind, err), nil
	}
	meta, err := json.Marshal(sendMeta{Viewport: r.Viewport, WaitReason: r.WaitReason, SessionStatus: encodeStatus(r.Status), Truncated: r.Truncated})
	if err != nil {
		return tools.Result{}, fmt.Errorf("terminal: encoding the send's detail: %w", err)
	}
	return tools.Result{Text: renderSend(r, MaxResultBytes), Kind: kind, Title: title, Meta: meta}, nil
}

type readTool struct{}

func (readTool) Name() string { return ReadName }

func (readTool) Schema() tools.Schema {
	return tools.Schema{Name: ReadName,
		Description: "Read a bounded page of retained output from a persistent terminal without sending input.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"sessionId":{"type":"string","description":"Terminal session id."},"offset":{"type":"number","description":"Newest-relative line offset (default 0)."},"count":{"type":"number","description":"Requested line count (default 500; backend caps apply)."}},"required":["sessionId"]}`)}
}

func (readTool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := decodeArgs(ReadName, raw, readSpecs())
	if err != nil {
		return ReadName, tools.KindRead, nil
	}
	return idTitle("Read", a), tools.KindRead, nil
}

func (readTool) Run(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeArgs(ReadName, raw, readSpecs())
	if err != nil {
		return tools.Result{}, err
	}
	title, kind := idTitle("Read", a), tools.KindRead
	id, err := sessionArg(a)
	if err != nil {
		return failed(title, kind, err), nil
	}
	offset, ok := a.integer("offset")
	if !ok {
		offset = 0
	}
	count, ok := a.integer("count")
	if !ok {
		count = 500
	}
	switch {
	case offset < 0:
		return failed(title, kind, errors.New("PTY read offset must be a non-negative safe integer")), nil
	case count <= 0:
		return failed(title, kind, errors.New("PTY read count must be a positive safe integer")), nil
	}
	t, err := lookup(env, id)
	if err != nil {
		return failed(title, kind, err), nil
	}
	return tools.Result{Text: renderRead(t.Read(offset, count), MaxResultBytes), Kind: kind, Title: title}, nil
}

type signalTool struct{}

func (signalTool) Name() string { return SignalName }

func (signalTool) Schema() tools.Schema {
	return tools.Schema{Name: SignalName,
		Description: "Send an allowed signal to the current foreground process group of a persistent terminal.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"sessionId":{"type":"string","description":"Terminal session id."},"signal":{"type":"string","description":"Signal to deliver. Shell-targeted SIGKILL is rejected; use terminal_close.","enum":["SIGINT","SIGTERM","SIGKILL","SIGTSTP","SIGHUP"]}},"required":["sessionId","signal"]}`)}
}

func (signalTool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := decodeArgs(SignalName, raw, signalSpecs())
	if err != nil {
		return SignalName, tools.KindExecute, nil
	}
	return idTitle("Signal", a), tools.KindExecute, nil
}

func (signalTool) Run(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeArgs(SignalName, raw, signalSpecs())
	if err != nil {
		return tools.Result{}, err
	}
	sig, ok := signalByName(a.str("signal"))
	if !ok {
		return tools.Result{}, &tools.ArgError{Tool: SignalName, Arg: "signal", Msg: "must be one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP"}
	}
	title, kind := idTitle("Signal", a), tools.KindExecute
	t, _, err := target(env, a)
	if err != nil {
		return failed(title, kind, err), nil
	}
	pg, err := t.Signal(sig)
	if err != nil {
		return failed(title, kind, err), nil
	}
	return tools.Result{Text: fmt.Sprintf("delivered %s to foreground process group %d", a.str("signal"), pg), Kind: kind, Title: title}, nil
}

type closeTool struct{}

func (closeTool) Name() string { return CloseName }

func (closeTool) Schema() tools.Schema {
	return tools.Schema{Name: CloseName,
		Description: "Close one persistent terminal and wait until its captured owned process tree is gone.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"sessionId":{"type":"string","description":"Terminal session id."}},"required":["sessionId"]}`)}
}

func (closeTool) Describe(raw json.RawMessage) (string, tools.Kind, []tools.Location) {
	a, err := decodeArgs(CloseName, raw, idSpecs())
	if err != nil {
		return CloseName, tools.KindExecute, nil
	}
	return idTitle("Close", a), tools.KindExecute, nil
}

func (closeTool) Run(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeArgs(CloseName, raw, idSpecs())
	if err != nil {
		return tools.Result{}, err
	}
	title, kind := idTitle("Close", a), tools.KindExecute
	id, err := sessionArg(a)
	if err != nil {
		return failed(title, kind, err), nil
	}
	s, err := scope(env)
	if err != nil {
		return failed(title, kind, err), nil
	}
	if err := s.Manager.Close(id); err != nil {
		return failed(title, kind, err), nil
	}
	return tools.Result{Text: "closed terminal session " + id, Kind: kind, Title: title}, nil
}

type listTool struct{}

func (listTool) Name() string { return ListName }

func (listTool) Schema() tools.Schema {
	return tools.Schema{Name: ListName,
		Description: "List persistent terminal sessions owned by the current agent.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (listTool) Describe(json.RawMessage) (string, tools.Kind, []tools.Location) {
	return "List terminal sessions", tools.KindRead, nil
}

func (o listTool) Run(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	if _, err := decodeArgs(ListName, raw, nil); err != nil {
		return tools.Result{}, err
	}
	title, kind, _ := o.Describe(raw)
	s, err := scope(env)
	if err != nil {
		return failed(title, kind, err), nil
	}
	return tools.Result{Text: renderList(s.Manager.List(), MaxResultBytes), Kind: kind, Title: title}, nil
}

// background is a terminal send running as a background job
// (run_in_background): job_output reads its output as it comes, job_kill
// interrupts it (SIGINT to the foreground process group).
type background struct {
	t      *Terminal
	cancel context.CancelFunc

	mu      sync.Mutex
	settled bool
	rest    string // the output left at settlement, until read
	cut     bool
}

// Cancel implements tools.JobWork.
func (b *background) Cancel() { b.cancel() }

// ReadOutput implements tools.JobWork: the output since the previous read,
// with the truncation marker when some was dropped.
func (b *background) ReadOutput(bool) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out string
	var cut bool
	if b.settled {
		out, cut, b.rest, b.cut = b.rest, b.cut, "", false
	} else {
		out, cut = b.t.takeOutput()
	}
	if cut {
		sep := "\n"
		if out == "" || strings.HasSuffix(out, "\n") {
			sep = ""
		}
		out += sep + "[output truncated]"
	}
	return out
}

// sendInBackground starts a send to t as a job of the session's table
// (kind pty-send) and returns the job's id. The input is written before
// it returns; a terminal busy with another send refuses at once.
func sendInBackground(ctx context.Context, env *tools.Env, t *Terminal, text string, submit bool) (string, error) {
	owner, ok := env.Owner.(tools.JobOwner)
	if !ok {
		return "", errors.New("background terminal sends need the session's job table")
	}
	label := text
	if label == "" {
		label = "(input)"
	}
	began, err := t.begin(text, submit)
	if err != nil {
		return "", err
	}
	// The job outlives the call; job_kill and the terminal's close end it.
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{t: t, cancel: cancel}
	id, settle, err := owner.Jobs().Start("pty-send", t.ID+": "+label, b)
	if err != nil {
		cancel()
		// Nothing waits for the input now; let the slot go.
		go func() { _, _ = t.await(jctx, began, false) }()
		return "", err
	}
	go func() {
		defer cancel()
		r, err := t.await(jctx, began, false)
		b.mu.Lock()
		b.settled, b.rest, b.cut = true, r.Viewport, r.Truncated
		b.mu.Unlock()
		switch {
		case jctx.Err() != nil:
			settle(tools.JobKilled, "interrupted")
		case err != nil:
			settle(tools.JobFailed, err.Error())
		case r.Status.Running:
			settle(tools.JobCompleted, "wait: "+r.WaitReason)
		default:
			detail := "unknown"
			switch {
			case r.Status.ExitCode != nil:
				detail = strconv.Itoa(*r.Status.ExitCode)
			case r.Status.Signal != "":
				detail = r.Status.Signal
			}
			settle(tools.JobCompleted, "session exited: "+detail)
		}
	}()
	return id, nil
}

// idTitle names a call on one terminal: verb and the sessionId argument.
func idTitle(verb string, a args) string { return verb + " terminal " + a.str("sessionId") }
