package sandbox

import (
	"slices"
	"testing"
	"time"
)

// TestWarmCommandMalformed: a body that is not what encodeCommand makes is
// refused, never guessed at.
func TestWarmCommandMalformed(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"empty", ""},
		{"no final NUL", "/w\x001\x00true"},
		{"no argv count", "/w\x00"},
		{"count not a number", "/w\x00x\x00true\x00"},
		{"count zero", "/w\x000\x00"},
		{"count negative", "/w\x00-1\x00true\x00"},
		{"count past the fields", "/w\x003\x00true\x00"},
		{"empty program", "/w\x001\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, ok := decodeCommand([]byte(tc.body)); ok {
				t.Errorf("decodeCommand(%q) = %+v, want a refusal", tc.body, c)
			}
		})
	}
}

// FuzzWarmCommand: decodeCommand never panics, and what encodeCommand
// makes decodes to the same directory, argv and environment.
func FuzzWarmCommand(f *testing.F) {
	f.Add([]byte("/w\x002\x00bash\x00-c\x00PATH=/bin\x00"), "/w", "bash", "-c", "A=1")
	f.Add([]byte("\x00\x00"), "", "x", "", "")
	f.Fuzz(func(t *testing.T, body []byte, dir, prog, arg, env string) {
		decodeCommand(body) // must not panic
		argv := []string{prog, arg}
		p, ok := encodeCommand(dir, argv, []string{env})
		if !ok {
			return // a NUL in a string: refused before it is sent
		}
		c, ok := decodeCommand(p[8:])
		if prog == "" {
			if ok {
				t.Fatalf("an empty program decoded: %+v", c)
			}
			return
		}
		if !ok || c.dir != dir || !slices.Equal(c.argv, argv) || !slices.Equal(c.env, []string{env}) {
			t.Fatalf("encode/decode of (%q, %q, %q) gave %+v, %v", dir, argv, env, c, ok)
		}
	})
}

// TestTakeWarmSkipsADueStart: a call that comes while the key's next
// warm supervisor still waits for the call before it to end (a background
// job, calls in parallel) starts cold at once, rather than waiting for
// that start (which made every call of a batch of background jobs wait
// ~100 ms: job-slot-limit 95 → 600 ms); one whose process is starting is
// waited for.
func TestTakeWarmSkipsADueStart(t *testing.T) {
	s := New("/nonexistent/reel")
	defer s.Close()
	key := warmKey{mode: ReadOnly, root: t.TempDir()}
	due := &warmStart{done: make(chan struct{})}
	s.mu.Lock()
	s.warming[key] = due
	s.mu.Unlock()
	got := make(chan *warm, 1)
	go func() { got <- s.takeWarm(key) }()
	select {
	case w := <-got:
		if w != nil {
			t.Fatalf("takeWarm = %v, want none", w)
		}
	case <-time.After(warmWait / 2):
		t.Fatal("takeWarm waited for a warm supervisor whose start is only due")
	}
	s.mu.Lock()
	due.spawned = true
	s.mu.Unlock()
	go func() { got <- s.takeWarm(key) }()
	ready := &warm{}
	s.mu.Lock()
	s.warms[key] = ready
	s.mu.Unlock()
	close(due.done)
	if w := <-got; w != ready {
		t.Fatalf("takeWarm = %v after the start it waited for, want the started one", w)
	}
}
