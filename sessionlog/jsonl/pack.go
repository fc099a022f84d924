package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/reel-agent/reel/sessionlog"
)

// Packed row tags. They are storage vocabulary, never session events.
const (
	rowText      = "text-chunks"
	rowReasoning = "reasoning-chunks"
	rowToolCall  = "tool-call-chunks"
)

// minRun is the shortest run of deltas that packs into one row.
const minRun = 3

// delta is a whitelisted assistant/chunk delta event, with the raw JSON
// tokens needed to rebuild it.
type delta struct {
	kind              string // text-delta, reasoning-delta, tool-call-delta
	turn, step, index json.RawMessage
	id, name          json.RawMessage // tool-call only; name may be nil
	payload           json.RawMessage // text or argumentsDelta string token
}

// chunkData renders the canonical data of a delta event.
func (d *delta) chunkData() []byte {
	b := make([]byte, 0, 64+len(d.payload))
	b = append(b, `{"turn":`...)
	b = append(b, d.turn...)
	b = append(b, `,"step":`...)
	b = append(b, d.step...)
	b = append(b, `,"chunk":{"type":"`...)
	b = append(b, d.kind...)
	b = append(b, `","index":`...)
	b = append(b, d.index...)
	if d.kind == "tool-call-delta" {
		b = append(b, `,"id":`...)
		b = append(b, d.id...)
		if d.name != nil {
			b = append(b, `,"name":`...)
			b = append(b, d.name...)
		}
		b = append(b, `,"argumentsDelta":`...)
	} else {
		b = append(b, `,"text":`...)
	}
	b = append(b, d.payload...)
	return append(b, `}}`...)
}

