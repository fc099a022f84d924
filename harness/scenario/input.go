package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Op names a scripted client step.
type Op string

// The step vocabulary: the corpus's ops followed by reel's own.
const (
	// OpInitialize sends "initialize".
	OpInitialize Op = "initialize"
	// OpNewSession sends "session/new"; sessions are indexed 0, 1, … in
	// the order they are created.
	OpNewSession Op = "newSession"
	// OpPrompt sends "session/prompt" with Text and waits for the result.
	OpPrompt Op = "prompt"
	// OpPromptContent sends "session/prompt" with the Content blocks.
	OpPromptContent Op = "promptContent"
	// OpPromptAndCancel sends a prompt, waits until WaitForFile.Path exists
	// in the run's cwd, then sends "session/cancel".
	OpPromptAndCancel Op = "promptAndCancel"
	// OpPromptExpectError sends a prompt whose response must be a JSON-RPC
	// error.
	OpPromptExpectError Op = "promptExpectError"
	// OpPromptAndWaitForAgentMessage sends a prompt and waits until the
	// agent's streamed message text contains WaitForText.
	OpPromptAndWaitForAgentMessage Op = "promptAndWaitForAgentMessage"
	// OpWaitForTurnEnd waits for the pending prompt of the session to end.
	OpWaitForTurnEnd Op = "waitForTurnEnd"
	// OpWaitForTurnStart waits until the session has started turn
	// MinimumTurn (turns the agent starts by itself, e.g. after a
	// background subagent settles).
	OpWaitForTurnStart Op = "waitForTurnStart"
	// OpWaitForFile waits until Path exists in the run's cwd.
	OpWaitForFile Op = "waitForFile"
	// OpWaitForTitleAfterTurnEnd waits for the session title that some
	// agents derive after a turn has ended.
	OpWaitForTitleAfterTurnEnd Op = "waitForTitleAfterTurnEnd"
	// OpWaitForSubagentTurnEnd waits for a child session (Child, 1-based;
	// 0 = any) to end turn MinimumTurn (0 = any turn).
	OpWaitForSubagentTurnEnd Op = "waitForSubagentTurnEnd"
	// OpLoadSession restarts the agent as a fresh process and sends
	// "session/load" for session Session.
	OpLoadSession Op = "loadSession"
	// OpSetMode sends "session/set_mode" with Mode.
	OpSetMode Op = "setMode"
	// OpCancel sends the "session/cancel" notification.
	OpCancel Op = "cancel"
	// OpLoadSessionExpectError is OpLoadSession whose response must be a
	// JSON-RPC error (a refused log); the process keeps serving.
	OpLoadSessionExpectError Op = "loadSessionExpectError"
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
	fSession     = "session"
	fMode        = "mode"
)

// stepUniverse lists every step field in the order Step.MarshalJSON writes
// them.
func stepUniverse() []string {
	return []string{fOp, fText, fContent, fWaitForFile, fPath, fWaitForText, fMinimumTurn, fChild, fSession, fMode}
}

// opTable is the step vocabulary the loader dispatches on: each op and the
// fields it accepts ("op" is implied) and requires. docs/scenarios.md lists
// the same table (TestDocOpTable keeps them equal).
func opTable() map[Op]fieldSet {
	prompt := func(extra ...string) fieldSet {
		return fieldSet{
			allowed:  append([]string{fOp, fSession}, extra...),
			required: extra,
		}
	}
	bare := fieldSet{allowed: []string{fOp}}
	return map[Op]fieldSet{
		OpInitialize:                   bare,
		OpNewSession:                   bare,
		OpPrompt:                       prompt(fText),
		OpPromptExpectError:            prompt(fText),
		OpPromptContent:                prompt(fContent),
		OpPromptAndCancel:              prompt(fText, fWaitForFile),
		OpPromptAndWaitForAgentMessage: prompt(fText, fWaitForText),
		OpWaitForTurnStart:             prompt(fMinimumTurn),
		OpSetMode:                      prompt(fMode),
		OpWaitForTurnEnd:               prompt(),
		OpWaitForTitleAfterTurnEnd:     prompt(),
		OpLoadSession:                  prompt(),
		OpLoadSessionExpectError:       prompt(),
		OpCancel:                       prompt(),
		OpWaitForSubagentTurnEnd:       {allowed: []string{fOp, fSession, fChild, fMinimumTurn}},
		OpWaitForFile:                  {allowed: []string{fOp, fPath}, required: []string{fPath}},
	}
}

// opFields says which fields an op accepts and requires; false for an op
// the vocabulary does not define.
func opFields(op Op) (fieldSet, bool) {
	fs, ok := opTable()[op]
	return fs, ok
}

