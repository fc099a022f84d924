package jsonl

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/reel-agent/reel/sessionlog"
)

// Decoded is a log read from JSONL, before the log rules are checked.
type Decoded struct {
	Header sessionlog.Header
	Events []sessionlog.Event
	// spans maps events to physical lines: span k says events from seq
	// on start at the 1-based line — a packed row's events all on it, a
	// run's one per line from it on (a log of one event per line is one
	// span, not one per line).
	spans []lineSpan
	// Torn is non-nil when a damaged tail after the last complete turn/end
	// was dropped (a crash mid-write).
	Torn *Torn
	// GoodBytes is the length of the leading, intact part of the input: the
	// offset a writer truncates to before appending after a torn tail.
	GoodBytes int64
}

// Torn describes a dropped tail.
type Torn struct {
	Line    int   // first damaged physical line
	Records int   // physical lines dropped
	Err     error // what was wrong with the first of them
}

// LineOf returns the physical line of seq, or 0.
func (d *Decoded) LineOf(seq int) int {
	if seq < 0 || seq >= len(d.Events) {
		return 0
	}
	k, found := slices.BinarySearchFunc(d.spans, seq, func(s lineSpan, seq int) int { return cmp.Compare(s.seq, seq) })
	if !found {
		k--
	}
	if s := d.spans[k]; s.run {
		return s.line + seq - s.seq
	}
	return d.spans[k].line
}

// lineSpan records that events from seq on start at a physical line: all
// of them on it (a packed row), or with run one per line.
type lineSpan struct {
	seq, line int
	run       bool
}

// addLine notes that the events from seq n on (one, or a packed row's)
// are on line.
func (d *Decoded) addLine(n, line int, one bool) {
	if one && len(d.spans) > 0 {
		if s := d.spans[len(d.spans)-1]; s.run && s.line+n-s.seq == line {
			return
		}
	}
	d.spans = append(d.spans, lineSpan{seq: n, line: line, run: one})
}

// sizeHint estimates the number of events in n bytes of log.
func sizeHint(r io.Reader) int {
	if br, ok := r.(interface{ Len() int }); ok {
		return br.Len()/48 + 16
	}
	return 0
}

// maxReadBuf is Decode's read buffer for a long log or a stream.
const maxReadBuf = 256 << 10

// readBufSize is Decode's read buffer for r: maxReadBuf, or a little more
// than the bytes left when r says how many (a bytes.Reader over a whole
// file), so a small log is not copied through a 256 KiB buffer — at start
// under --replay that buffer alone was a tenth of the process's allocation.
func readBufSize(r io.Reader) int {
	if lr, ok := r.(interface{ Len() int }); ok && lr.Len() < maxReadBuf {
		return lr.Len() + 1
	}
	return maxReadBuf
}

// Decode reads a JSONL log: the header line, then event lines and packed
// chunk rows, expanded into the exact logical events. name labels errors.
//
// Damage (an unparsable line, a malformed row, a seq gap or duplicate) before
// the last complete turn/end is corruption (sessionlog.ErrCorrupt). Damage
// after it is a torn tail: it is dropped and reported in Torn.
func Decode(r io.Reader, name string) (*Decoded, error) {
	br := bufio.NewReaderSize(r, readBufSize(r))
	return decode(func() ([]byte, error) { return br.ReadBytes('\n') }, name, sizeHint(r))
}

// decodeBytes is Decode of a whole file's content, which it takes over
// (the events keep slices of it; the caller writes it no more): each line
// cut from it (no read buffer between, no copy), the events allocated for one per line
// (packed rows grow them) — sizeHint's estimate of one per 48 bytes made a
// log of long lines allocate, clear and have the collector scan three
// times the events it holds.
func decodeBytes(content []byte, name string) (*Decoded, error) {
	off := 0
	next := func() ([]byte, error) {
		// As bufio.Reader.ReadBytes('\n'): the line with its newline,
		// io.EOF with the last line when it has none. content is the
		// caller's to give away (a file read or decompressed for this
		// decode, not written after), so a line is a slice of it, its
		// capacity ending with it: an event keeps its line without a copy,
		// and an append to one line cannot write over the next.
		rest := content[off:]
		j := bytes.IndexByte(rest, '\n')
		if j < 0 {
			off = len(content)
			if len(rest) == 0 {
				return nil, io.EOF
			}
			return rest[:len(rest):len(rest)], io.EOF
		}
		off += j + 1
		return rest[: j+1 : j+1], nil
	}
	return decode(next, name, bytes.Count(content, []byte{'\n'})+16)
}

