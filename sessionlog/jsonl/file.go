package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/internal/storage"
)

// File name extensions of the two physical forms of a log.
const (
	ExtRaw  = ".jsonl"     // plain JSON Lines
	ExtZstd = ".jsonl.zst" // JSON Lines in zstd frames, one per append batch
)

// zstdMagic starts every zstd frame.
const zstdMagic = "\x28\xb5\x2f\xfd"

func isZstd(path string) bool { return strings.HasSuffix(path, ExtZstd) }

func newEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
}

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
}

// readResult is a log file decoded for loading or appending.
type readResult struct {
	path string
	zst  bool
	d    *Decoded
	size int64 // bytes in the file
	// cut is the offset an appender truncates the file to: the end of the
	// intact part (for zstd, of the last frame that is intact throughout).
	cut int64
	// prefix is content an appender writes before its first records: the
	// intact remainder of a partly damaged frame, and a '\n' that a final
	// complete record lacks.
	prefix []byte
}

// readLog reads and decodes the log at path (raw or zstd by extension).
func readLog(path string, dec *zstd.Decoder) (*readResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &readResult{path: path, zst: isZstd(path), size: int64(len(data))}
	content := data
	var spans []frameSpan
	var frameTorn *Torn
	if r.zst {
		var tornAt int
		var tornErr error
		content, spans, tornAt, tornErr, err = unframe(dec, data, path)
		if err != nil {
			return nil, err
		}
		if tornErr != nil {
			frameTorn = &Torn{Records: 1, Err: fmt.Errorf("damaged zstd frame at byte %d: %w", tornAt, tornErr)}
		}
		if len(content) == 0 && tornErr != nil {
			return nil, &sessionlog.RecordError{File: path, Line: 1,
				Err: fmt.Errorf("%w: the first zstd frame is damaged: %v", sessionlog.ErrHeader, tornErr)}
		}
	}
	d, err := decodeBytes(content, path)
	if err != nil {
		return nil, err
	}
	good := d.GoodBytes
	if frameTorn != nil {
		frameTorn.Line = bytes.Count(content[:good], []byte{'\n'}) + 1
		if d.Torn != nil {
			d.Torn.Records += frameTorn.Records
		} else {
			d.Torn = frameTorn
		}
	}
	if good > 0 && content[good-1] != '\n' {
		r.prefix = []byte{'\n'}
	}
	if !r.zst {
		r.cut = good
		return finish(r, d), nil
	}
	// The file may be cut only at a frame boundary: keep every frame that
	// ends within the intact content and re-append the rest of it.
	var cut, kept int64
	for _, s := range spans {
		if s.dend > good {
			break
		}
		cut, kept = s.end, s.dend
	}
	r.cut = cut
	if kept < good {
		r.prefix = append(bytes.Clone(content[kept:good]), r.prefix...)
	}
	return finish(r, d), nil
}

func finish(r *readResult, d *Decoded) *readResult {
	r.d = d
	if r.zst {
		d.GoodBytes = r.cut
	}
	return r
}

// frameSpan locates one intact frame: its compressed bytes [off,end) and the
// end of its content in the concatenated decompressed stream.
type frameSpan struct {
	off, end int64
	dend     int64
}

// unframe decompresses a zstd log frame by frame. It returns the content of
// the leading intact frames with their spans. A damaged final frame (cut
// short, failing its checksum, or trailing garbage) is a torn tail: tornAt
// is its offset and tornErr says what is wrong. Damage followed by an intact
// frame is corruption.
func unframe(dec *zstd.Decoder, data []byte, name string) (content []byte, spans []frameSpan, tornAt int, tornErr error, err error) {
	off := 0
	for off < len(data) {
		n, ferr := frameLen(data[off:])
		var out []byte
		if ferr == nil {
			out, ferr = dec.DecodeAll(data[off:off+n], nil)
		}
		if ferr != nil {
			if next := nextIntactFrame(dec, data, off+1); next >= 0 {
				return nil, nil, 0, nil, &sessionlog.RecordError{File: name,
					Err: fmt.Errorf("%w: zstd frame at byte %d: %v (an intact frame follows at byte %d)", sessionlog.ErrCorrupt, off, ferr, next)}
			}
			return content, spans, off, ferr, nil
		}
		content = append(content, out...)
		spans = append(spans, frameSpan{off: int64(off), end: int64(off + n), dend: int64(len(content))})
		off += n
	}
	return content, spans, 0, nil, nil
}