// Ops lists the whole step vocabulary in a stable order.
func Ops() []Op {
	return []Op{
		OpInitialize, OpNewSession, OpPrompt, OpPromptContent, OpPromptAndCancel,
		OpPromptExpectError, OpPromptAndWaitForAgentMessage, OpWaitForTurnEnd,
		OpWaitForTurnStart, OpWaitForFile, OpWaitForTitleAfterTurnEnd,
		OpWaitForSubagentTurnEnd, OpLoadSession, OpLoadSessionExpectError, OpSetMode, OpCancel,
	}
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
	// Session selects the target session by creation index (default 0).
	Session int
	// Mode is the session mode id for OpSetMode.
	Mode string
}

// FileWait names a file, relative to the run's cwd, whose appearance a step
// waits for.
type FileWait struct {
	// Path is slash-separated and local (no leading "/", no "..").
	Path string `json:"path"`
}

// IsPrompt reports whether the step sends "session/prompt".
func (s Step) IsPrompt() bool {
	switch s.Op {
	case OpPrompt, OpPromptContent, OpPromptAndCancel, OpPromptExpectError, OpPromptAndWaitForAgentMessage:
		return true
	}
	return false
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

// MarshalJSON writes the step in input.json form: "op" first, then the
// fields the op accepts, omitting optional fields that are zero.
func (s Step) MarshalJSON() ([]byte, error) {
	fs, ok := opFields(s.Op)
	if !ok {
		fs = fieldSet{allowed: []string{fOp}}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, key := range stepUniverse() {
		if !contains(fs.allowed, key) {
			continue
		}
		var v any
		required := contains(fs.required, key) || key == fOp
		switch key {
		case fOp:
			v = s.Op
		case fText:
			v = s.Text
		case fContent:
			v, required = s.Content, required || len(s.Content) > 0
		case fWaitForFile:
			v, required = s.WaitForFile, required || s.WaitForFile != nil
		case fPath:
			v = s.Path
		case fWaitForText:
			v = s.WaitForText
		case fMinimumTurn:
			v, required = s.MinimumTurn, required || s.MinimumTurn != 0
		case fChild:
			v, required = s.Child, required || s.Child != 0
		case fSession:
			v, required = s.Session, required || s.Session != 0
		case fMode:
			v = s.Mode
		}
		if !required {
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

func contentFields(t ContentType) (fieldSet, bool) {
	switch t {
	case ContentText:
		return fieldSet{allowed: []string{"type", "text"}, required: []string{"text"}}, true
	case ContentImage:
		return fieldSet{allowed: []string{"type", "data", "mimeType", "uri"}, required: []string{"data", "mimeType"}}, true
	case ContentAudio:
		return fieldSet{allowed: []string{"type", "data", "mimeType"}, required: []string{"data", "mimeType"}}, true
	case ContentResourceLink:
		return fieldSet{allowed: []string{"type", "uri", "name", "mimeType"}, required: []string{"uri", "name"}}, true
	}
	return fieldSet{}, false
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
}

// inputFields lists the top-level members of input.json.
func inputFields() []string {
	return []string{"steps", "permissionAnswers", "recordedWith", "mode", "approval"}
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
// error messages. Every error is an *Error.
func ParseInput(file string, data []byte) (*Input, error) {
	d := decoder{file: file}
	if err := d.syntax(data); err != nil {
		return nil, err
	}
	members, err := d.object("", data)
	if err != nil {
		return nil, err
	}
	in := &Input{}
	top := inputFields()
	if err := d.check("", members, top, fieldSet{allowed: top, required: []string{"steps"}}, "input"); err != nil {
		return nil, err
	}
	for _, m := range members {
		switch m.key {
		case "steps":
			if in.Steps, err = d.steps(m.val); err != nil {
				return nil, err
			}
		case "permissionAnswers":
			if in.PermissionAnswers, err = d.answers(m.val); err != nil {
				return nil, err
			}
		case "mode":
			if in.Mode, err = d.nonEmpty("mode", m.val); err != nil {
				return nil, err
			}
		case "approval":
			if in.Approval, err = d.nonEmpty("approval", m.val); err != nil {
				return nil, err
			}
		case "recordedWith":
			if in.RecordedWith, err = d.nonEmpty("recordedWith", m.val); err != nil {
				return nil, err
			}
			if script, ok := in.StandinScript(); ok {
				if script == "" {
					return nil, d.errorf("recordedWith", ErrBadValue, "%q names no stand-in script", in.RecordedWith)
				}
				if why := notLocal(script, "scenario directory"); why != "" {
					return nil, d.errorf("recordedWith", ErrUnsafePath, "%s", why)
				}
			}
		}
	}
	return in, nil
}

func (d decoder) steps(raw json.RawMessage) ([]Step, error) {
	elems, err := d.array("steps", raw)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errorf("steps", ErrBadValue, "must not be empty")
	}
	steps := make([]Step, 0, len(elems))
	for i, e := range elems {
		s, err := d.step(index("steps", i), e)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func (d decoder) step(field string, raw json.RawMessage) (Step, error) {
	var s Step
	members, err := d.object(field, raw)
	if err != nil {
		return s, err
	}
	opRaw, ok := lookup(members, fOp)
	if !ok {
		return s, d.errorf(field, ErrMissingField, "missing field %q", fOp)
	}
	op, err := d.nonEmpty(dot(field, fOp), opRaw)
	if err != nil {
		return s, err
	}
	s.Op = Op(op)
	fs, ok := opFields(s.Op)
	if !ok {
		return s, d.errorf(dot(field, fOp), ErrBadValue, "unknown op %q", op)
	}
	if err := d.check(field, members, stepUniverse(), fs, fmt.Sprintf("op %q", op)); err != nil {
		return s, err
	}
	for _, m := range members {
		f := dot(field, m.key)
		switch m.key {
		case fText:
			s.Text, err = d.str(f, m.val)
		case fContent:
			s.Content, err = d.content(f, m.val)
		case fWaitForFile:
			s.WaitForFile, err = d.fileWait(f, m.val)
		case fPath:
			s.Path, err = d.localPath(f, m.val, "run's cwd")
		case fWaitForText:
			s.WaitForText, err = d.nonEmpty(f, m.val)
		case fMinimumTurn:
			s.MinimumTurn, err = d.integer(f, m.val, 1)
		case fChild:
			s.Child, err = d.integer(f, m.val, 1)
		case fSession:
			s.Session, err = d.integer(f, m.val, 0)
		case fMode:
			s.Mode, err = d.nonEmpty(f, m.val)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

func (d decoder) fileWait(field string, raw json.RawMessage) (*FileWait, error) {
	members, err := d.object(field, raw)
	if err != nil {
		return nil, err
	}
	fs := fieldSet{allowed: []string{fPath}, required: []string{fPath}}
	if err := d.check(field, members, fs.allowed, fs, fWaitForFile); err != nil {
		return nil, err
	}
	p, err := d.localPath(dot(field, fPath), members[0].val, "run's cwd")
	if err != nil {
		return nil, err
	}
	return &FileWait{Path: p}, nil
}

func (d decoder) content(field string, raw json.RawMessage) ([]ContentBlock, error) {
	elems, err := d.array(field, raw)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, d.errorf(field, ErrBadValue, "must not be empty")
	}
	universe := []string{"type", "text", "data", "mimeType", "uri", "name"}
	out := make([]ContentBlock, 0, len(elems))
	for i, e := range elems {
		f := index(field, i)
		members, err := d.object(f, e)
		if err != nil {
			return nil, err
		}
		typRaw, ok := lookup(members, "type")
		if !ok {
			return nil, d.errorf(f, ErrMissingField, "missing field %q", "type")
		}
		typ, err := d.nonEmpty(dot(f, "type"), typRaw)
		if err != nil {
			return nil, err
		}
		fs, ok := contentFields(ContentType(typ))
		if !ok {
			return nil, d.errorf(dot(f, "type"), ErrBadValue, "unknown content type %q", typ)
		}
		if err := d.check(f, members, universe, fs, fmt.Sprintf("content type %q", typ)); err != nil {
			return nil, err
		}
		c := ContentBlock{Type: ContentType(typ)}
		for _, m := range members {
			mf := dot(f, m.key)
			switch m.key {
			case "text":
				c.Text, err = d.str(mf, m.val)
			case "data":
				c.Data, err = d.base64Data(mf, m.val)
			case "mimeType":
				c.MimeType, err = d.nonEmpty(mf, m.val)
			case "uri":
				c.URI, err = d.nonEmpty(mf, m.val)
			case "name":
				c.Name, err = d.nonEmpty(mf, m.val)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func (d decoder) answers(raw json.RawMessage) ([]PermissionAnswer, error) {
	elems, err := d.array("permissionAnswers", raw)
	if err != nil {
		return nil, err
	}
	var out []PermissionAnswer
	for i, e := range elems {
		f := index("permissionAnswers", i)
		members, err := d.object(f, e)
		if err != nil {
			return nil, err
		}
		fs := fieldSet{allowed: []string{"kind"}, required: []string{"kind"}}
		if err := d.check(f, members, fs.allowed, fs, "a permission answer"); err != nil {
			return nil, err
		}
		kind, err := d.nonEmpty(dot(f, "kind"), members[0].val)
		if err != nil {
			return nil, err
		}
		known := false
		for _, k := range permissionKinds() {
			known = known || k == PermissionKind(kind)
		}
		if !known {
			return nil, d.errorf(dot(f, "kind"), ErrBadValue, "unknown permission option kind %q (want allow_once, allow_always, reject_once or reject_always)", kind)
		}
		out = append(out, PermissionAnswer{Kind: PermissionKind(kind)})
	}
	return out, nil
}
