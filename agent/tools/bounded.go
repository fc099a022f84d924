package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"unicode/utf8"
)

// readChunkBytes is the buffer the bounded readers start with (and, for
// read, keep): input is read and scanned this much at a time, and the
// context is checked before every chunk.
const readChunkBytes = 64 << 10

// errScanBudget reports that a lineReader reached its byte limit: the input
// may go on, but it is not read further.
var errScanBudget = errors.New("scan budget spent")

// notRegularError reports a path that is not a regular file (a FIFO, a
// device, a socket, a directory), which the file tools refuse to read.
type notRegularError struct {
	path string
	mode fs.FileMode
}

// Error says what the path is.
func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.path, fileKind(e.mode))
}

// fileKind names the type of a file mode for the model.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// modeOfStat converts the type bits of a raw stat mode to an fs.FileMode.
func modeOfStat(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// openNonblock opens p read-only without ever blocking in open(2): with
// O_NONBLOCK a FIFO without a writer opens at once, and O_NOCTTY keeps a
// terminal from becoming the process's controlling terminal. extra adds
// flags such as O_NOFOLLOW.
func openNonblock(p string, extra int) (int, error) {
	return openRaw(p, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY|extra)
}

// openRaw is open(2), retried on EINTR, with a *fs.PathError on failure.
func openRaw(p string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(p, flags, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		return fd, nil
	}
}

// regularFile is a regular file opened by openRegular, read with plain
// read(2) calls, which spares the runtime poller's set-up for every file
// grep opens. O_NONBLOCK stays set: it changes nothing for an ordinary
// file, and a special one that honours it (/proc/kmsg, a tracing pipe)
// fails with EAGAIN instead of blocking.
type regularFile struct {
	fd   int
	name string
	// size is the file's size when it was opened.
	size int64
	// version is the file's version when it was opened.
	version FileVersion
}

// Read implements io.Reader.
func (f *regularFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close closes the descriptor.
func (f *regularFile) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// openRegular opens p for reading when, and only when, it is a regular
// file: the type is checked with fstat on the opened descriptor, so a path
// swapped after a stat cannot slip a FIFO or a device in, and the open
// itself cannot block (openNonblock). noFollow refuses a symbolic link as
// the last component. A refused type is a *notRegularError; an open
// failure an *fs.PathError.
func openRegular(p string, noFollow bool) (*regularFile, error) {
	extra := 0
	if noFollow {
		extra = syscall.O_NOFOLLOW
	}
	fd, err := openNonblock(p, extra)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		_ = syscall.Close(fd)
		return nil, &notRegularError{path: p, mode: modeOfStat(st.Mode)}
	}
	return &regularFile{fd: fd, name: p, size: st.Size, version: versionOfStat(&st)}, nil
}

// fileFailure explains, for the model, why p cannot be read as a file, from
// a stat of p (following symbolic links); "" when p is a regular file. A
// directory keeps the wording the tools have always used.
func fileFailure(p, tool string) string {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file not found: " + p
	case err != nil:
		return fmt.Sprintf("cannot access %s: %v", p, unwrapPathError(err))
	case fi.IsDir():
		return p + " is a directory, not a file"
	case !fi.Mode().IsRegular():
		return notRegularText(p, fi.Mode(), tool)
	}
	return ""
}

// notRegularText is the model's message for a file of a refused type.
func notRegularText(p string, m fs.FileMode, tool string) string {
	return fmt.Sprintf("%s is %s, not a regular file; %s reads regular files only", p, fileKind(m), tool)
}

// lineReader reads lines from r through a buffer of bounded size and at
// most limit bytes in all, checking ctx before every read. It never holds
// more than its buffer: a line longer than the buffer is handed out in
// pieces.
type lineReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	// max is the size the buffer may grow to so that a line fits whole.
	max int
	// buf[start:end] is read but not consumed; buf[start:start+seen] is
	// known to hold no '\n'.
	start, end, seen int
	// err is sticky: io.EOF, errScanBudget, ctx's error or a read error.
	err error
	// read counts the bytes read from r; limit bounds it.
	read, limit int64
	// want, when positive, bounds the next read (peek reads no more than
	// it needs).
	want int
}

// newLineReader returns a lineReader with a buffer of size bytes that may
// grow to maxSize bytes (at least size), reading at most limit bytes of r.
func newLineReader(ctx context.Context, r io.Reader, size, maxSize int, limit int64) *lineReader {
	size = max(size, 2*utf8.UTFMax)
	return &lineReader{ctx: ctx, r: r, buf: make([]byte, size), max: max(maxSize, size), limit: limit}
}

