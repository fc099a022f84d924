package jsonl

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Decode reads a log it holds whole through a buffer no larger than the
// log, and a stream or a long log through maxReadBuf.
func TestReadBufSize(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		want int
	}{
		{"empty bytes", bytes.NewReader(nil), 1},
		{"small bytes", bytes.NewReader(make([]byte, 100)), 101},
		{"small string", strings.NewReader("0123456789"), 11},
		{"just under the cap", bytes.NewReader(make([]byte, maxReadBuf-1)), maxReadBuf},
		{"at the cap", bytes.NewReader(make([]byte, maxReadBuf)), maxReadBuf},
		{"long", bytes.NewReader(make([]byte, 4*maxReadBuf)), maxReadBuf},
		{"stream", io.MultiReader(strings.NewReader("x")), maxReadBuf},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := readBufSize(tc.r); got != tc.want {
				t.Fatalf("readBufSize = %d, want %d", got, tc.want)
			}
		})
	}
}

// A log decoded through the length-sized buffer reads exactly as it does
// through the full buffer of a stream.
func TestDecodeSizedBufferAgrees(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/text-turn/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) >= maxReadBuf {
		t.Fatalf("fixture is %d bytes: the test needs a log under %d", len(data), maxReadBuf)
	}
	sized, err := Decode(bytes.NewReader(data), "sized")
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := Decode(io.MultiReader(bytes.NewReader(data)), "streamed")
	if err != nil {
		t.Fatal(err)
	}
	if len(sized.Events) == 0 || !reflect.DeepEqual(sized.Events, streamed.Events) || sized.GoodBytes != streamed.GoodBytes {
		t.Fatalf("sized buffer: %d events, %d good bytes; full buffer: %d events, %d good bytes",
			len(sized.Events), sized.GoodBytes, len(streamed.Events), streamed.GoodBytes)
	}
}
