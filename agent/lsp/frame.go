package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Bounds of the base protocol's header part, which the server writes.
const (
	// maxHeaderLine is the longest header line read; bufio's buffer is
	// sized to it, so a longer line is refused without being buffered.
	maxHeaderLine = 1 << 10
	// maxHeaders is how many header lines one message may carry.
	maxHeaders = 8
)

// ErrFrame reports a message from the server that breaks the base
// protocol's framing or reel's bounds on it: the connection is unusable.
var ErrFrame = errors.New("lsp: bad message framing")

// readMessage reads one base-protocol message (header lines, an empty
// line, then Content-Length bytes of body) from r and returns its body.
// Every header line is bounded (maxHeaderLine, maxHeaders), the body by
// limit: a longer Content-Length fails before anything is allocated.
// io.EOF is returned only at a clean end between messages.
func readMessage(r *bufio.Reader, limit int) ([]byte, error) {
	length := -1
	for n := 0; ; n++ {
		if n > maxHeaders {
			return nil, fmt.Errorf("%w: more than %d header lines", ErrFrame, maxHeaders)
		}
		line, err := r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("%w: a header line longer than %d bytes", ErrFrame, r.Size())
		case errors.Is(err, io.EOF) && n == 0 && len(line) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%w: the stream ended inside a header", ErrFrame)
		case err != nil:
			return nil, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return nil, fmt.Errorf("%w: header line %q has no colon", ErrFrame, clipBytes(line))
		}
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			continue // Content-Type, or a header of a later protocol version
		}
		if length >= 0 {
			return nil, fmt.Errorf("%w: Content-Length given twice", ErrFrame)
		}
		v := string(bytes.TrimSpace(value))
		n, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			return nil, fmt.Errorf("%w: Content-Length %q is not a byte count", ErrFrame, clipBytes(value))
		}
		if n > uint64(limit) {
			return nil, fmt.Errorf("%w: a message of %d bytes, more than the %d-byte limit", ErrFrame, n, limit)
		}
		length = int(n)
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: a message without Content-Length", ErrFrame)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%w: the stream ended inside a %d-byte body: %v", ErrFrame, length, err)
	}
	return body, nil
}

// clipBytes is b cut to 40 bytes, for an error message.
func clipBytes(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// stream is a server's stdio as a jsonrpc2.ObjectStream: writes framed
// with Content-Length, reads through readMessage within limit. The first
// read failure is kept (failure), so a call the connection's end failed
// can say why.
type stream struct {
	r     *bufio.Reader
	in    io.WriteCloser // the server's stdin
	out   io.Closer      // the server's stdout
	limit int

	wmu sync.Mutex

	fmu  sync.Mutex
	fail error
}

func newStream(stdout io.ReadCloser, stdin io.WriteCloser, limit int) *stream {
	return &stream{r: bufio.NewReaderSize(stdout, maxHeaderLine), in: stdin, out: stdout, limit: limit}
}

// ReadObject reads the next message into v.
func (s *stream) ReadObject(v any) error {
	body, err := readMessage(s.r, s.limit)
	if err == nil {
		if err = json.Unmarshal(body, v); err != nil {
			err = fmt.Errorf("%w: a message that is not JSON-RPC: %v", ErrFrame, err)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		s.fmu.Lock()
		if s.fail == nil {
			s.fail = err
		}
		s.fmu.Unlock()
	}
	return err
}

// failure is the first read failure other than a clean end, or nil.
func (s *stream) failure() error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	return s.fail
}

// WriteObject writes obj as one message.
func (s *stream) WriteObject(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	msg := make([]byte, 0, len(b)+32)
	msg = append(msg, "Content-Length: "...)
	msg = strconv.AppendInt(msg, int64(len(b)), 10)
	msg = append(msg, "\r\n\r\n"...)
	msg = append(msg, b...)
	_, err = s.in.Write(msg)
	return err
}

// Close closes both pipes.
func (s *stream) Close() error {
	return errors.Join(s.in.Close(), s.out.Close())
}