func isInt(raw json.RawMessage) bool {
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

func isString(raw json.RawMessage) bool { return len(raw) >= 2 && raw[0] == '"' }

// classify returns the delta view of e when e is an assistant/chunk whose
// exact shape (no surface fields, canonical data bytes) may be packed. A
// delta of viewBytes or more (a long answer's merged deltas) is not: it is
// stored as its own line, its data verbatim, so that a writer can hand the
// stored bytes back as a view (store.go, views) and the in-memory log does
// not keep them too; a packed row would save a few bytes of its 16 KiB.
func classify(e *sessionlog.Event) (*delta, bool) {
	if e.Type != sessionlog.TypeAssistantChunk || e.SurfaceOp != nil || e.SourceEventSeqs != nil || e.Data == nil || len(e.Data) >= viewBytes {
		return nil, false
	}
	// The canonical shape is the only packable one: recognise it directly.
	if v, ok := fastClassify(e); ok {
		return v, true
	}
	if !bytes.Contains(e.Data, []byte(`-delta"`)) {
		return nil, false
	}
	var d struct {
		Turn  json.RawMessage `json:"turn"`
		Step  json.RawMessage `json:"step"`
		Chunk struct {
			Type           string          `json:"type"`
			Index          json.RawMessage `json:"index"`
			Text           json.RawMessage `json:"text"`
			ID             json.RawMessage `json:"id"`
			Name           json.RawMessage `json:"name"`
			ArgumentsDelta json.RawMessage `json:"argumentsDelta"`
		} `json:"chunk"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, false
	}
	c := d.Chunk
	if !isInt(d.Turn) || !isInt(d.Step) || !isInt(c.Index) {
		return nil, false
	}
	v := &delta{kind: c.Type, turn: d.Turn, step: d.Step, index: c.Index}
	switch c.Type {
	case "text-delta", "reasoning-delta":
		if !isString(c.Text) {
			return nil, false
		}
		v.payload = c.Text
	case "tool-call-delta":
		if !isString(c.ID) || !isString(c.ArgumentsDelta) || (c.Name != nil && !isString(c.Name)) {
			return nil, false
		}
		v.id, v.name, v.payload = c.ID, c.Name, c.ArgumentsDelta
	default:
		return nil, false
	}
	// Only an event whose bytes are exactly what expansion rebuilds may pack:
	// this makes packing lossless at the byte level.
	if !bytes.Equal(v.chunkData(), e.Data) {
		return nil, false
	}
	return v, true
}

// continues reports whether next extends a run ending in prev.
func continues(prev, next *delta, prevEv, nextEv *sessionlog.Event) bool {
	if next.kind != prev.kind || nextEv.Seq != prevEv.Seq+1 {
		return false
	}
	if !bytes.Equal(next.turn, prev.turn) || !bytes.Equal(next.step, prev.step) || !bytes.Equal(next.index, prev.index) {
		return false
	}
	if next.kind != "tool-call-delta" {
		return true
	}
	return bytes.Equal(next.id, prev.id) && (next.name == nil) == (prev.name == nil) && bytes.Equal(next.name, prev.name)
}

// appendRow writes one packed row for a run (len ≥ minRun) of events
// classify accepts, each continuing the one before it; ds[k] is what
// classify made of evs[k].
func appendRow(b []byte, evs []sessionlog.Event, ds []*delta, sp *spiller) []byte {
	first := ds[0]
	tag := rowText
	switch first.kind {
	case "reasoning-delta":
		tag = rowReasoning
	case "tool-call-delta":
		tag = rowToolCall
	}
	b = append(b, `{"type":"`...)
	b = append(b, tag...)
	b = append(b, `","seq0":`...)
	b = strconv.AppendInt(b, int64(evs[0].Seq), 10)
	b = append(b, `,"time0":`...)
	b = strconv.AppendInt(b, evs[0].Time, 10)
	b = append(b, `,"data":{"turn":`...)
	b = append(b, first.turn...)
	b = append(b, `,"step":`...)
	b = append(b, first.step...)
	b = append(b, `,"index":`...)
	b = append(b, first.index...)
	b = append(b, `,"dt":[`...)
	for k := 1; k < len(evs); k++ {
		if k > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, evs[k].Time-evs[k-1].Time, 10)
	}
	b = append(b, ']')
	key := `,"texts":[`
	if tag == rowToolCall {
		b = append(b, `,"id":`...)
		b = append(b, first.id...)
		if first.name != nil {
			b = append(b, `,"name":`...)
			b = append(b, first.name...)
		}
		key = `,"args":[`
	}
	b = append(b, key...)
	for k := range evs {
		if k > 0 {
			b = append(b, ',')
		}
		b = sp.spill(append(b, ds[k].payload...))
	}
	return append(b, `]}}`...)
}

// expandRow decodes a packed row into its logical assistant/chunk events.
func expandRow(tag string, raw []byte) ([]sessionlog.Event, error) {
	if evs, ok := fastExpandRow(tag, raw); ok {
		return evs, nil
	}
	var row struct {
		Seq0  *int            `json:"seq0"`
		Time0 *int64          `json:"time0"`
		Type  string          `json:"type"`
		Data  json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&row); err != nil {
		return nil, fmt.Errorf("malformed %s row: %v", tag, err)
	}
	if row.Seq0 == nil || *row.Seq0 < 0 || row.Time0 == nil || row.Data == nil {
		return nil, fmt.Errorf("malformed %s row: needs seq0 ≥ 0, time0 and data", tag)
	}
	var d struct {
		Turn  json.RawMessage   `json:"turn"`
		Step  json.RawMessage   `json:"step"`
		Index json.RawMessage   `json:"index"`
		DT    []int64           `json:"dt"`
		Texts []json.RawMessage `json:"texts"`
		ID    json.RawMessage   `json:"id"`
		Name  json.RawMessage   `json:"name"`
		Args  []json.RawMessage `json:"args"`
	}
	dd := json.NewDecoder(bytes.NewReader(row.Data))
	dd.DisallowUnknownFields()
	if err := dd.Decode(&d); err != nil {
		return nil, fmt.Errorf("malformed %s row: data: %v", tag, err)
	}
	if !isInt(d.Turn) || !isInt(d.Step) || !isInt(d.Index) {
		return nil, fmt.Errorf("malformed %s row: turn, step and index must be integers", tag)
	}
	proto := delta{turn: d.Turn, step: d.Step, index: d.Index}
	members := d.Texts
	switch tag {
	case rowText:
		proto.kind = "text-delta"
	case rowReasoning:
		proto.kind = "reasoning-delta"
	case rowToolCall:
		proto.kind = "tool-call-delta"
		if !isString(d.ID) || (d.Name != nil && !isString(d.Name)) || d.Texts != nil {
			return nil, fmt.Errorf("malformed %s row: needs a string id, an optional string name and args", tag)
		}
		proto.id, proto.name = d.ID, d.Name
		members = d.Args
	}
	if tag != rowToolCall && d.Args != nil || tag != rowToolCall && (d.ID != nil || d.Name != nil) {
		return nil, fmt.Errorf("malformed %s row: id, name and args belong to tool-call-chunks", tag)
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("malformed %s row: no members", tag)
	}
	if len(d.DT) != len(members)-1 {
		return nil, fmt.Errorf("malformed %s row: dt has %d gaps for %d members", tag, len(d.DT), len(members))
	}
	out := make([]sessionlog.Event, len(members))
	t := *row.Time0
	for k, m := range members {
		if !isString(m) {
			return nil, fmt.Errorf("malformed %s row: member %d is not a string", tag, k)
		}
		if k > 0 {
			t += d.DT[k-1]
		}
		v := proto
		v.payload = m
		out[k] = sessionlog.Event{Type: sessionlog.TypeAssistantChunk, Seq: *row.Seq0 + k, Time: t, Data: v.chunkData()}
	}
	return out, nil
}
