package scenario

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reel-agent/reel/agent/mcp/mcptest"
	"github.com/reel-agent/reel/internal/strictjson"
)

// Step field names as they appear in input.json.
const (
	fOp          = "op"
	fText        = "text"
	fContent     = "content"
	fWaitForFile = "waitForFile"
	fPath        = "path"
	fWaitForText = "waitForText"
	fMinimumTurn = "minimumTurn"
	fChild       = "child"
	fTimeoutMs   = "timeoutMs"
	fSession     = "session"
	fMode        = "mode"
	fExpectError = "expectError"
	fAddDirs     = "additionalDirectories"
	fConfigID    = "configId"
	fValue       = "value"
	fNotices     = "notices"
	fCompaction  = "compaction"
	fFollow      = "followCursor"
	fAtAnswer    = "atAnswer"
	fAtSeq       = "atSeq"
)

// stepUniverse lists every step field in the order Step.MarshalJSON writes
// them.
func stepUniverse() []string {
	return []string{fOp, fText, fContent, fWaitForFile, fPath, fWaitForText, fMinimumTurn, fChild, fTimeoutMs, fSession, fMode, fConfigID, fValue, fExpectError, fAddDirs, fNotices, fCompaction, fFollow, fAtAnswer, fAtSeq}
}

// Step is one scripted client action. Which fields are meaningful depends
// on Op; the loader refuses fields the op does not accept, so a zero field
// means "absent".
type Step struct {
	// Op is the action.
	Op Op
	// Text is the prompt text (prompt-like ops).
	Text string
	// Content is the prompt for OpPromptContent.
	Content []ContentBlock
	// WaitForFile is the readiness file of OpPromptAndCancel.
	WaitForFile *FileWait
	// Path is the file OpWaitForFile waits for, relative to the run's cwd.
	Path string
	// WaitForText is the agent text OpPromptAndWaitForAgentMessage waits for.
	WaitForText string
	// MinimumTurn is the turn number (1-based) a wait op waits for.
	MinimumTurn int
	// Child selects a child session (1-based) for OpWaitForSubagentTurnEnd.
	Child int
	// TimeoutMs bounds a wait op, in milliseconds, instead of the harness's
	// step timeout.
	TimeoutMs int
	// Session selects the target session by creation index (default 0).
	Session int
	// Mode is the session mode id for OpSetMode.
	Mode string
	// ConfigID and Value are the config option and its value for
	// OpSetConfigOption.
	ConfigID, Value string
	// ExpectError says the agent must answer the step's request with a
	// JSON-RPC error (OpPrompt, OpLoadSession, OpNewSession, OpSetConfigOption).
	ExpectError bool
	// AdditionalDirectories is what OpNewSession sends as ACP's
	// additionalDirectories (nil: the member is not sent). Each is a
	// non-empty string; they are sent as written, never opened by the
	// harness.
	AdditionalDirectories []string
	// Notices and Compaction make OpInitialize advertise the client
	// capabilities session.notices and session.compaction.
	Notices, Compaction bool
	// FollowCursor makes OpListSessions send the nextCursor of the run's
	// previous session/list answer (which must have one).
	FollowCursor bool
	// AtAnswer (1-based) anchors OpForkSession at the message id of the
	// AtAnswer-th answer of the session (the distinct messageIds of its
	// agent_message_chunk updates this process received, in order); 0:
	// not given.
	AtAnswer int
	// AtSeq anchors OpForkSession at a seq of the session's log; 0: not
	// given.
	AtSeq int
}

// FileWait names a file, relative to the run's cwd, whose appearance a step
// waits for.
type FileWait struct {
	// Path is slash-separated and local (no leading "/", no "..").
	Path string `json:"path"`
}

// Prompt returns the content blocks the step sends: Content as is, or Text
// as a single text block. It returns nil for steps that are not prompts.
func (s Step) Prompt() []ContentBlock {
	if !s.IsPrompt() {
		return nil
	}
	if s.Op == OpPromptContent {
		return s.Content
	}
	return []ContentBlock{{Type: ContentText, Text: s.Text}}
}

