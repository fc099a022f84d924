package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/reel-agent/reel/sessionlog"
)

// viewBytes is the size from which an event's data, once a Sync has
// written it to a plain log file, is handed back to the session as a
// read-only view of the file (a shared mapping) instead of being kept in
// memory: a long answer's merged deltas, its block-end and its message.
const viewBytes = 16 << 10

// mapBytes is the least data a Sync maps: less (a tool result or two) stays
// in memory, so that a long session does not collect a mapping per Sync.
const mapBytes = 256 << 10

// views hands out the data of the events the last Sync wrote as views of
// the file (when they come to mapBytes or more): the mapping of the span
// the Sync wrote that holds them, checked byte for byte (read back with
// pread, not through the mapping) against the data the session holds. A span that does not match is not
// handed out; a failure to map hands out nothing. Mappings are never
// unmapped: a view may be shared by any copy of the event (a fork's seed,
// a query's answer) for the rest of the process. Their pages are the
// file's, read on access and dropped again (release) at the next Sync
// that maps: memory the kernel can always take back.
type views struct {
	rf    *os.File // the log file, read-only, for mapping and checking
	maps  [][]byte // every mapping made, for release
	taken []sessionlog.StoredData
	buf   []byte
}

// add maps the spans a Sync wrote to the file at path (in file order)
// and keeps a view of each span whose stored bytes match its data.
func (v *views) add(path string, spans []dataSpan) error {
	total := 0
	for _, s := range spans {
		total += len(s.data)
	}
	if total < mapBytes {
		return nil
	}
	if v.rf == nil {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("open %s to map it: %w", path, err)
		}
		v.rf = f
	}
	page := int64(os.Getpagesize())
	lo := spans[0].off &^ (page - 1)
	last := spans[len(spans)-1]
	hi := last.off + int64(len(last.data))
	m, err := mapFile(v.rf, lo, int(hi-lo))
	if err != nil {
		return fmt.Errorf("map %s bytes %d…%d: %w", path, lo, hi, err)
	}
	if v.buf == nil {
		v.buf = make([]byte, 64<<10)
	}
	n := 0
	for _, s := range spans {
		same, err := v.stored(s)
		if err != nil {
			return err
		}
		if !same {
			continue
		}
		d := m[s.off-lo : s.off-lo+int64(len(s.data))]
		v.taken = append(v.taken, sessionlog.StoredData{Seq: s.seq, Data: d[:len(d):len(d)]})
		n++
	}
	if n == 0 {
		return unmapFile(m)
	}
	v.release()
	v.maps = append(v.maps, m)
	return nil
}

// stored reports whether the file holds s.data at s.off.
func (v *views) stored(s dataSpan) (bool, error) {
	for at := 0; at < len(s.data); {
		b := v.buf[:min(len(v.buf), len(s.data)-at)]
		if _, err := v.rf.ReadAt(b, s.off+int64(at)); err != nil {
			if err == io.EOF {
				return false, nil
			}
			return false, fmt.Errorf("read back seq %d's data at byte %d: %w", s.seq, s.off, err)
		}
		if !bytes.Equal(b, s.data[at:at+len(b)]) {
			return false, nil
		}
		at += len(b)
	}
	return true, nil
}

// release drops the pages of every mapping from the process (they stay
// the file's: the next read of a view reads them again).
func (v *views) release() {
	for _, m := range v.maps {
		releaseMapped(m)
	}
}

// take returns the views made since the last take.
func (v *views) take() []sessionlog.StoredData {
	t := v.taken
	v.taken = nil
	return t
}

// close closes the read-only file; the mappings stay.
func (v *views) close() error {
	if v.rf == nil {
		return nil
	}
	err := v.rf.Close()
	v.rf = nil
	return err
}
