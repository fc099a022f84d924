package acpserver

import (
	"bytes"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// initializeShape is the answer Server.Initialize builds, for the inputs
// it varies: the version, whether the model takes images, and the auth
// method (none when keyVar is "").
func initializeShape(name, version string, image bool, keyVar string) acp.InitializeResponse {
	srv := &Server{cfg: Config{KeyVar: keyVar}}
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: name, Version: version},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true, Image: image},
			SessionCapabilities: srv.sessionCapabilities(),
			McpCapabilities:     mcpCapabilities,
		},
		AuthMethods: srv.authMethods(),
		Meta:        steeringMeta(),
	}
}

// TestInitializeAnswerBytes holds the hand-written initialize answer to
// the bytes encoding/json writes for the same response, for every answer
// reel gives (images or not, a key variable or none, a store that can
// delete or not, strings that need escaping), and checks that a response
// of another shape is declined (it is then encoded by reflection).
func TestInitializeAnswerBytes(t *testing.T) {
	type tc struct {
		name string
		resp acp.InitializeResponse
		fast bool
	}
	var cases []tc
	for _, image := range []bool{false, true} {
		for _, key := range []string{"", "DEEPSEEK_API_KEY", `K<&>"\` + "\u2028é\xff\xfe"} {
			for _, version := range []string{"0.1.0", `v<script>"&` + "\t\u2029\xff"} {
				cases = append(cases, tc{name: "reel", resp: initializeShape("reel", version, image, key), fast: true})
			}
		}
	}
	odd := func(f func(*acp.InitializeResponse)) acp.InitializeResponse {
		r := initializeShape("reel", "1", true, "K")
		f(&r)
		return r
	}
	cases = append(cases,
		tc{name: "no load", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.LoadSession = false })},
		tc{name: "audio", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.PromptCapabilities.Audio = true })},
		tc{name: "no embedded context", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.PromptCapabilities.EmbeddedContext = false })},
		tc{name: "no sse", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.McpCapabilities.Sse = false })},
		tc{name: "no fork", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.SessionCapabilities.Fork = nil })},
		tc{name: "title", resp: odd(func(r *acp.InitializeResponse) { r.AgentInfo.Title = acp.Ptr("Reel") })},
		tc{name: "no agent info", resp: odd(func(r *acp.InitializeResponse) { r.AgentInfo = nil })},
		tc{name: "meta", resp: odd(func(r *acp.InitializeResponse) {
			r.Meta = map[string]any{"steering": map[string]any{"supported": false}}
		})},
		tc{name: "capability meta", resp: odd(func(r *acp.InitializeResponse) { r.AgentCapabilities.Meta = map[string]any{"x": 1} })},
		tc{name: "two auth methods", resp: odd(func(r *acp.InitializeResponse) { r.AuthMethods = append(r.AuthMethods, r.AuthMethods[0]) })},
		tc{name: "auth without description", resp: odd(func(r *acp.InitializeResponse) { r.AuthMethods[0].Agent.Description = nil })},
		tc{name: "env auth", resp: odd(func(r *acp.InitializeResponse) {
			r.AuthMethods = []acp.AuthMethod{{EnvVar: &acp.AuthMethodEnvVarInline{Id: "e", Name: "n"}}}
		})},
		tc{name: "protocol 2", resp: odd(func(r *acp.InitializeResponse) { r.ProtocolVersion = 2 }), fast: true},
	)
	for _, c := range cases {
		for _, canDelete := range []bool{false, true} {
			want, err := reflectInitializeAnswer(c.resp, canDelete)
			if err != nil {
				t.Fatalf("%s: reflective answer: %v", c.name, err)
			}
			got, ok := initializeAnswer(c.resp, canDelete)
			if ok != c.fast {
				t.Errorf("%s (delete %v): written by hand = %v, want %v", c.name, canDelete, ok, c.fast)
				continue
			}
			if ok && !bytes.Equal(got, want) {
				t.Errorf("%s (delete %v): hand-written answer differs:\n got %s\nwant %s", c.name, canDelete, got, want)
			}
		}
	}
}
