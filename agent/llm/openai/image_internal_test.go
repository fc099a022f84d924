package openai

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// fakeImages serves image bytes by attachment id.
type fakeImages map[string][]byte

func (f fakeImages) Read(a sessionlog.ImageAttachment) ([]byte, error) {
	b, ok := f[a.ID]
	if !ok {
		return nil, errors.New("not stored")
	}
	return b, nil
}

func imagePartJSON(id string, bytes int) string {
	return fmt.Sprintf(`{"type":"image","attachment":{"attachmentId":%q,"mediaType":"image/png","width":1,"height":1,"bytes":%d}}`, id, bytes)
}

// wireMessages builds the request of msgs under cfg and returns its
// messages as JSON.
func wireMessages(t *testing.T, cfg Config, msgs ...string) string {
	t.Helper()
	req := llm.Request{Model: "m"}
	for _, m := range msgs {
		req.Messages = append(req.Messages, json.RawMessage(m))
	}
	p, err := buildParams(cfg, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImageMessages(t *testing.T) {
	src := fakeImages{"sha256:a": []byte("AAA"), "sha256:b": []byte("BBBB")}
	urlA := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("AAA"))
	urlB := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("BBBB"))
	user := `{"role":"user","content":[{"type":"text","text":"look"},` + imagePartJSON("sha256:a", 3) + `,{"type":"text","text":"ok?"}]}`
	call := `{"role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read_image","arguments":"{}"},{"type":"tool-call","id":"c2","name":"read_image","arguments":"{}"}]}`
	res1 := `{"role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"<path>a.png</path>"},` + imagePartJSON("sha256:a", 3) + `],"isError":false}]}`
	res2 := `{"role":"user","content":[{"type":"tool-result","toolCallId":"c2","content":[` + imagePartJSON("sha256:b", 4) + `],"isError":false}]}`
	next := `{"role":"user","content":[{"type":"text","text":"next"}]}`
	on := Config{ImageInput: true, Images: src}
	tests := []struct {
		name string
		cfg  Config
		msgs []string
		want string
	}{
		{"user image", on, []string{user},
			`[{"content":[{"text":"look","type":"text"},{"image_url":{"url":"` + urlA + `"},"type":"image_url"},{"text":"ok?","type":"text"}],"role":"user"}]`},
		{"text-only model", Config{}, []string{user},
			`[{"content":"look\n[image: image/png, 1x1 px, 3 bytes; not sent: the model takes no image input]\nok?","role":"user"}]`},
		{"image input without a store", Config{ImageInput: true}, []string{user},
			`[{"content":"look\n[image: image/png, 1x1 px, 3 bytes; not sent: the model takes no image input]\nok?","role":"user"}]`},
		{"tool result images after the tool messages", on, []string{call, res1, res2, next},
			`[{"tool_calls":[{"id":"c1","function":{"arguments":"{}","name":"read_image"},"type":"function"},{"id":"c2","function":{"arguments":"{}","name":"read_image"},"type":"function"}],"role":"assistant"},` +
				`{"content":"\u003cpath\u003ea.png\u003c/path\u003e","tool_call_id":"c1","role":"tool"},{"content":"(see attached image)","tool_call_id":"c2","role":"tool"},` +
				`{"content":[{"text":"Attached image(s) from tool result:","type":"text"},{"image_url":{"url":"` + urlA + `"},"type":"image_url"},{"image_url":{"url":"` + urlB + `"},"type":"image_url"}],"role":"user"},` +
				`{"content":"next","role":"user"}]`},
		{"missing attachment", on, []string{`{"role":"user","content":[` + imagePartJSON("sha256:gone", 3) + `]}`},
			`[{"content":[{"text":"[image: image/png, 1x1 px; not sent: not stored]","type":"text"}],"role":"user"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := wireMessages(t, tc.cfg, tc.msgs...); got != tc.want {
				t.Errorf("messages\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

// TestImageOffload: while the history's images exceed MaxRequestImageBytes
// (as base64), the oldest are sent as OffloadedImageText and never read.
func TestImageOffload(t *testing.T) {
	big := MaxRequestImageBytes / 4 * 3 / 2 // two fit, three do not
	src := fakeImages{"sha256:new": []byte("N"), "sha256:mid": []byte("M")}
	msgs := []string{
		`{"role":"user","content":[` + imagePartJSON("sha256:old", big) + `]}`,
		`{"role":"user","content":[` + imagePartJSON("sha256:mid", big) + `]}`,
		`{"role":"user","content":[` + imagePartJSON("sha256:new", big) + `]}`,
	}
	got := wireMessages(t, Config{ImageInput: true, Images: src}, msgs...)
	if strings.Count(got, "image omitted to keep the request within its image limit") != 1 || strings.Count(got, `"type":"image_url"`) != 2 {
		t.Errorf("want the oldest image offloaded and two sent:\n%s", got)
	}
	if !strings.HasPrefix(got, `[{"content":[{"text":"[image omitted`) {
		t.Errorf("the offloaded image is not the oldest:\n%s", got)
	}
}

func TestTakesImages(t *testing.T) {
	for model, want := range map[string]bool{
		"deepseek-v4-flash-vision-exp": true, "deepseek-v4-flash": false, "deepseek-chat": false, "standin": false,
		"gpt-4o": true, "gpt-4.1-mini": true, "gpt-5": true, "o3": true, "o3-mini": false, "gpt-4o-audio-preview": false, "gpt-3.5-turbo": false,
	} {
		if got := TakesImages(model); got != want {
			t.Errorf("TakesImages(%q) = %v, want %v", model, got, want)
		}
	}
}

// BenchmarkBuildParamsText maps a 200-message text conversation, with image
// input off and on (the walk that plans image offload is the only cost a
// text conversation pays for images).
func BenchmarkBuildParamsText(b *testing.B) {
	req := llm.Request{Model: "m"}
	for i := 0; i < 100; i++ {
		req.Messages = append(req.Messages,
			json.RawMessage(`{"role":"user","content":[{"type":"text","text":"please run the tests and tell me what failed"}]}`),
			json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"Running."},{"type":"tool-call","id":"c","name":"bash","arguments":"{}"}]}`))
	}
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("imageInput=%v", on), func(b *testing.B) {
			cfg := Config{ImageInput: on, Images: fakeImages{}}
			for b.Loop() {
				if _, err := buildParams(cfg, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
