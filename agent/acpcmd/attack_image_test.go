package acpcmd_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/reel-agent/reel/agent/llm/standin"
)

// redPixel is a 1x1 red PNG (the corpus's red.png, 69 bytes).
const redPixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

// pngHeader is a PNG signature and an IHDR chunk (valid CRC) declaring
// w x h pixels, and nothing after it: a tiny file claiming a huge image.
func pngHeader(w, h uint32) []byte {
	var ihdr bytes.Buffer
	ihdr.WriteString("IHDR")
	_ = binary.Write(&ihdr, binary.BigEndian, w)
	_ = binary.Write(&ihdr, binary.BigEndian, h)
	ihdr.Write([]byte{8, 6, 0, 0, 0})
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	_ = binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr.Bytes())
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr.Bytes()))
	return b.Bytes()
}

// TestAttackReadImage drives the real `reel acp` binary with a stand-in
// model that calls read_image, in one step, on hostile files: a 60-byte
// PNG declaring 100000x100000 pixels, a truncated PNG, a FIFO no one
// writes, a link to /dev/zero, a link to reel's own /proc/self/environ
// (which holds the key), a JPEG named .png, and a path outside the
// workspace through "..". None may hang reel (a watchdog kills it), take
// its memory (its address space is limited) or show the model anything of
// the files: each call fails with a message naming the path, the key
// appears nowhere, and the session answers a second turn.
func TestAttackReadImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("huge.png", pngHeader(100000, 100000))
	var whole bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	if err := png.Encode(&whole, img); err != nil {
		t.Fatal(err)
	}
	write("trunc.png", whole.Bytes()[:whole.Len()/2])
	write("photo.png", []byte("\xff\xd8\xff\xe0 not really a png"))
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zero.png": "/dev/zero", "environ.png": "/proc/self/environ"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "sk-image-attack-secret-4711"

	calls := []struct{ id, path, want string }{
		{"c_huge", "huge.png", "at least one image side exceeds the 2000px limit"},
		{"c_trunc", "trunc.png", "is not a whole image/png image"},
		{"c_jpeg", "photo.png", "the .png extension declares image/png, but the bytes use a different image format"},
		{"c_fifo", "fifo.png", "not a regular file"},
		{"c_zero", "zero.png", "not a regular file"},
		{"c_environ", "environ.png", "not a regular file"},
		{"c_climb", "../../../../../../../proc/self/environ.png", "no such file"},
	}
	var tcs []standin.ToolCall
	for _, c := range calls {
		args, _ := json.Marshal(map[string]string{"file_path": c.path})
		tcs = append(tcs, standin.ToolCall{ID: c.id, Name: "read_image", Arguments: string(args)})
	}
	first := &standin.Script{Responses: []standin.Response{
		{ToolCalls: tcs},
		{Text: "survived", Expect: &standin.Expect{LastMessageContains: "no such file"}},
	}}
	second := &standin.Script{Responses: []standin.Response{
		{Text: "second turn answered", Expect: &standin.Expect{LastUserContains: "second turn"}},
	}}
	for _, s := range []*standin.Script{first, second} {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	url := serveReadAttackModel(t, first, second, "This is the second turn.")
	state := filepath.Join(dir, "state", "sessions")
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY="+secret), "acp", "--state-dir", state,
		"--session-id", "S1", "--log-level", "debug", "--mode", "workspace-write",
		"--provider", "deepseek", "--base-url", url, "--model", "standin", "--image-input", "on")
	underAttack(t, p)

	p.initialize()
	sid := p.newSession(ws)
	stop, frames := p.prompt(sid, "Attack.")
	if stop != "end_turn" {
		t.Errorf("stopReason %q, want end_turn", stop)
	}
	for _, c := range calls {
		status, text := readAttackToolResult(frames, c.id)
		if status != "failed" || !strings.Contains(text, c.want) || !strings.HasPrefix(text, "Error: cannot read ") {
			t.Errorf("read_image %s ended %q with %q, want failed with %q", c.path, status, text, c.want)
		}
	}
	if got := readAttackMessage(frames); got != "survived" {
		t.Errorf("the model's answer after the results is %q, want survived", got)
	}
	stop, frames = p.prompt(sid, "This is the second turn.")
	if stop != "end_turn" || readAttackMessage(frames) != "second turn answered" {
		t.Errorf("second turn: stopReason %q, answer %q", stop, readAttackMessage(frames))
	}
	if code := p.finish(); code != 0 {
		t.Errorf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
	if s := p.stderr.String(); strings.Contains(s, "fatal error") || strings.Contains(s, "panic:") {
		t.Errorf("reel's stderr reports a crash:\n%s", s)
	}
	lines := p.stdoutLines()
	checkFramesOnly(t, lines)
	logBytes, err := os.ReadFile(filepath.Join(state, "S1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"stdout": []byte(strings.Join(lines, "\n")), "the session log": logBytes} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the model key appears in %s", what)
		}
	}
	if objs, _ := filepath.Glob(filepath.Join(dir, "state", "attachments", "v1", "objects", "*", "*")); len(objs) != 0 {
		t.Errorf("refused images were stored: %v", objs)
	}
}

// capturingModel serves the stand-in script and keeps every request body.
type capturingModel struct {
	mu     sync.Mutex
	bodies []string
}

func (m *capturingModel) serve(t *testing.T, script *standin.Script) string {
	t.Helper()
	if err := script.Validate(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := standin.New(script, nil).Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(body))
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String() + "/v1"
}

