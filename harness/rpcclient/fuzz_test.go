package rpcclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// FuzzAgentOutput feeds arbitrary bytes as the agent's stdout: the client
// must not panic, must end with an error wrapping ErrClosed, and its tee must
// be a prefix of what was fed (exactly what it read).
func FuzzAgentOutput(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan"}}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":9,"method":"session/request_permission","params":{"sessionId":"s","options":[{"optionId":"a","kind":"allow_once"}]}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"fs/read_text_file","params":null}{"jsonrpc":"2.0","id":1,"result":null}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","method":"a"}]` + "\n" + `garbage`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tee bytes.Buffer
		q := NewAnswerQueue([]string{"allow_once"})
		c := New(context.Background(), bytes.NewReader(data), io.Discard, Options{Tee: &tee, Permission: q.Answer})
		<-c.Done()
		if err := c.Err(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Err = %v", err)
		}
		if !bytes.HasPrefix(data, tee.Bytes()) {
			t.Fatalf("tee %q is not a prefix of %q", tee.Bytes(), data)
		}
		for i, n := range c.Notifications() {
			if n.Index != i {
				t.Fatalf("notification %d has index %d", i, n.Index)
			}
		}
		c.Close()
	})
}