// decode is Decode reading lines from next (bufio.Reader.ReadBytes('\n')'s
// contract), hint events allocated after the header.
func decode(next func() ([]byte, error), name string, hint int) (*Decoded, error) {
	var (
		d      Decoded
		lineNo int
		offset int64
		damage *Torn
	)
	for {
		line, err := next()
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, &sessionlog.RecordError{File: name, Line: lineNo + 1, Err: err}
		}
		lineNo++
		body := line // bytes.TrimRight(line, "\r\n") without building its cutset per line
		for len(body) > 0 && (body[len(body)-1] == '\n' || body[len(body)-1] == '\r') {
			body = body[:len(body)-1]
		}
		if lineNo == 1 {
			h, herr := sessionlog.DecodeHeader(body)
			if herr != nil {
				return nil, &sessionlog.RecordError{File: name, Line: 1, Err: herr}
			}
			d.Header = h
			d.Events = make([]sessionlog.Event, 0, hint)
			offset += int64(len(line))
			d.GoodBytes = offset
			continue
		}
		if damage != nil {
			// Only look for a later complete turn/end: it turns the damage
			// into corruption.
			if ev, derr := sessionlog.DecodeEvent(body); derr == nil && ev.Type == sessionlog.TypeTurnEnd {
				return nil, &sessionlog.RecordError{File: name, Line: damage.Line,
					Err: fmt.Errorf("%w: %v (before the complete turn/end on line %d)", sessionlog.ErrCorrupt, damage.Err, lineNo)}
			}
			damage.Records++
			continue
		}
		if len(bytes.TrimSpace(body)) == 0 {
			damage = &Torn{Line: lineNo, Records: 1, Err: errors.New("empty line")}
			continue
		}
		n := len(d.Events)
		evs, rerr := appendRecord(d.Events, body)
		if rerr == nil {
			for k, ev := range evs[n:] {
				if ev.Seq != n+k {
					rerr = fmt.Errorf("seq %d (%s) breaks the contiguous sequence: expected seq %d", ev.Seq, ev.Type, n+k)
					break
				}
			}
		}
		if rerr != nil {
			clear(evs[n:])
			d.Events = evs[:n]
			damage = &Torn{Line: lineNo, Records: 1, Err: rerr}
			continue
		}
		d.addLine(n, lineNo, len(evs) == n+1)
		d.Events = evs
		offset += int64(len(line))
		d.GoodBytes = offset
	}
	if lineNo == 0 {
		return nil, &sessionlog.RecordError{File: name, Err: fmt.Errorf("%w: empty log (no header line)", sessionlog.ErrHeader)}
	}
	d.Torn = damage
	return &d, nil
}

// rowPrefixes start the lines of packed rows, by tag.
var rowPrefixes = [...]struct{ tag, prefix string }{
	{rowText, `{"type":"` + rowText + `",`},
	{rowReasoning, `{"type":"` + rowReasoning + `",`},
	{rowToolCall, `{"type":"` + rowToolCall + `",`},
}

// appendRecord appends the event(s) of one non-header line to evs; on
// error what it appended is not to be kept.
func appendRecord(evs []sessionlog.Event, body []byte) ([]sessionlog.Event, error) {
	row := false
	for _, r := range rowPrefixes {
		row = row || bytes.HasPrefix(body, []byte(r.prefix))
	}
	if !row && !bytes.HasPrefix(body, []byte(`{"type":"session"`)) {
		// body comes from a fresh ReadBytes allocation: the event may keep it.
		if ev, err := sessionlog.DecodeEventOwned(body); err == nil && ev.Type != "session" {
			return append(evs, ev), nil
		}
	}
	got, err := decodeRecord(body)
	if err != nil {
		return evs, err
	}
	return append(evs, got...), nil
}

// decodeRecord decodes one non-header line into its event(s).
func decodeRecord(body []byte) ([]sessionlog.Event, error) {
	// Fast path: rows start with their tag; everything else is an event.
	for _, r := range rowPrefixes {
		if bytes.HasPrefix(body, []byte(r.prefix)) {
			evs, err := expandRow(r.tag, body)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", sessionlog.ErrInvalid, err)
			}
			return evs, nil
		}
	}
	if !bytes.HasPrefix(body, []byte(`{"type":"session"`)) {
		// body comes from a fresh ReadBytes allocation: the event may keep it.
		if ev, err := sessionlog.DecodeEventOwned(body); err == nil && ev.Type != "session" {
			return []sessionlog.Event{ev}, nil
		}
	}
	var tag struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &tag); err != nil {
		return nil, fmt.Errorf("%w: %v", sessionlog.ErrInvalid, err)
	}
	switch tag.Type {
	case rowText, rowReasoning, rowToolCall:
		evs, err := expandRow(tag.Type, body)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sessionlog.ErrInvalid, err)
		}
		return evs, nil
	case "session":
		return nil, fmt.Errorf("%w: a second session header", sessionlog.ErrInvalid)
	}
	ev, err := sessionlog.DecodeEvent(body)
	if err != nil {
		return nil, err
	}
	return []sessionlog.Event{ev}, nil
}

// AppendRecords appends the canonical storage lines of a batch of events:
// runs of at least three consecutive same-block deltas become one packed
// row; everything else is one line per event. Each line ends in '\n'.
func AppendRecords(b []byte, events []sessionlog.Event) []byte {
	return appendRecords(b, events, nil)
}

