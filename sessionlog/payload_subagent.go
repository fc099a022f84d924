package sessionlog

import (
	"encoding/json"
	"strconv"
)

// The records of a child session (a subagent), as dsh writes them: the
// child's descriptor, written when its first step is admitted, and the
// end of the events a fork child copied from its parent. Both are
// log-only (no surface op).
const (
	TypeSubagentDescriptor = "subagent/descriptor"
	TypeEndSeed            = "session/end-seed"
)

// The descriptor's modes and providers.
const (
	SubagentOneShot     = "one-shot"
	SubagentContinuable = "continuable"
	SubagentSpawn       = "spawn"
	SubagentFork        = "fork"
)

// SubagentDescriptorData is the data of subagent/descriptor: Version 2,
// Mode (SubagentOneShot, or SubagentContinuable: a background child), Provider
// (SubagentSpawn: a fresh child; SubagentFork: seeded with the parent's
// turns), Label, the caller's description of the task, and for a
// continuable child the model route it runs on (AgentProvider,
// AgentModel); the optional members are omitted when empty.
type SubagentDescriptorData struct {
	Version       int    `json:"version"`
	Mode          string `json:"mode"`
	Provider      string `json:"provider"`
	Label         string `json:"label,omitempty"`
	AgentProvider string `json:"agentProvider,omitempty"`
	AgentModel    string `json:"agentModel,omitempty"`
}

// AppendJSON appends {"version","mode","provider","label"?,
// "agentProvider"?,"agentModel"?}.
func (d SubagentDescriptorData) AppendJSON(b []byte) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(d.Version), 10)
	b = append(b, `,"mode":`...)
	b = AppendString(b, d.Mode)
	b = append(b, `,"provider":`...)
	b = AppendString(b, d.Provider)
	if d.Label != "" {
		b = append(b, `,"label":`...)
		b = AppendString(b, d.Label)
	}
	if d.AgentProvider != "" {
		b = append(b, `,"agentProvider":`...)
		b = AppendString(b, d.AgentProvider)
	}
	if d.AgentModel != "" {
		b = append(b, `,"agentModel":`...)
		b = AppendString(b, d.AgentModel)
	}
	return append(b, '}')
}

// EndSeedData is the data of session/end-seed: {}.
type EndSeedData struct{}

// AppendJSON appends {}.
func (EndSeedData) AppendJSON(b []byte) []byte { return append(b, "{}"...) }

// ChildHeader describes the header of a child session: Parent is its
// parent's id, SeedLength the number of parent events it starts with (a
// fork; 0 for none), Depth its delegation depth (the parent's plus one).
type ChildHeader struct {
	Parent     string
	SeedLength int
	Depth      int
}

// NewChildHeader builds the version-0 header of a child session in dsh's
// member order: type, version, id, createdAt, cwd, parentSession,
// seedLength (when not 0), origin "subagent", delegationDepth.
func NewChildHeader(id string, createdAt int64, cwd string, c ChildHeader) Header {
	b := []byte(`{"type":"session","version":0,"id":`)
	b = AppendString(b, id)
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, createdAt, 10)
	b = append(b, `,"cwd":`...)
	b = AppendString(b, cwd)
	b = append(b, `,"parentSession":`...)
	b = AppendString(b, c.Parent)
	if c.SeedLength > 0 {
		b = append(b, `,"seedLength":`...)
		b = strconv.AppendInt(b, int64(c.SeedLength), 10)
	}
	b = append(b, `,"origin":"subagent","delegationDepth":`...)
	b = strconv.AppendInt(b, int64(c.Depth), 10)
	b = append(b, '}')
	return Header{Version: Version, ID: id, CreatedAt: createdAt, Cwd: cwd, Raw: b}
}

// Child reads the child-session members of a header: ok is false for a
// top-level session (no parentSession). Depth is delegationDepth (also
// read for a top-level header, where dsh writes 0).
func (h Header) Child() (c ChildHeader, ok bool) {
	var m struct {
		Parent     string `json:"parentSession"`
		SeedLength int    `json:"seedLength"`
		Depth      int    `json:"delegationDepth"`
	}
	if json.Unmarshal(h.Raw, &m) != nil {
		return ChildHeader{}, false
	}
	return ChildHeader{Parent: m.Parent, SeedLength: m.SeedLength, Depth: m.Depth}, m.Parent != ""
}
