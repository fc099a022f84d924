package acpcmd_test

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// attackKey is the fake key; the provider echoes it back in its errors.
const attackKey = "sk-reel-attack-Fake0123456789abcdef"

// escapeEach escapes every byte of s with format (e.g. `\u%04x`, "%%%02X");
// every keep-th byte (0: none) stays raw.
func escapeEach(s, format string, keep int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if keep > 0 && i%keep == 0 {
			b.WriteByte(s[i])
			continue
		}
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// keyLeaks reports whether text holds key in a form this test decodes on
// its own: raw once JSON (\uXXXX, \/) and percent escapes are undone (up to
// three levels), or inside the base64 decoding (either alphabet) of a run
// of text starting at any offset.
func keyLeaks(text, key string) bool {
	plain := text
	for range 3 {
		plain = undoEscapes(plain)
	}
	if strings.Contains(plain, key) {
		return true
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	const url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for _, a := range []struct {
		alphabet string
		enc      *base64.Encoding
	}{{std, base64.RawStdEncoding}, {url, base64.RawURLEncoding}} {
		for i := range len(plain) {
			j := i
			for j < len(plain) && strings.IndexByte(a.alphabet, plain[j]) >= 0 {
				j++
			}
			if j-i < len(key) {
				continue
			}
			run := plain[i:j]
			if len(run)%4 == 1 {
				run = run[:len(run)-1]
			}
			if b, err := a.enc.DecodeString(run); err == nil && strings.Contains(string(b), key) {
				return true
			}
		}
	}
	return false
}

// undoEscapes undoes one level of \uXXXX (after any number of
// backslashes), \/ and %XX.
func undoEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			var r rune
			if j+5 <= len(s) && s[j] == 'u' {
				if _, err := fmt.Sscanf(s[j+1:j+5], "%04x", &r); err == nil {
					b.WriteRune(r)
					i = j + 5
					continue
				}
			}
			if j < len(s) && s[j] == '/' {
				b.WriteByte('/')
				i = j + 1
				continue
			}
		}
		var c byte
		if s[i] == '%' && i+3 <= len(s) {
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// TestAttackRedactEncodedKey: a provider (a real HTTP server on 127.0.0.1)
// answers every chat-completions request with HTTP 401 and a body that
// echoes the key in many encodings — JSON-escaped (lower, upper, mixed
// with raw characters, escaped twice), percent-escaped (either case, mixed,
// twice), base64 (std and URL alphabets, padded or not, the key at each
// alignment inside a longer blob) — in the error message and in the raw
// body. reel acp, with the key in DEEPSEEK_API_KEY, runs one prompt per
// body. The key, in any encoding, appears nowhere in stdout, stderr or a
// file under the run's directories, while the redacted errors do reach
// the client.
func TestAttackRedactEncodedKey(t *testing.T) {
	t.Parallel()
	k := attackKey
	b64 := func(enc *base64.Encoding, before, after string) string {
		return enc.EncodeToString([]byte(before + k + after))
	}
	encodings := []string{
		escapeEach(k, `\\u%04x`, 0), // in a JSON string: decodes to \u0073…
		escapeEach(k, `\\u%04X`, 3),
		escapeEach(k, "%%%02X", 0),
		escapeEach(k, "%%%02x", 2),
		escapeEach(k, "%%25%02x", 0),
		b64(base64.StdEncoding, "", ""),
		b64(base64.StdEncoding, "user:", ""),
		b64(base64.RawStdEncoding, "x", "y"),
		b64(base64.URLEncoding, "ab", "\xff\xfe"),
		b64(base64.RawURLEncoding, `{"key":"`, `"}`),
	}
	bodies := []string{
		// The message, which the SDK decodes: the raw key and every encoding.
		`{"error":{"message":"Incorrect API key provided: ` + k + `; also ` + strings.Join(encodings, " ; ") + `","type":"invalid_request_error"}}`,
		// No message: reel reports the raw body, JSON escapes and all.
		`{"error":{"message":"","received":"` + escapeEach(k, `\u%04x`, 0) + `","echo":"` + escapeEach(k, `\u%04X`, 4) +
			`","url":"https://p.example/?key=` + escapeEach(k, "%%%02X", 0) + `","basic":"` + b64(base64.StdEncoding, "user:", "") +
			`","token":"` + b64(base64.RawURLEncoding, "{", "}") + `","double":"` + escapeEach(k, `\\u%04x`, 5) + `"}}`,
		// A body that is not JSON at all.
		"unauthorized: key " + escapeEach(k, "%%%02x", 0) + " / " + b64(base64.StdEncoding, "zz", "") + " / " + escapeEach(k, `\u%04x`, 2),
	}
	for _, b := range bodies {
		if !keyLeaks(b, k) {
			t.Fatalf("the test's decoder does not find the key in the body %s", b)
		}
	}

	var mu sync.Mutex
	var served int
	var auth []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := served % len(bodies)
		served++
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if i < 2 {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/plain")
		}
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(bodies[i]))
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	p := startProc(t, dir, append(baseEnv(t), "DEEPSEEK_API_KEY="+k), "acp", "--state-dir", state, "--session-id", "RK",
		"--log-level", "debug", "--provider", "deepseek", "--base-url", "http://"+ln.Addr().String()+"/v1", "--model", "standin")
	p.initialize()
	sid := p.newSession(ws)
	for i := range bodies {
		resp, _ := p.await(p.request("session/prompt", promptParams(sid, fmt.Sprintf("prompt %d", i+1))))
		if resp.Error == nil && !strings.Contains(resp.raw, "stopReason") {
			t.Fatalf("prompt %d: answer %s", i+1, resp.raw)
		}
	}
	if code := p.finish(); code != 0 {
		t.Errorf("reel acp exited %d", code)
	}
	stdout := strings.Join(p.stdoutLines(), "\n")
	stderr := p.stderr.String()

	mu.Lock()
	if served != len(bodies) {
		t.Errorf("the provider served %d requests, want %d (one per prompt)", served, len(bodies))
	}
	for _, a := range auth {
		if a != "Bearer "+k {
			t.Errorf("the provider saw Authorization %q, want the fake key", a)
		}
	}
	mu.Unlock()

	if !strings.Contains(stdout+stderr, "[redacted]") {
		t.Errorf("the provider's errors never reached the client or stderr redacted:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if keyLeaks(stdout, k) {
		t.Errorf("stdout holds the key:\n%s", stdout)
	}
	if keyLeaks(stderr, k) {
		t.Errorf("stderr holds the key:\n%s", stderr)
	}
	seen, leaked := filesHolding(t, dir, func(b []byte) bool { return keyLeaks(string(b), k) })
	for _, path := range leaked {
		b, _ := os.ReadFile(path)
		t.Errorf("%s holds the key:\n%s", path, b)
	}
	if seen == 0 {
		t.Error("no files were written under the run's directory")
	}
	log, err := os.ReadFile(filepath.Join(state, "RK.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "[redacted]") {
		t.Errorf("the session log does not record the redacted provider errors:\n%s", log)
	}
}
