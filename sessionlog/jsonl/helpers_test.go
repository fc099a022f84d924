package jsonl_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// frames compresses each part as one independent zstd frame.
func frames(t testing.TB, parts ...[]byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out []byte
	for _, p := range parts {
		out = enc.EncodeAll(p, out)
	}
	return out
}

// splitLines splits content into its lines, each keeping its '\n'.
func splitLines(content []byte) [][]byte {
	var out [][]byte
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			i = len(content) - 1
		}
		out = append(out, content[:i+1])
		content = content[i+1:]
	}
	return out
}
