package acpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// The initialize answer, written by hand.
//
// Encoding acp.InitializeResponse through encoding/json is the first use
// of a dozen SDK types in the process: building their encoders (and
// re-encoding the result through maps to add sessionCapabilities.delete)
// cost ≈ 0.2 ms of CPU between the editor's first frame and its answer,
// on every start. initializeAnswer writes the same bytes for the answers
// reel gives and declines anything else, which then goes the reflective
// way (reflectInitializeAnswer); TestInitializeAnswerBytes holds the two
// to the same bytes.

// initializeAnswer is resp's answer (with sessionCapabilities.delete when
// canDelete) written directly; ok is false when resp is not of the shape
// Server.Initialize builds, for which the caller encodes it by
// reflection.
func initializeAnswer(resp acp.InitializeResponse, canDelete bool) (_ json.RawMessage, ok bool) {
	if resp.AgentInfo == nil {
		return nil, false
	}
	image := resp.AgentCapabilities.PromptCapabilities.Image
	shape := acp.InitializeResponse{
		ProtocolVersion: resp.ProtocolVersion,
		AgentInfo:       &acp.Implementation{Name: resp.AgentInfo.Name, Version: resp.AgentInfo.Version},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true, Image: image},
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}, Close: &acp.SessionCloseCapabilities{}, Resume: &acp.SessionResumeCapabilities{}, Fork: &acp.SessionForkCapabilities{}},
			McpCapabilities:     acp.McpCapabilities{Http: true, Sse: true},
		},
		AuthMethods: []acp.AuthMethod{},
		Meta:        steeringMeta(),
	}
	var auth *acp.AuthMethodAgent
	if len(resp.AuthMethods) == 1 && resp.AuthMethods[0].Agent != nil && resp.AuthMethods[0].Agent.Description != nil {
		a := *resp.AuthMethods[0].Agent
		auth = &acp.AuthMethodAgent{Id: a.Id, Name: a.Name, Description: acp.Ptr(*a.Description)}
		shape.AuthMethods = []acp.AuthMethod{{Agent: auth}}
	}
	if !reflect.DeepEqual(shape, resp) {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(512)
	b.WriteString(`{"_meta":{"steering":{"supported":true}},"agentCapabilities":{"auth":{},"loadSession":true,` +
		`"mcpCapabilities":{"http":true,"sse":true},"promptCapabilities":{"embeddedContext":true`)
	if image {
		b.WriteString(`,"image":true`)
	}
	b.WriteString(`},"sessionCapabilities":{"close":{},`)
	if canDelete {
		b.WriteString(`"delete":{},`)
	}
	b.WriteString(`"fork":{},"list":{},"resume":{}}},"agentInfo":{"name":`)
	writeString(&b, shape.AgentInfo.Name)
	b.WriteString(`,"version":`)
	writeString(&b, shape.AgentInfo.Version)
	b.WriteString(`},"authMethods":[`)
	if auth != nil {
		b.WriteString(`{"description":`)
		writeUnionString(&b, *auth.Description)
		b.WriteString(`,"id":`)
		writeUnionString(&b, auth.Id)
		b.WriteString(`,"name":`)
		writeUnionString(&b, auth.Name)
		b.WriteString(`}`)
	}
	b.WriteString(`],"protocolVersion":`)
	b.WriteString(strconv.Itoa(int(shape.ProtocolVersion)))
	b.WriteString(`}`)
	return json.RawMessage(b.Bytes()), true
}

// writeString writes s as encoding/json writes a string (HTML characters
// escaped, each byte of invalid UTF-8 as \ufffd).
func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always encodes
	b.Write(q)
}

// writeUnionString writes s as the SDK's union types write a string of
// their variant: encoded, decoded into a map and encoded again, so each
// byte of invalid UTF-8 comes out as U+FFFD itself, not escaped.
func writeUnionString(b *bytes.Buffer, s string) {
	if !utf8.ValidString(s) {
		var v strings.Builder
		for _, r := range s {
			v.WriteRune(r) // an invalid byte ranges as utf8.RuneError
		}
		s = v.String()
	}
	writeString(b, s)
}

// reflectInitializeAnswer is resp's answer encoded by encoding/json, with
// sessionCapabilities.delete added when canDelete.
func reflectInitializeAnswer(resp acp.InitializeResponse, canDelete bool) (json.RawMessage, error) {
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	if !canDelete {
		return json.RawMessage(b), nil
	}
	return addMember(b, []string{"agentCapabilities", "sessionCapabilities"}, "delete", json.RawMessage("{}"))
}
