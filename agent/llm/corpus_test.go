package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
)

// corpusDir is the dsh conformance corpus, checked out beside the module
// (../shared next to main), as CI lays it out; see corpustest for what a
// missing corpus does.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpustest.Dir(t)
}

// corpusChunk is one logical assistant/chunk of the corpus: the exact bytes
// of its "chunk" member and where it came from.
type corpusChunk struct {
	where string
	seq   int
	raw   []byte
}

// corpusChunks returns every assistant/chunk in every session log of the
// corpus, expanding packed rows. Packed members are rebuilt from the raw
// JSON literals of the row (never re-encoded), so they are independent of
// the codec under test. It also checks that seqs are contiguous, which pins
// the expansion rule: member k of a row has seq seq0+k.
func corpusChunks(t *testing.T) []corpusChunk {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "*", "session*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no session logs in the corpus")
	}
	var out []corpusChunk
	for _, file := range files {
		out = append(out, fileChunks(t, file)...)
	}
	return out
}

func fileChunks(t *testing.T, file string) []corpusChunk {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var out []corpusChunk
	nextSeq := 0
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // header
		}
		var rec struct {
			Type string          `json:"type"`
			Seq  *int            `json:"seq"`
			Seq0 *int            `json:"seq0"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		where := fmt.Sprintf("%s:%d", file, line)
		switch rec.Type {
		case "text-chunks", "reasoning-chunks", "tool-call-chunks":
			if rec.Seq0 == nil || *rec.Seq0 != nextSeq {
				t.Fatalf("%s: packed row seq0 %v, want %d", where, rec.Seq0, nextSeq)
			}
			members := expandPacked(t, where, rec.Type, rec.Data)
			for k := range members {
				members[k].seq = nextSeq + k
			}
			out = append(out, members...)
			nextSeq += len(members)
		default:
			if rec.Seq == nil || *rec.Seq != nextSeq {
				t.Fatalf("%s: seq %v, want %d", where, rec.Seq, nextSeq)
			}
			nextSeq++
			if rec.Type != "assistant/chunk" {
				continue
			}
			var data struct {
				Chunk json.RawMessage `json:"chunk"`
			}
			if err := json.Unmarshal(rec.Data, &data); err != nil || data.Chunk == nil {
				t.Fatalf("%s: assistant/chunk without chunk: %v", where, err)
			}
			out = append(out, corpusChunk{where: where, seq: *rec.Seq, raw: data.Chunk})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}

// expandPacked rebuilds the logical chunks of a packed row from the row's raw
// JSON literals: {"type":<kind>-delta,"index":I,"text":T} per text, or
// {"type":"tool-call-delta","index":I,"id":ID,"name":N,"argumentsDelta":A}
// per argument fragment ("name" only when the row has one).
func expandPacked(t *testing.T, where, typ string, data json.RawMessage) []corpusChunk {
	t.Helper()
	var row struct {
		Index json.RawMessage   `json:"index"`
		DT    []int64           `json:"dt"`
		Texts []json.RawMessage `json:"texts"`
		ID    json.RawMessage   `json:"id"`
		Name  json.RawMessage   `json:"name"`
		Args  []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(data, &row); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	members := row.Texts
	if typ == "tool-call-chunks" {
		members = row.Args
	}
	if len(members) == 0 || len(row.DT) != len(members)-1 {
		t.Fatalf("%s: %d members with %d time deltas", where, len(members), len(row.DT))
	}
	out := make([]corpusChunk, 0, len(members))
	for k, m := range members {
		var b bytes.Buffer
		switch typ {
		case "tool-call-chunks":
			b.WriteString(`{"type":"tool-call-delta","index":`)
			b.Write(row.Index)
			b.WriteString(`,"id":`)
			b.Write(row.ID)
			if row.Name != nil {
				b.WriteString(`,"name":`)
				b.Write(row.Name)
			}
			b.WriteString(`,"argumentsDelta":`)
			b.Write(m)
		case "text-chunks":
			b.WriteString(`{"type":"text-delta","index":`)
			b.Write(row.Index)
			b.WriteString(`,"text":`)
			b.Write(m)
		case "reasoning-chunks":
			b.WriteString(`{"type":"reasoning-delta","index":`)
			b.Write(row.Index)
			b.WriteString(`,"text":`)
			b.Write(m)
		}
		b.WriteByte('}')
		out = append(out, corpusChunk{where: where + " member " + strconv.Itoa(k), raw: b.Bytes()})
	}
	return out
}

func TestCorpusChunksRoundTrip(t *testing.T) {
	chunks := corpusChunks(t)
	seen := map[string]int{}
	for _, cc := range chunks {
		var c Chunk
		if err := json.Unmarshal(cc.raw, &c); err != nil {
			t.Errorf("%s: decode %s: %v", cc.where, cc.raw, err)
			continue
		}
		if !c.Known() {
			t.Errorf("%s: chunk kept raw, want a recognised variant: %s", cc.where, cc.raw)
			continue
		}
		seen[c.Type]++
		got, err := c.MarshalJSON()
		if err != nil {
			t.Errorf("%s: encode: %v", cc.where, err)
			continue
		}
		if !bytes.Equal(got, cc.raw) {
			t.Errorf("%s: round trip differs\n got %s\nwant %s", cc.where, got, cc.raw)
		}
	}
	for _, typ := range []string{ChunkBlockStart, ChunkTextDelta, ChunkReasoningDelta, ChunkToolCallDelta, ChunkBlockEnd, ChunkUsage, ChunkFinish} {
		if seen[typ] == 0 {
			t.Errorf("corpus has no %s chunk; the round trip test does not cover it", typ)
		}
	}
	t.Logf("%d chunks round-tripped: %v", len(chunks), seen)
}

type corpusMessage struct {
	where string
	msg   json.RawMessage
}

// corpusMessages returns every model message the corpus records: the data
// of user/message, and data.message of assistant/message and tool/result.
func corpusMessages(t *testing.T) []corpusMessage {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "*", "session*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusMessage
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			var rec struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			if len(line) == 0 || json.Unmarshal(line, &rec) != nil {
				continue
			}
			where := fmt.Sprintf("%s:%d", file, i+1)
			switch rec.Type {
			case "user/message":
				out = append(out, corpusMessage{where, rec.Data})
			case "assistant/message", "tool/result":
				var d struct {
					Message json.RawMessage `json:"message"`
				}
				if err := json.Unmarshal(rec.Data, &d); err != nil || d.Message == nil {
					t.Fatalf("%s: %s without message: %v", where, rec.Type, err)
				}
				out = append(out, corpusMessage{where, d.Message})
			}
		}
	}
	return out
}