// reset makes lr read r from its start, at most limit bytes, keeping the
// buffer, so a search over many files allocates it once.
func (lr *lineReader) reset(r io.Reader, limit int64) {
	*lr = lineReader{ctx: lr.ctx, r: r, buf: lr.buf, max: lr.max, limit: limit}
}

// fill reads more input after what is buffered, moving the unconsumed bytes
// to the front and growing the buffer up to max when it is full. It reports
// whether new bytes arrived; when not, either lr.err says why or the buffer
// is full at its largest.
func (lr *lineReader) fill() bool {
	if lr.err != nil {
		return false
	}
	if err := lr.ctx.Err(); err != nil {
		lr.err = err
		return false
	}
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.seen = 0, min(lr.seen, lr.end)
	}
	if lr.end == len(lr.buf) {
		if len(lr.buf) >= lr.max {
			return false
		}
		nb := make([]byte, min(2*len(lr.buf), lr.max))
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	room := int64(len(lr.buf) - lr.end)
	if lr.want > 0 {
		room = min(room, int64(lr.want))
	}
	if left := lr.limit - lr.read; left < room {
		room = left
	}
	if room <= 0 {
		lr.err = errScanBudget
		return false
	}
	for range 100 {
		n, err := lr.r.Read(lr.buf[lr.end : lr.end+int(room)])
		lr.end += n
		lr.read += int64(n)
		if err != nil {
			lr.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	lr.err = io.ErrNoProgress
	return false
}

// failed returns lr's error unless it only means the input ended (io.EOF)
// or the limit was reached.
func (lr *lineReader) failed() error {
	if lr.err == io.EOF || lr.err == errScanBudget {
		return nil
	}
	return lr.err
}

// consumed is the input offset of the first unconsumed byte.
func (lr *lineReader) consumed() int64 { return lr.read - int64(lr.end-lr.start) }

// extend lets lr read n more bytes past what it has consumed.
func (lr *lineReader) extend(n int64) {
	lr.limit = lr.consumed() + n
	if lr.err == errScanBudget {
		lr.err = nil
	}
}

// peek returns up to the first n unconsumed bytes (fewer at the end of the
// input or at the limit) without consuming them; n must not exceed the
// buffer.
func (lr *lineReader) peek(n int) ([]byte, error) {
	for lr.end-lr.start < n {
		lr.want = n - (lr.end - lr.start)
		ok := lr.fill()
		lr.want = 0
		if !ok {
			break
		}
	}
	if err := lr.failed(); err != nil {
		return nil, err
	}
	return lr.buf[lr.start:min(lr.end, lr.start+n)], nil
}

// segment returns the next piece of the current line, without its "\n".
// A line that fits in the buffer comes whole with eol set; a longer one
// comes in pieces, the last with eol set. A piece that is not a line's last
// never ends inside a UTF-8 sequence or with a "\r", so each can be decoded
// on its own and a line's final "\r" is always in its last piece. A final
// line without "\n" counts as a line. At the limit the bytes read come as a
// piece without eol, then errScanBudget. The error is io.EOF when no line is
// left, or ctx's or a read error.
func (lr *lineReader) segment() (seg []byte, eol bool, err error) {
	for {
		data := lr.buf[lr.start:lr.end]
		if i := bytes.IndexByte(data[lr.seen:], '\n'); i >= 0 {
			i += lr.seen
			lr.start += i + 1
			lr.seen = 0
			return data[:i], true, nil
		}
		lr.seen = len(data)
		if lr.fill() {
			continue
		}
		data = lr.buf[lr.start:lr.end] // fill may have moved it
		switch {
		case lr.err == nil: // the buffer is full at its largest
			k := holdBack(data)
			lr.start += len(data) - k
			lr.seen = k
			return data[:len(data)-k], false, nil
		case lr.err == io.EOF || lr.err == errScanBudget:
			if len(data) == 0 {
				return nil, false, lr.err
			}
			lr.start, lr.seen = lr.end, 0
			return data, lr.err == io.EOF, nil
		}
		return nil, false, lr.err
	}
}

// block returns the complete lines buffered, through the last '\n',
// reading more first when no '\n' is buffered. It returns nil when the
// next line is longer than the largest buffer or the input stops before a
// '\n' (segment then hands the line out). The caller consumes what it
// used with advance.
func (lr *lineReader) block() []byte {
	for {
		data := lr.buf[lr.start:lr.end]
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			return data[:i+1]
		}
		lr.seen = len(data)
		if !lr.fill() {
			return nil
		}
	}
}

// advance consumes n buffered bytes.
func (lr *lineReader) advance(n int) {
	lr.start += n
	lr.seen = 0
}

// holdBack returns how many bytes at the end of p must wait for more input:
// an incomplete UTF-8 sequence, or a "\r" that may be a line's last byte.
func holdBack(p []byte) int {
	n := len(p)
	if n > 0 && p[n-1] == '\r' {
		return 1
	}
	for i := n - 1; i >= 0 && i >= n-(utf8.UTFMax-1); i-- {
		if p[i]&0xC0 != 0x80 { // the start of the last sequence
			if !utf8.FullRune(p[i:]) {
				return n - i
			}
			return 0
		}
	}
	return 0
}

// skipLine consumes the rest of the current line. It returns io.EOF when
// no line is left, errScanBudget when the limit comes first, or ctx's or a
// read error.
func (lr *lineReader) skipLine() error {
	some := false
	for {
		data := lr.buf[lr.start:lr.end]
		if i := bytes.IndexByte(data[lr.seen:], '\n'); i >= 0 {
			lr.start += lr.seen + i + 1
			lr.seen = 0
			return nil
		}
		some = some || len(data) > 0
		lr.start, lr.seen = lr.end, 0
		if !lr.fill() {
			if lr.err == io.EOF && some {
				return nil
			}
			return lr.err
		}
	}
}

// countLines counts the lines left, a last line without "\n" included.
// complete is false when the limit came first; n is then a lower bound.
func (lr *lineReader) countLines() (n int64, complete bool, err error) {
	partial := false // bytes follow the last '\n' seen
	for {
		if data := lr.buf[lr.start:lr.end]; len(data) > 0 {
			n += int64(bytes.Count(data, []byte{'\n'}))
			partial = data[len(data)-1] != '\n'
		}
		lr.start, lr.seen = lr.end, 0
		if !lr.fill() {
			if partial {
				n++
			}
			if err := lr.failed(); err != nil {
				return n, false, err
			}
			return n, lr.err == io.EOF, nil
		}
	}
}

// trimCR drops one final "\r", as a "\r\n" line end leaves it.
func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// validUTF8 returns b with each run of invalid UTF-8 replaced by U+FFFD,
// as strings.ToValidUTF8 does; b itself when it is valid.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// lineCut follows a line given in pieces (as lineReader.segment hands them
// out) and keeps what cutLine would show of it: its first MaxLineRunes
// runes and its length in runes, with each run of invalid UTF-8 counted as
// one U+FFFD. It holds at most MaxLineRunes runes, whatever the line's
// length.
type lineCut struct {
	kept      []byte
	keptRunes int
	runes     int64
	// invalid: the last byte seen belongs to an invalid sequence, so more
	// invalid bytes join its replacement.
	invalid bool
}

// add takes the next piece of the line. A piece must not end inside a
// UTF-8 sequence unless the line ends there.
func (c *lineCut) add(p []byte) {
	for len(p) > 0 && c.keptRunes < MaxLineRunes {
		r, w := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && w == 1:
			if !c.invalid {
				c.invalid = true
				c.kept = append(c.kept, "\uFFFD"...)
				c.keptRunes++
				c.runes++
			}
		default:
			c.invalid = false
			c.kept = append(c.kept, p[:w]...)
			c.keptRunes++
			c.runes++
		}
		p = p[w:]
	}
	if len(p) == 0 {
		return
	}
	if utf8.Valid(p) {
		c.runes += int64(utf8.RuneCount(p))
		c.invalid = false
		return
	}
	for len(p) > 0 {
		r, w := utf8.DecodeRune(p)
		if r == utf8.RuneError && w == 1 {
			if !c.invalid {
				c.invalid = true
				c.runes++
			}
		} else {
			c.invalid = false
			c.runes++
		}
		p = p[w:]
	}
}

// text is the line as cutLine shows it. When partial (the line's end was
// never read), the cut says the length is a lower bound.
func (c *lineCut) text(partial bool) string {
	switch {
	case partial:
		return fmt.Sprintf("%s… [line cut: at least %d characters]", c.kept, c.runes)
	case c.runes <= MaxLineRunes:
		return string(c.kept)
	}
	return fmt.Sprintf("%s… [line cut: %d characters]", c.kept, c.runes)
}
