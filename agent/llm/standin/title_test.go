package standin

import (
	"net/http"
	"strings"
	"testing"
)

// titleReq is a title request as the agent sends it.
const titleReq = `{"model":"m","stream":true,"messages":[{"role":"system","content":"` + TitlePrompt +
	` from the supplied human messages."},{"role":"user","content":"Generate…"}]}`

// TestTitleRequests: title requests are answered from "title" (or with
// DefaultTitle) without taking a response, so scripts written before
// titles keep their order; they are not listed by Requests.
func TestTitleRequests(t *testing.T) {
	for _, c := range []struct {
		name, script, want string
		status             int
	}{
		{"default", `{"responses":[{"text":"one"},{"text":"two"}]}`, DefaultTitle, http.StatusOK},
		{"scripted", `{"responses":[{"text":"one"},{"text":"two"}],"title":{"text":"Scripted title"}}`, "Scripted title", http.StatusOK},
		{"error", `{"responses":[{"text":"one"},{"text":"two"}],"title":{"error":{"status":503,"message":"busy"}}}`, "busy", http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, base := start(t, c.script)
			if _, body := post(t, base+"/v1/chat/completions", streamReq); !strings.Contains(body, `"content":"one"`) {
				t.Fatalf("first response: %s", body)
			}
			for range 2 {
				status, body := post(t, base+"/v1/chat/completions", titleReq)
				if status != c.status || !strings.Contains(strings.ReplaceAll(body, `","`, ""), c.want[:4]) {
					t.Fatalf("title request: %d %s, want %d with %q", status, body, c.status, c.want)
				}
			}
			if _, body := post(t, base+"/v1/chat/completions", streamReq); !strings.Contains(body, `"content":"two"`) {
				t.Errorf("the title requests took a response: %s", body)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("Requests lists %d requests, want the 2 of the conversation", n)
			}
		})
	}
	if _, err := ParseScript([]byte(`{"responses":[{"text":"a"}],"title":{"chunkSize":-1}}`)); err == nil || !strings.Contains(err.Error(), "title:") {
		t.Errorf("a bad title response: %v", err)
	}
}