// MarshalJSON writes the step in input.json form: "op" first (the
// canonical name, never a twin), then the fields the op accepts in a fixed
// order, omitting optional fields that are zero.
func (s Step) MarshalJSON() ([]byte, error) {
	allowed, required := []string{fOp}, []string{fOp}
	if spec, twin, ok := lookup(s.Op); ok {
		allowed, required = spec.fields(), append([]string{fOp}, spec.required...)
		if twin {
			s.Op, s.ExpectError = spec.op, true
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, key := range stepUniverse() {
		if !slices.Contains(allowed, key) {
			continue
		}
		var v any
		present := slices.Contains(required, key)
		switch key {
		case fOp:
			v = s.Op
		case fText:
			v = s.Text
		case fContent:
			v, present = s.Content, present || len(s.Content) > 0
		case fWaitForFile:
			v, present = s.WaitForFile, present || s.WaitForFile != nil
		case fPath:
			v, present = s.Path, present || s.Path != ""
		case fWaitForText:
			v = s.WaitForText
		case fMinimumTurn:
			v, present = s.MinimumTurn, present || s.MinimumTurn != 0
		case fChild:
			v, present = s.Child, present || s.Child != 0
		case fTimeoutMs:
			v, present = s.TimeoutMs, present || s.TimeoutMs != 0
		case fSession:
			v, present = s.Session, present || s.Session != 0
		case fMode:
			v = s.Mode
		case fConfigID:
			v = s.ConfigID
		case fValue:
			v = s.Value
		case fExpectError:
			v, present = s.ExpectError, s.ExpectError
		case fAddDirs:
			v, present = s.AdditionalDirectories, s.AdditionalDirectories != nil
		case fNotices:
			v, present = s.Notices, s.Notices
		case fCompaction:
			v, present = s.Compaction, s.Compaction
		case fFollow:
			v, present = s.FollowCursor, s.FollowCursor
		case fAtAnswer:
			v, present = s.AtAnswer, s.AtAnswer != 0
		case fAtSeq:
			v, present = s.AtSeq, s.AtSeq != 0
		}
		if !present {
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ContentType is the type of a prompt content block.
type ContentType string

// The content block types a promptContent step may use (ACP ContentBlock).
const (
	// ContentText carries Text.
	ContentText ContentType = "text"
	// ContentImage carries base64 Data and MimeType (and optionally URI).
	ContentImage ContentType = "image"
	// ContentAudio carries base64 Data and MimeType.
	ContentAudio ContentType = "audio"
	// ContentResourceLink carries URI and Name (and optionally MimeType).
	ContentResourceLink ContentType = "resource_link"
)

// contentFields is, for a content block type, the members it accepts and
// requires; ok is false for a type the vocabulary does not define.
func contentFields(t ContentType) (f strictjson.Fields, ok bool) {
	switch t {
	case ContentText:
		return strictjson.Fields{Allowed: []string{"type", "text"}, Required: []string{"text"}}, true
	case ContentImage:
		return strictjson.Fields{Allowed: []string{"type", "data", "mimeType", "uri"}, Required: []string{"data", "mimeType"}}, true
	case ContentAudio:
		return strictjson.Fields{Allowed: []string{"type", "data", "mimeType"}, Required: []string{"data", "mimeType"}}, true
	case ContentResourceLink:
		return strictjson.Fields{Allowed: []string{"type", "uri", "name", "mimeType"}, Required: []string{"uri", "name"}}, true
	}
	return strictjson.Fields{}, false
}

// ContentBlock is one ACP prompt content block; it marshals to the ACP wire
// shape and can be sent as is.
type ContentBlock struct {
	// Type selects which of the other fields are set.
	Type ContentType `json:"type"`
	// Text is the text of a text block (always written for text blocks).
	Text string `json:"text,omitempty"`
	// Data is base64 (image, audio).
	Data string `json:"data,omitempty"`
	// MimeType is the media type (image, audio, resource_link).
	MimeType string `json:"mimeType,omitempty"`
	// URI locates the resource (resource_link, optionally image).
	URI string `json:"uri,omitempty"`
	// Name is the resource name (resource_link).
	Name string `json:"name,omitempty"`
}

// MarshalJSON writes the block; a text block always has its "text" field,
// even when empty.
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	type plain ContentBlock
	if c.Type == ContentText {
		return json.Marshal(struct {
			Type ContentType `json:"type"`
			Text string      `json:"text"`
		}{c.Type, c.Text})
	}
	return json.Marshal(plain(c))
}

// PermissionKind is an ACP permission option kind.
type PermissionKind string

// The ACP permission option kinds.
const (
	// AllowOnce allows this single request.
	AllowOnce PermissionKind = "allow_once"
	// AllowAlways allows this and future requests of the kind.
	AllowAlways PermissionKind = "allow_always"
	// RejectOnce rejects this single request.
	RejectOnce PermissionKind = "reject_once"
	// RejectAlways rejects this and future requests of the kind.
	RejectAlways PermissionKind = "reject_always"
)

func permissionKinds() []PermissionKind {
	return []PermissionKind{AllowOnce, AllowAlways, RejectOnce, RejectAlways}
}

// PermissionAnswer is one entry of the FIFO queue that answers
// session/request_permission: the option whose kind is Kind is selected.
type PermissionAnswer struct {
	// Kind is the option kind to select.
	Kind PermissionKind `json:"kind"`
}

// Input is a parsed input.json.
type Input struct {
	// Steps is the client script, never empty.
	Steps []Step `json:"steps"`
	// PermissionAnswers is the answer queue; nil when absent or empty.
	PermissionAnswers []PermissionAnswer `json:"permissionAnswers,omitempty"`
	// RecordedWith says how the fixture was recorded, e.g.
	// "standin:standin.json" or "deepseek:deepseek-chat"; "" when absent
	// (the dsh corpus does not carry it).
	RecordedWith string `json:"recordedWith,omitempty"`
	// Mode and Approval are reel's own: the agent's default sandbox mode
	// (--mode) and approval policy (--approval) for the run; "" keeps
	// reel's defaults.
	Mode     string `json:"mode,omitempty"`
	Approval string `json:"approval,omitempty"`
	// Network is reel acp's --network ("on" or "off"), "" for its default.
	Network string `json:"network,omitempty"`
	// ImageInput is reel acp's --image-input ("auto", "on" or "off"): "on"
	// declares the run's model image-capable (the stand-in takes images as
	// the reference's snapshot catalogs declare theirs); "" for auto.
	ImageInput string `json:"imageInput,omitempty"`
	// Terminals is reel acp's --terminals: the persistent terminal tools
	// are offered.
	Terminals bool `json:"terminals,omitempty"`
	// Checkpoints is reel acp's --checkpoints: workspace checkpoints and
	// the /undo, /rewind and /checkpoints commands.
	Checkpoints bool `json:"checkpoints,omitempty"`
	// CodeMode runs reel acp with --code-mode: the model is offered
	// run_code alone (package agent/codemode).
	CodeMode bool `json:"codeMode,omitempty"`
	// SessionQuery is reel acp's --session-query: the model is offered
	// session_event_read over its own session's log (package
	// agent/sessionquery).
	SessionQuery bool `json:"sessionQuery,omitempty"`
	// Models is reel acp's --models: the models a client may pick per
	// session ("" for reel's default).
	Models string `json:"models,omitempty"`
	// ListPageSize is reel acp's --list-page-size: the sessions one
	// session/list page holds (0: reel's default).
	ListPageSize int `json:"listPageSize,omitempty"`
	// ContextWindow is reel acp's --context-window: the model context
	// window in tokens, automatic compaction starting at 80% of it (0:
	// reel's per-model default).
	ContextWindow int `json:"contextWindow,omitempty"`
	// MCPServers are reel's own: the stand-in MCP servers (reel
	// mcp-standin) the run's session/new and session/load pass, in order.
	MCPServers []MCPServer `json:"mcpServers,omitempty"`
	// LSPServer is reel's own: the mode of the stand-in language server
	// (reel lsp-standin MODE) the run's lsp tool uses for .ts files
	// (reel acp --lsp-server); "" offers no lsp tool.
	LSPServer string `json:"lspServer,omitempty"`
	// EditorBuffers and ElicitationAnswers are reel's own: the unsaved
	// buffers and the elicitation replies of the editor the client plays
	// (editor.go).
	EditorBuffers      map[string]string `json:"editorBuffers,omitempty"`
	ElicitationAnswers []json.RawMessage `json:"elicitationAnswers,omitempty"`
	// DebugFlags are reel acp's debug flags the run adds, each
	// "--debug-NAME" or "--debug-NAME=VALUE" (e.g.
	// "--debug-job-wait-signal=.job-waiting"): the fences a fixture needs
	// to be deterministic. Given to the record and every replay alike.
	DebugFlags []string `json:"debugFlags,omitempty"`
}

// MCPServer is one stand-in MCP server of a scenario: Name is the name the
// client gives it, Transport "stdio" (reel mcp-standin MODE as a child of
// the agent) or "http" / "sse" (served by the harness on 127.0.0.1 while
// recording), Mode the stand-in's mode (mcptest.Modes; stdio only for the
// misbehaving ones). A replay starts none of them: the agent replays them
// from the recording.
type MCPServer struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Mode      string `json:"mode"`
}

// inputFields lists the top-level members of input.json.
func inputFields() []string {
	return []string{"steps", "permissionAnswers", "recordedWith", "mode", "approval", "network", "imageInput", "models", "terminals", "checkpoints", "codeMode", "sessionQuery", "listPageSize", "contextWindow", "mcpServers", "lspServer", "editorBuffers", "elicitationAnswers", "debugFlags"}
}

// StandinPrefix starts a RecordedWith value that names a stand-in model
// script, relative to the scenario folder.
const StandinPrefix = "standin:"

// StandinScript returns the stand-in script named by RecordedWith.
func (in *Input) StandinScript() (string, bool) {
	if rest, ok := strings.CutPrefix(in.RecordedWith, StandinPrefix); ok {
		return rest, true
	}
	return "", false
}

// ParseInput parses input.json content strictly. file is used only in
// error messages. Every error is an *Error; a step whose op the vocabulary
// does not define is an ErrUnknownOp naming the op and the step
// ("steps[3].op").
func ParseInput(file string, data []byte) (*Input, error) {
	root, err := strictjson.Parse(file, data)
	if err != nil {
		return nil, err
	}
	doc, err := root.Object()
	if err != nil {
		return nil, err
	}
	top := inputFields()
	if err := doc.Check(top, strictjson.Fields{Allowed: top, Required: []string{"steps"}}, "input"); err != nil {
		return nil, err
	}
	in := &Input{}
	for _, m := range doc.Members {
		switch m.Key {
		case "steps":
			in.Steps, err = steps(m.Value)
		case "permissionAnswers":
			in.PermissionAnswers, err = answers(m.Value)
		case "mode":
			in.Mode, err = m.Value.NonEmpty()
		case "approval":
			in.Approval, err = m.Value.NonEmpty()
		case "network":
			in.Network, err = m.Value.NonEmpty()
		case "imageInput":
			in.ImageInput, err = m.Value.NonEmpty()
		case "terminals":
			in.Terminals, err = m.Value.Bool()
		case "checkpoints":
			in.Checkpoints, err = m.Value.Bool()
		case "codeMode":
			in.CodeMode, err = m.Value.Bool()
		case "sessionQuery":
			in.SessionQuery, err = m.Value.Bool()
		case "models":
			in.Models, err = m.Value.NonEmpty()
		case "listPageSize":
			in.ListPageSize, err = m.Value.Int(1)
		case "contextWindow":
			in.ContextWindow, err = m.Value.Int(1)
		case "recordedWith":
			in.RecordedWith, err = recordedWith(m.Value)
		case "mcpServers":
			in.MCPServers, err = mcpServers(m.Value)
		case "lspServer":
			in.LSPServer, err = m.Value.NonEmpty()
		case "editorBuffers":
			in.EditorBuffers, err = editorBuffers(m.Value)
		case "elicitationAnswers":
			in.ElicitationAnswers, err = elicitationAnswers(m.Value)
		case "debugFlags":
			in.DebugFlags, err = debugFlags(m.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// mcpServers parses the stand-in MCP servers: unique names, known
// transports and modes.
func mcpServers(v strictjson.Value) ([]MCPServer, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	var out []MCPServer
	fields := []string{"name", "transport", "mode"}
	for _, e := range elems {
		obj, err := e.Object()
		if err != nil {
			return nil, err
		}
		if err := obj.Check(fields, strictjson.Fields{Allowed: fields, Required: fields}, "an MCP server"); err != nil {
			return nil, err
		}
		var s MCPServer
		for _, m := range obj.Members {
			var val string
			if val, err = m.Value.NonEmpty(); err != nil {
				return nil, err
			}
			switch m.Key {
			case "name":
				if slices.ContainsFunc(out, func(o MCPServer) bool { return o.Name == val }) {
					return nil, m.Value.Errorf(ErrBadValue, "MCP server name %q is used twice", val)
				}
				s.Name = val
			case "transport":
				if !slices.Contains([]string{"stdio", "http", "sse"}, val) {
					return nil, m.Value.Errorf(ErrBadValue, "unknown MCP transport %q (want stdio, http or sse)", val)
				}
				s.Transport = val
			case "mode":
				if !slices.Contains(mcptest.Modes, val) {
					return nil, m.Value.Errorf(ErrBadValue, "unknown stand-in MCP mode %q (want one of %s)", val, strings.Join(mcptest.Modes, ", "))
				}
				s.Mode = val
			}
		}
		if s.Transport != "stdio" && s.Mode != mcptest.ModeTools && s.Mode != mcptest.ModeHostile {
			return nil, obj.Members[0].Value.Errorf(ErrBadValue, "MCP server %q: mode %q runs over stdio only", s.Name, s.Mode)
		}
		out = append(out, s)
	}
	return out, nil
}

// debugFlags parses the debug flags: a non-empty array of strings, each
// "--debug-NAME" or "--debug-NAME=VALUE" with NAME of lower-case letters,
// digits and dashes (reel acp refuses a name it does not define).
func debugFlags(v strictjson.Value) ([]string, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, v.Errorf(ErrBadValue, "must not be empty")
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		f, err := e.NonEmpty()
		if err != nil {
			return nil, err
		}
		name, _, _ := strings.Cut(f, "=")
		rest, ok := strings.CutPrefix(name, "--debug-")
		if !ok || rest == "" || strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return nil, e.Errorf(ErrBadValue, "debug flag %q: want --debug-NAME or --debug-NAME=VALUE", f)
		}
		out = append(out, f)
	}
	return out, nil
}

func recordedWith(v strictjson.Value) (string, error) {
	s, err := v.NonEmpty()
	if err != nil {
		return "", err
	}
	if script, ok := strings.CutPrefix(s, StandinPrefix); ok {
		if script == "" {
			return "", v.Errorf(ErrBadValue, "%q names no stand-in script", s)
		}
		if why := strictjson.NotLocal(script, "scenario directory"); why != "" {
			return "", v.Errorf(ErrUnsafePath, "%s", why)
		}
	}
	return s, nil
}

func steps(v strictjson.Value) ([]Step, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, v.Errorf(ErrBadValue, "must not be empty")
	}
	out := make([]Step, 0, len(elems))
	for _, e := range elems {
		s, err := step(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// step parses one step: its op (a twin name becomes the op with
// ExpectError), then exactly the fields the op accepts.
func step(v strictjson.Value) (Step, error) {
	var s Step
	obj, err := v.Object()
	if err != nil {
		return s, err
	}
	opV, err := obj.Require(fOp)
	if err != nil {
		return s, err
	}
	name, err := opV.NonEmpty()
	if err != nil {
		return s, err
	}
	spec, twin, ok := lookup(Op(name))
	if !ok {
		return s, opV.Errorf(ErrUnknownOp, "unknown op %q", name)
	}
	fs := strictjson.Fields{Allowed: spec.fields(), Required: spec.required}
	if twin { // the twin's name already says expectError: true
		fs.Allowed = slices.DeleteFunc(fs.Allowed, func(f string) bool { return f == fExpectError })
	}
	if err := obj.Check(stepUniverse(), fs, fmt.Sprintf("op %q", name)); err != nil {
		return s, err
	}
	s.Op, s.ExpectError = spec.op, twin
	for _, m := range obj.Members {
		switch m.Key {
		case fText:
			s.Text, err = m.Value.Str()
		case fContent:
			s.Content, err = content(m.Value)
		case fWaitForFile:
			s.WaitForFile, err = fileWait(m.Value)
		case fPath:
			s.Path, err = m.Value.LocalPath("run's cwd")
		case fWaitForText:
			s.WaitForText, err = m.Value.NonEmpty()
		case fMinimumTurn:
			s.MinimumTurn, err = m.Value.Int(1)
		case fChild:
			s.Child, err = m.Value.Int(1)
		case fTimeoutMs:
			s.TimeoutMs, err = m.Value.Int(1)
		case fSession:
			s.Session, err = m.Value.Int(0)
		case fMode:
			s.Mode, err = m.Value.NonEmpty()
		case fConfigID:
			s.ConfigID, err = m.Value.NonEmpty()
		case fValue:
			s.Value, err = m.Value.NonEmpty()
		case fExpectError:
			s.ExpectError, err = m.Value.Bool()
		case fAddDirs:
			s.AdditionalDirectories, err = dirList(m.Value)
		case fNotices:
			s.Notices, err = m.Value.Bool()
		case fCompaction:
			s.Compaction, err = m.Value.Bool()
		case fFollow:
			s.FollowCursor, err = m.Value.Bool()
		case fAtAnswer:
			s.AtAnswer, err = m.Value.Int(1)
		case fAtSeq:
			s.AtSeq, err = m.Value.Int(1)
		}
		if err != nil {
			return s, err
		}
	}
	if s.AtAnswer != 0 && s.AtSeq != 0 {
		return s, v.Errorf(ErrBadValue, "op %q takes %q or %q, not both", name, fAtAnswer, fAtSeq)
	}
	return s, nil
}

// maxAddDirs bounds the additionalDirectories of one step.
const maxAddDirs = 64

// dirList parses additionalDirectories: an array of at most maxAddDirs
// non-empty strings (empty: an empty list, sent as []).
func dirList(v strictjson.Value) ([]string, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	if len(elems) > maxAddDirs {
		return nil, v.Errorf(ErrBadValue, "has %d entries, more than %d", len(elems), maxAddDirs)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		d, err := e.NonEmpty()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func fileWait(v strictjson.Value) (*FileWait, error) {
	obj, err := v.Object()
	if err != nil {
		return nil, err
	}
	fs := strictjson.Fields{Allowed: []string{fPath}, Required: []string{fPath}}
	if err := obj.Check(fs.Allowed, fs, fWaitForFile); err != nil {
		return nil, err
	}
	p, err := obj.Members[0].Value.LocalPath("run's cwd")
	if err != nil {
		return nil, err
	}
	return &FileWait{Path: p}, nil
}

func content(v strictjson.Value) ([]ContentBlock, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, v.Errorf(ErrBadValue, "must not be empty")
	}
	universe := []string{"type", "text", "data", "mimeType", "uri", "name"}
	out := make([]ContentBlock, 0, len(elems))
	for _, e := range elems {
		obj, err := e.Object()
		if err != nil {
			return nil, err
		}
		tv, err := obj.Require("type")
		if err != nil {
			return nil, err
		}
		typ, err := tv.NonEmpty()
		if err != nil {
			return nil, err
		}
		fs, ok := contentFields(ContentType(typ))
		if !ok {
			return nil, tv.Errorf(ErrBadValue, "unknown content type %q", typ)
		}
		if err := obj.Check(universe, fs, fmt.Sprintf("content type %q", typ)); err != nil {
			return nil, err
		}
		c := ContentBlock{Type: ContentType(typ)}
		for _, m := range obj.Members {
			switch m.Key {
			case "text":
				c.Text, err = m.Value.Str()
			case "data":
				c.Data, err = base64Data(m.Value)
			case "mimeType":
				c.MimeType, err = m.Value.NonEmpty()
			case "uri":
				c.URI, err = m.Value.NonEmpty()
			case "name":
				c.Name, err = m.Value.NonEmpty()
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func base64Data(v strictjson.Value) (string, error) {
	s, err := v.NonEmpty()
	if err != nil {
		return "", err
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return "", v.Errorf(errors.Join(ErrBadValue, err), "invalid base64: %v", err)
	}
	return s, nil
}

func answers(v strictjson.Value) ([]PermissionAnswer, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	var out []PermissionAnswer
	for _, e := range elems {
		obj, err := e.Object()
		if err != nil {
			return nil, err
		}
		fs := strictjson.Fields{Allowed: []string{"kind"}, Required: []string{"kind"}}
		if err := obj.Check(fs.Allowed, fs, "a permission answer"); err != nil {
			return nil, err
		}
		kv := obj.Members[0].Value
		kind, err := kv.NonEmpty()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(permissionKinds(), PermissionKind(kind)) {
			return nil, kv.Errorf(ErrBadValue, "unknown permission option kind %q (want allow_once, allow_always, reject_once or reject_always)", kind)
		}
		out = append(out, PermissionAnswer{Kind: PermissionKind(kind)})
	}
	return out, nil
}