// appendRecords is AppendRecords; with a non-nil sp it hands the output
// to sp's writer in pieces as it grows (see spiller), so that a large batch
// is never held encoded whole.
func appendRecords(b []byte, events []sessionlog.Event, sp *spiller) []byte {
	// The current run is events[start:start+n]; nothing is copied per
	// event, so encoding a stream of a million deltas holds no more than
	// its output.
	start, n := 0, 0
	var prev *delta
	var ds []*delta // the run's classified deltas, reused from run to run
	flush := func() {
		run := events[start : start+n]
		if n >= minRun {
			b = appendRow(b, run, ds, sp)
			b = append(b, '\n')
		} else {
			for k := range run {
				b = sp.event(b, &run[k])
				b = append(b, '\n')
			}
		}
		n, prev, ds = 0, nil, ds[:0]
	}
	for i := range events {
		e := &events[i]
		d, ok := classify(e)
		if !ok {
			flush()
			b = sp.event(b, e)
			b = append(b, '\n')
			continue
		}
		if n > 0 && !continues(prev, d, &events[i-1], e) {
			flush()
		}
		if n == 0 {
			start = i
		}
		n++
		prev = d
		ds = append(ds, d)
	}
	flush()
	return b
}

// spiller writes encoded records out as they are produced: once the
// buffer holds limit bytes it is written and reused, and an event whose
// data alone is limit bytes or more has that data written straight from
// the event, never copied. The bytes written are exactly those
// AppendRecords would produce. A nil *spiller keeps everything in the
// buffer. After a failed write nothing more is written; err says why.
type spiller struct {
	w       io.Writer
	limit   int
	written int64
	err     error
	// base is the file offset the first byte written goes to; spans
	// records where the data of each event of viewBytes or more goes.
	base  int64
	spans []dataSpan
}

// dataSpan is where an event's data was written: its seq, the file
// offset of its first byte, and the data itself (for the writer to check
// the stored bytes against before it hands out a view of them).
type dataSpan struct {
	seq  int
	off  int64
	data []byte
}

// dataAt records that e's data starts at byte at of the output (counting
// from the first byte sp wrote), when it is long enough to be viewed.
func (sp *spiller) dataAt(e *sessionlog.Event, at int64) {
	if len(e.Data) >= viewBytes {
		sp.spans = append(sp.spans, dataSpan{seq: e.Seq, off: sp.base + at, data: e.Data})
	}
}

// dataHead is the length of e's line up to its data: {"type":…,"seq":…,
// "time":…,"data": (Event.AppendJSON's order).
func dataHead(e *sessionlog.Event) int {
	bare := sessionlog.Event{Type: e.Type, Seq: e.Seq, Time: e.Time}
	return len(bare.AppendJSON(nil)) - len(`}`) + len(`,"data":`)
}

// spill writes b out when it has reached the limit and returns the
// buffer to append to next.
func (sp *spiller) spill(b []byte) []byte {
	if sp == nil || len(b) < sp.limit {
		return b
	}
	return sp.write(b)[:0]
}

// write writes p unless a write failed before.
func (sp *spiller) write(p []byte) []byte {
	if sp.err == nil {
		n, err := sp.w.Write(p)
		sp.written += int64(n)
		sp.err = err
	}
	return p
}

// event appends e's canonical line body (sessionlog.Event.AppendJSON).
func (sp *spiller) event(b []byte, e *sessionlog.Event) []byte {
	if sp == nil || len(e.Data) < sp.limit {
		if sp != nil && len(e.Data) >= viewBytes {
			sp.dataAt(e, sp.written+int64(len(b)+dataHead(e)))
		}
		return sp.spill(e.AppendJSON(b))
	}
	// {"type":…,"seq":…,"time":… then ,"data": and the data, then the
	// members after it: the event encoded without its data, cut around
	// the place the data goes.
	bare := *e
	bare.Data = nil
	var tail sessionlog.Event
	tail.SourceEventSeqs, tail.SurfaceOp = e.SourceEventSeqs, e.SurfaceOp
	rest := tail.AppendJSON(nil)[len(emptyEventHead):]
	head := bare.AppendJSON(b)
	head = head[:len(head)-len(rest)]
	head = append(head, `,"data":`...)
	sp.write(head)
	sp.dataAt(e, sp.written)
	sp.write(e.Data)
	return append(b[:0], rest...)
}

// emptyEventHead is how the zero event's encoding starts, up to where its
// data would go.
const emptyEventHead = `{"type":"","seq":0,"time":0`

// Encode writes a whole log in the canonical layout: the header line, then
// the packed records.
func Encode(w io.Writer, h sessionlog.Header, events []sessionlog.Event) error {
	b := make([]byte, 0, len(h.Raw)+1+len(events)*128)
	b = append(b, h.Raw...)
	b = append(b, '\n')
	b = AppendRecords(b, events)
	_, err := w.Write(b)
	return err
}