// with returns the request bodies holding s (a title request, say, holds
// no image).
func (m *capturingModel) with(s string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, b := range m.bodies {
		if strings.Contains(b, s) {
			out = append(out, b)
		}
	}
	return out
}

// TestImagesReachTheModel drives the real binary with a vision model name
// (image input decided by reel's table) against a capturing stand-in: the
// initialize result advertises image prompts; a prompt's image reaches
// the model as an image_url data URL of its exact bytes, stored once in the
// attachment store; resource links to a PNG, a text file, a FIFO and
// /dev/zero are inlined or noted (nothing hangs); after a restart,
// session/load and a further prompt send the stored image again, read back
// from the store (with --debug-invariant rebuilding the request from the
// log). Both stores keep the images in the same place.
func TestImagesReachTheModel(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"jsonl", "sqlite"} {
		t.Run(store, func(t *testing.T) { imagesReachTheModel(t, store) })
	}
}

func imagesReachTheModel(t *testing.T, store string) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	red, _ := base64.StdEncoding.DecodeString(redPixel)
	var blue bytes.Buffer
	bimg := image.NewRGBA(image.Rect(0, 0, 2, 3))
	for x := 0; x < 2; x++ {
		for y := 0; y < 3; y++ {
			bimg.Set(x, y, color.RGBA{B: 255, A: 255})
		}
	}
	_ = png.Encode(&blue, bimg)
	if err := os.WriteFile(filepath.Join(ws, "blue.png"), blue.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the notes say 42"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := &capturingModel{}
	url := model.serve(t, &standin.Script{Responses: []standin.Response{{Text: "seen"}, {Text: "title"}, {Text: "seen again"}, {Text: "title"}}})
	state := filepath.Join(dir, "state", "sessions")
	args := []string{"acp", "--state-dir", state, "--store", store, "--session-id", "S1", "--log-level", "debug", "--debug-invariant",
		"--provider", "deepseek", "--base-url", url, "--model", "deepseek-v4-flash-vision-exp"}
	env := append(baseEnv(t), "DEEPSEEK_API_KEY=standin")

	p := startProc(t, dir, env, args...)
	res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if !strings.Contains(string(res), `"image":true`) {
		t.Errorf("initialize does not advertise image prompts for a vision model: %s", res)
	}
	sid := p.newSession(ws)
	link := func(name string) map[string]any {
		return map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(ws, name), "name": name}
	}
	prompt := []any{
		map[string]any{"type": "text", "text": "Look: "},
		map[string]any{"type": "image", "data": redPixel, "mimeType": "image/png"},
		link("blue.png"), link("notes.txt"), link("pipe.txt"),
		map[string]any{"type": "resource_link", "uri": "file:///dev/zero", "name": "zero"},
	}
	res, frames := p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt})
	if !strings.Contains(string(res), "end_turn") {
		t.Fatalf("prompt result %s", res)
	}
	redURL := `"image_url":{"url":"data:image/png;base64,` + redPixel + `"}`
	sent := model.with(redURL)
	if len(sent) != 1 {
		t.Fatalf("%d model requests carry the prompt's image as a data URL, want 1", len(sent))
	}
	body := sent[0]
	for _, want := range []string{
		`"image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(blue.Bytes()) + `"}`,
		`\u003cfile uri=\"file://` + filepath.Join(ws, "notes.txt") + `\"\u003e\nthe notes say 42`,
		"pipe.txt, which was not sent to you: it is not a regular file",
		"file:///dev/zero, which was not sent to you: it is not a regular file",
	} {
		if !strings.Contains(body, want) && !strings.Contains(body, strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(want)) {
			t.Errorf("the model request lacks %s:\n%s", want, body)
		}
	}
	thoughts := 0
	for _, f := range frames {
		if _, kind, text := f.update(); kind == "agent_thought_chunk" && strings.Contains(text, "not a regular file") {
			thoughts++
		}
	}
	if thoughts != 2 {
		t.Errorf("the user was shown %d thoughts about unsent links, want 2", thoughts)
	}
	sum := strings.TrimPrefix(attachmentID(red), "sha256:")
	obj := filepath.Join(dir, "state", "attachments", "v1", "objects", sum[:2], sum)
	if b, err := os.ReadFile(obj); err != nil || !bytes.Equal(b, red) {
		t.Errorf("the prompt's image is not stored as %s: %v", obj, err)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}

	// A fresh process loads the session and sends the stored image again.
	p = startProc(t, dir, env, args...)
	p.initialize()
	_, history := p.call("session/load", map[string]any{"sessionId": "S1", "cwd": ws, "mcpServers": []any{}})
	shown := false
	for _, b := range userBlocks(t, history) {
		if b == `{"data":"`+redPixel+`","mimeType":"image/png","type":"image"}` {
			shown = true
		}
	}
	if !shown {
		t.Errorf("session/load does not show the user's image, as sent, in the history")
	}
	if stop, _ := p.prompt("S1", "And now?"); stop != "end_turn" {
		t.Fatalf("prompt after load: %s; stderr:\n%s", stop, p.stderr.String())
	}
	if n := len(model.with(redURL)); n != 2 {
		t.Errorf("after session/load %d requests carried the stored image, want 2 (the first prompt's and this one's)", n)
	}
	if code := p.finish(); code != 0 {
		t.Errorf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
}

// attachmentID is "sha256:" and the hex digest of b (independent of reel's
// own function, so the test checks the layout, not itself).
func attachmentID(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}
