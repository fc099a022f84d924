package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// oldNumberLines is read's rendering before it streamed: the whole file in
// memory, split into lines. The streaming window must give the same text
// whenever no bound is reached.
func oldNumberLines(p, content string, offset, limit int) string {
	var lines []string
	if content != "" {
		text := strings.ToValidUTF8(content, "\uFFFD")
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("(%s is empty)", p)
	}
	if offset < 1 {
		offset = 1
	}
	if limit < 1 {
		limit = DefaultReadLimit
	}
	if offset > len(lines) {
		return fmt.Sprintf("(offset %d is past the end of %s, which has %d lines)", offset, p, len(lines))
	}
	end := min(len(lines), offset-1+limit)
	var b strings.Builder
	for i := offset; i <= end; i++ {
		if i > offset {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d\t%s", i, cutLine(lines[i-1]))
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "\n\n(Showing lines %d-%d of %d. Use offset=%d to read on.)", offset, end, len(lines), end+1)
	}
	return b.String()
}

// randomText builds text from pieces that stress line splitting and UTF-8
// repair: line ends, lone and doubled "\r", multi-byte runes, invalid and
// truncated sequences, and runs long enough to be cut.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "xyz", "\n", "\r", "\r\n", "\n\n", "é", "€", "😀", "\xff", "\xe2\x82", "\xf0\x9f", "\x80\x80", "\uFFFD", " ", "\t"}
	var b strings.Builder
	n := r.IntN(400)
	for range n {
		switch r.IntN(40) {
		case 0:
			b.WriteString(strings.Repeat(pieces[r.IntN(len(pieces))], MaxLineRunes-3+r.IntN(8)))
		case 1:
			b.WriteString(strings.Repeat("\xff", r.IntN(50)))
		default:
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}

// TestReadWindowMatchesOldRendering compares the streaming window with the
// whole-file rendering on random texts, offsets, limits and buffer sizes
// (small buffers make every line come in pieces).
//
// The cases are drawn in order from one seeded source, then checked in
// parallel shards (the check is the slow part, under -race above all).
// 1000 cases cover every statement of the window the 3000 of REEL_SOAK=1
// cover (they are the first 1000 of those); under -race -cover each case
// costs about 4 times what it does under -race alone (a coverage counter
// is an atomic add there), 38 CPU-s for the 3000.
func TestReadWindowMatchesOldRendering(t *testing.T) {
	type readCase struct {
		i, offset, limit, buf int
		text                  string
		oneByte               bool
	}
	n := 1000
	if os.Getenv("REEL_SOAK") == "1" {
		n = 3000
	}
	r := rand.New(rand.NewPCG(1, 2))
	var cases []readCase
	for i := range n {
		text := randomText(r)
		if strings.IndexByte(text[:min(len(text), binarySniffBytes)], 0) >= 0 {
			continue
		}
		c := readCase{i: i, text: text, offset: r.IntN(12), limit: r.IntN(12)}
		if r.IntN(4) == 0 {
			c.limit = 0
		}
		c.buf = []int{8, 9, 13, 64, 4096, readChunkBytes}[r.IntN(6)]
		c.oneByte = r.IntN(5) == 0
		cases = append(cases, c)
	}
	const shards = 8
	for s := range shards {
		t.Run(fmt.Sprintf("shard %d", s), func(t *testing.T) {
			t.Parallel()
			for k := s; k < len(cases); k += shards {
				c := cases[k]
				b := readBounds{buf: c.buf, scan: 1 << 40, count: 1 << 40, output: 1 << 40}
				var src io.Reader = strings.NewReader(c.text)
				if c.oneByte {
					src = oneByteReader{src}
				}
				got, err := readWindow(context.Background(), "f", src, c.offset, c.limit, b)
				if err != nil {
					t.Fatalf("case %d: %v", c.i, err)
				}
				if want := oldNumberLines("f", c.text, c.offset, c.limit); got != want {
					t.Fatalf("case %d (buf %d, offset %d, limit %d) of %q:\ngot  %q\nwant %q", c.i, c.buf, c.offset, c.limit, c.text, got, want)
				}
			}
		})
	}
}

// oneByteReader hands out its input a byte at a time.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

// callResult is what one tool call returned.
type callResult struct {
	res Result
	err error
}

// noHang runs a tool call and fails the test if it does not return within
// a minute: the calls below must never block (a FIFO without a writer, an
// endless device), so a hang is the failure, not a slow machine.
func noHang(t *testing.T, what string, call func() (Result, error)) (Result, error) {
	t.Helper()
	done := make(chan callResult, 1)
	go func() {
		res, err := call()
		done <- callResult{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it hangs", what)
	}
	return Result{}, nil
}

// specialFiles makes, in dir, a FIFO (no writer ever opens it), a unix
// socket with a listener, a directory, and symbolic links to the FIFO and
// to /dev/zero. It returns their paths by name.
func specialFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	p := map[string]string{
		"fifo": filepath.Join(dir, "pipe"), "socket": filepath.Join(dir, "sock"), "dir": filepath.Join(dir, "adir"),
		"link to fifo": filepath.Join(dir, "pipelink"), "link to /dev/zero": filepath.Join(dir, "zerolink"),
	}
	if err := syscall.Mkfifo(p["fifo"], 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", p["socket"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	if err := os.Mkdir(p["dir"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p["fifo"], p["link to fifo"]); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", p["link to /dev/zero"]); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadRefusesNonRegular: read of a FIFO without a writer, a socket,
// endless devices and a directory returns at once with an error naming the
// path and what it is; nothing is read from it.
func TestReadRefusesNonRegular(t *testing.T) {
	env := newEnv(t)
	sp := specialFiles(t, env.Cwd)
	tests := []struct {
		name, path, want string
	}{
		{"fifo", sp["fifo"], sp["fifo"] + " is a named pipe (FIFO), not a regular file; read reads regular files only"},
		{"link to a fifo", sp["link to fifo"], sp["link to fifo"] + " is a named pipe (FIFO), not a regular file"},
		{"socket", sp["socket"], sp["socket"] + " is a socket, not a regular file"},
		{"/dev/zero", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"/dev/urandom", "/dev/urandom", "/dev/urandom is a character device, not a regular file"},
		{"link to /dev/zero", sp["link to /dev/zero"], sp["link to /dev/zero"] + " is a character device, not a regular file"},
		{"/dev/null", "/dev/null", "/dev/null is a character device, not a regular file"},
		{"directory", sp["dir"], sp["dir"] + " is a directory, not a file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := noHang(t, "read "+tc.path, func() (Result, error) {
				return Read{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": tc.path}))
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Text, tc.want) {
				t.Fatalf("got %+v, want an error containing %q", res, tc.want)
			}
		})
	}
}

// TestReadFSNeverAsksForSpecialFiles: with the editor's file system, a
// path that is a FIFO or a device on disk is refused without asking the
// editor (which could block on it as well); a regular file still comes
// from the editor, within the same bounds.
func TestReadFSNeverAsksForSpecialFiles(t *testing.T) {
	env := newEnv(t)
	sp := specialFiles(t, env.Cwd)
	mfs := newMemFS(map[string]string{sp["fifo"]: "buffer\n", "/dev/zero": "buffer\n"})
	env.FS = mfs
	for _, p := range []string{sp["fifo"], "/dev/zero"} {
		res, err := noHang(t, "read "+p, func() (Result, error) {
			return Read{}.Run(context.Background(), env, mustJSON(t, map[string]any{"file_path": p}))
		})
		if err != nil || !res.IsError || !strings.Contains(res.Text, "not a regular file") {
			t.Fatalf("read %s: %+v, %v", p, res, err)
		}
	}
	if len(mfs.reads) != 0 {
		t.Fatalf("the editor was asked for %v", mfs.reads)
	}
	big := filepath.Join(env.Cwd, "big.txt")
	writeFile(t, env.Cwd, "big.txt", "on disk\n")
	mfs.files[big] = strings.Repeat("x\n", 3000)
	res, err := runRead(context.Background(), env, mustJSON(t, map[string]any{"file_path": big, "limit": 2}),
		readBounds{buf: 64, scan: 1 << 20, count: 100, output: 1 << 20})
	if err != nil || res.Text != "     1\tx\n     2\tx\n\n(Showing lines 1-2 of at least 52. Use offset=3 to read on.)" {
		t.Fatalf("editor buffer: %q, %v", res.Text, err)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sparseFile makes a sparse file of 8 TiB starting with prefix, in dir
// or, when its file system refuses such a size, in another temporary
// directory; it skips the test when none allows it.
func sparseFile(t *testing.T, dir, prefix string) string {
	t.Helper()
	for _, d := range []string{dir, os.TempDir(), "/var/tmp"} {
		f, err := os.CreateTemp(d, "sparse-*.txt")
		if err != nil {
			continue
		}
		p := f.Name()
		t.Cleanup(func() { _ = os.Remove(p) })
		_, werr := f.WriteString(prefix)
		cerr := f.Close()
		if werr == nil && cerr == nil && os.Truncate(p, 8<<40) == nil {
			if d != dir {
				t.Logf("the test's directory refuses an 8 TiB file; using %s", d)
			}
			return p
		}
	}
	t.Skip("no file system here allows an 8 TiB sparse file")
	return ""
}

// TestReadHugeFiles reads an 8 TiB sparse file (all NUL, and one with text
// before the hole), a file with a 50 MB line and a file of 3 million lines:
// every answer comes from a bounded window, and the allocation stays far
// below the files' sizes.
func TestReadHugeFiles(t *testing.T) {
	env := newEnv(t)
	var lines strings.Builder
	for i := 1; i <= 4000; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	holes := sparseFile(t, env.Cwd, "")
	textThenHole := sparseFile(t, env.Cwd, lines.String())

	// One 50 MB line, then a short one.
	oneLine := filepath.Join(env.Cwd, "oneline.txt")
	f, err := os.Create(oneLine)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("abcdefgh", 1<<17)) // 1 MiB
	for range 50 {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString("\nsecond\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("abcdefgh", MaxLineRunes/8) + fmt.Sprintf("… [line cut: %d characters]", 50<<20)

	// 3 million numbered lines (about 20 MB).
	many := filepath.Join(env.Cwd, "many.txt")
	var mb bytes.Buffer
	for i := 1; i <= 3_000_000; i++ {
		mb.WriteString(strconv.Itoa(i))
		mb.WriteByte('\n')
	}
	if err := os.WriteFile(many, mb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	mb = bytes.Buffer{}

	tests := []struct {
		name   string
		args   map[string]any
		b      readBounds
		want   string // exact, unless prefix is set
		prefix string
		suffix string
		err    bool
	}{
		{name: "8 TiB of holes", args: map[string]any{"file_path": holes}, b: defaultReadBounds(),
			want: holes + " is a binary file; read shows text files only", err: true},
		// A scan budget of 128 MiB, not the default 1 GiB (still above the
		// count budget, as the default is): the same stop, without
		// counting a GiB of NULs (30–70 s under -race).
		{name: "text then 8 TiB of holes: the count stops at its budget", args: map[string]any{"file_path": textThenHole, "offset": 3999}, b: readBounds{buf: readChunkBytes, scan: 128 << 20, count: MaxReadCountBytes, output: MaxReadOutputBytes},
			want:   "  3999\tline 3999\n  4000\tline 4000\n  4001\t" + strings.Repeat("\x00", MaxLineRunes) + "… [line cut: at least ",
			suffix: " characters]\n\n(Showing lines 3999-4001 of " + textThenHole + ": read stops after the first 134217728 bytes of a file. Use bash (sed -n, tail) to see the rest.)"},
		{name: "text then holes, default window", args: map[string]any{"file_path": textThenHole}, b: defaultReadBounds(),
			prefix: "     1\tline 1\n", suffix: "  2000\tline 2000\n\n(Showing lines 1-2000 of at least 4001. Use offset=2001 to read on.)"},
		{name: "offset beyond the scan budget", args: map[string]any{"file_path": textThenHole, "offset": 1_000_000_000}, b: readBounds{buf: readChunkBytes, scan: 32 << 20, count: 1 << 20, output: 1 << 20},
			want: fmt.Sprintf("(offset 1000000000 is past the first %d bytes of %s, as far as read looks for a line; they hold 4000 complete lines. Use a smaller offset, or bash (sed -n, tail) to see lines further in.)", 32<<20, textThenHole)},
		{name: "a 50 MB line", args: map[string]any{"file_path": oneLine}, b: defaultReadBounds(),
			want: "     1\t" + cut + "\n     2\tsecond"},
		{name: "the line after a 50 MB line", args: map[string]any{"file_path": oneLine, "offset": 2}, b: defaultReadBounds(),
			want: "     2\tsecond"},
		{name: "far into many lines", args: map[string]any{"file_path": many, "offset": 2_500_000, "limit": 2}, b: defaultReadBounds(),
			want: "2500000\t2500000\n2500001\t2500001\n\n(Showing lines 2500000-2500001 of 3000000. Use offset=2500002 to read on.)"},
		{name: "count budget", args: map[string]any{"file_path": many, "limit": 1}, b: readBounds{buf: readChunkBytes, scan: 1 << 30, count: 1 << 20, output: 1 << 20},
			prefix: "     1\t1\n\n(Showing lines 1-1 of at least "},
		{name: "output cap", args: map[string]any{"file_path": many, "offset": 10}, b: readBounds{buf: readChunkBytes, scan: 1 << 30, count: 1 << 30, output: 25},
			want: "    10\t10\n    11\t11\n\n(Showing lines 10-11 of 3000000; read shows at most 25 bytes at a time. Use offset=12 to read on.)"},
		{name: "past the end of many lines", args: map[string]any{"file_path": many, "offset": 3_000_001}, b: defaultReadBounds(),
			want: "(offset 3000001 is past the end of " + many + ", which has 3000000 lines)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res Result
			var err error
			alloc := allocated(func() { res, err = runRead(context.Background(), env, mustJSON(t, tc.args), tc.b) })
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.err {
				t.Fatalf("IsError %v: %.300q", res.IsError, res.Text)
			}
			switch {
			case tc.want != "" && tc.suffix == "" && res.Text != tc.want:
				t.Fatalf("text\n%.600q\nwant\n%.600q", res.Text, tc.want)
			case tc.want != "" && tc.suffix != "" && !strings.HasPrefix(res.Text, tc.want):
				t.Fatalf("text\n%.600q\nwant prefix\n%.600q", res.Text, tc.want)
			case !strings.HasPrefix(res.Text, tc.prefix) || !strings.HasSuffix(res.Text, tc.suffix):
				t.Fatalf("text\n%.300q…%.300q\nwant prefix %q, suffix %q", res.Text, res.Text[max(0, len(res.Text)-300):], tc.prefix, tc.suffix)
			}
			// The window, a line buffer and the output: not the file.
			if limit := uint64(8 << 20); alloc > limit {
				t.Errorf("allocated %d bytes, want at most %d", alloc, limit)
			}
		})
	}
}

// flippingCtx is a context whose Err turns to context.Canceled after a
// number of calls, so a scan can be cancelled at a chosen point in it.
type flippingCtx struct {
	context.Context
	calls atomic.Int64
	after int64
}

func (c *flippingCtx) Err() error {
	if c.calls.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// endless serves "a\n" forever, counting the bytes it hands out.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "a\n"[i%2]
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadCancelMidScan: a cancel in the middle of a scan (skipping to an
// offset, counting lines) ends it at the next chunk, with ctx's error.
func TestReadCancelMidScan(t *testing.T) {
	for _, tc := range []struct {
		name          string
		offset, limit int
	}{{"skipping to the offset", 1 << 40, 1}, {"counting lines", 1, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := &flippingCtx{Context: context.Background(), after: 10}
			src := &endless{}
			_, err := readWindow(ctx, "f", src, tc.offset, tc.limit, defaultReadBounds())
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			// Ten chunks (one per check) were read, not the budget.
			if src.n > 11*readChunkBytes {
				t.Fatalf("read %d bytes after the cancel", src.n)
			}
		})
	}
	env := newEnv(t)
	writeFile(t, env.Cwd, "a.txt", strings.Repeat("a\n", 1<<20))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Read{}).Run(ctx, env, mustJSON(t, map[string]any{"file_path": "a.txt", "offset": 1 << 19})); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with a cancelled context: %v", err)
	}
}

// BenchmarkReadBigFile reads a window far into a 64 MB file of short lines
// and one at its start (which then counts the lines to the budget).
func BenchmarkReadBigFile(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big.txt")
	var buf bytes.Buffer
	for i := 0; buf.Len() < 64<<20; i++ {
		fmt.Fprintf(&buf, "%d the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	env := &Env{Cwd: dir, SpillDir: filepath.Join(dir, "spill")}
	for _, bc := range []struct {
		name string
		args map[string]any
	}{{"start", map[string]any{"file_path": p}}, {"far", map[string]any{"file_path": p, "offset": 1_000_000}}} {
		raw, _ := json.Marshal(bc.args)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if res, err := (Read{}).Run(context.Background(), env, raw); err != nil || res.IsError {
					b.Fatal(res.Text, err)
				}
			}
		})
	}
}