// nextIntactFrame returns the offset of the first frame at or after from
// that parses and decodes with a valid checksum, or -1.
func nextIntactFrame(dec *zstd.Decoder, data []byte, from int) int {
	for from < len(data) {
		i := bytes.Index(data[from:], []byte(zstdMagic))
		if i < 0 {
			return -1
		}
		at := from + i
		if n, err := frameLen(data[at:]); err == nil {
			if _, err := dec.DecodeAll(data[at:at+n], nil); err == nil {
				return at
			}
		}
		from = at + 1
	}
	return -1
}

// frameLen returns the length of the zstd frame (or skippable frame) that
// starts b, walking its block headers. It returns io.ErrUnexpectedEOF when b
// ends inside the frame.
func frameLen(b []byte) (int, error) {
	var h zstd.Header
	if err := h.Decode(b); err != nil {
		return 0, err
	}
	if h.Skippable {
		n := h.HeaderSize + int(h.SkippableSize)
		if n > len(b) {
			return 0, io.ErrUnexpectedEOF
		}
		return n, nil
	}
	off := h.HeaderSize
	for {
		if len(b) < off+3 {
			return 0, io.ErrUnexpectedEOF
		}
		bh := uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte repeated
			size = 1
		case 3:
			return 0, errors.New("reserved zstd block type")
		}
		off += 3 + size
		if bh&1 != 0 {
			break
		}
	}
	if h.HasCheckSum {
		off += 4
	}
	if off > len(b) {
		return 0, io.ErrUnexpectedEOF
	}
	return off, nil
}

// ReadFile reads a whole log file: a .jsonl.zst file is decompressed frame
// by frame, anything else is read as plain JSONL. A torn tail is reported in
// Decoded.Torn (for zstd, a damaged final frame counts as one record);
// GoodBytes is the file offset an appender would truncate to (for zstd, the
// end of the last frame that is intact throughout).
func ReadFile(path string) (*Decoded, error) {
	dec, err := newDecoder()
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	r, err := readLog(path, dec)
	if err != nil {
		return nil, err
	}
	return r.d, nil
}

// WriteFile writes a whole log to path atomically (a temporary file renamed
// into place) in the canonical layout: Encode's bytes, or for a path ending
// in .jsonl.zst one zstd frame holding the header line followed by one
// holding the records. It checks the header and that seqs are contiguous
// from 0, but not the log rules: fixtures of refused logs can be written.
func WriteFile(path string, h sessionlog.Header, events []sessionlog.Event) error {
	if _, err := sessionlog.DecodeHeader(h.Raw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := storage.CheckBatch(0, events); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	head := append(append([]byte(nil), h.Raw...), '\n')
	body := AppendRecords(nil, events)
	if isZstd(path) {
		enc, err := newEncoder()
		if err != nil {
			return err
		}
		defer enc.Close()
		head = enc.EncodeAll(head, nil)
		if len(body) > 0 {
			body = enc.EncodeAll(body, nil)
		}
	}
	err := storage.WriteAtomic(path, func(f *os.File) error {
		_, err := f.Write(append(head, body...))
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadValid reads a log file (ReadFile) and checks it against every log
// rule. A rule violation comes back as a *sessionlog.RecordError naming
// the file and the physical line of the offending event.
func ReadValid(path string) (*Decoded, *sessionlog.Log, error) {
	d, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := sessionlog.Seed(d.Header, d.Events)
	if err != nil {
		line := 0
		var ee *sessionlog.EventError
		if errors.As(err, &ee) {
			line = d.LineOf(ee.Seq)
		}
		return nil, nil, &sessionlog.RecordError{File: path, Line: line, Err: err}
	}
	return d, l, nil
}
