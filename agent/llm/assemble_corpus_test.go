package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestCorpusAssembly assembles the chunks every assistant/message of the
// corpus cites and checks that the Assembler gives the recorded content
// and usage byte for byte, and that it agrees with the agent loop's former
// assembly code.
func TestCorpusAssembly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "*", "session*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no session logs in the corpus")
	}
	messages := 0
	for _, file := range files {
		bySeq := map[int][]byte{}
		for _, cc := range fileChunks(t, file) {
			bySeq[cc.seq] = cc.raw
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			var rec struct {
				Type string `json:"type"`
				Data struct {
					Message struct {
						Content json.RawMessage `json:"content"`
					} `json:"message"`
					Usage       json.RawMessage `json:"usage"`
					Interrupted bool            `json:"interrupted"`
				} `json:"data"`
				Sources []int `json:"sourceEventSeqs"`
			}
			if len(line) == 0 || json.Unmarshal(line, &rec) != nil || rec.Type != "assistant/message" {
				continue
			}
			where := fmt.Sprintf("%s:%d", file, i+1)
			var in []Chunk
			for _, seq := range rec.Sources {
				raw, ok := bySeq[seq]
				if !ok {
					t.Fatalf("%s: cites seq %d, which is no assistant/chunk", where, seq)
				}
				var c Chunk
				if err := c.UnmarshalJSON(raw); err != nil {
					t.Fatalf("%s: seq %d: %v", where, seq, err)
				}
				in = append(in, c)
			}
			messages++
			var a Assembler
			for _, c := range in {
				if _, err := a.Add(c); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			if got := a.Content(); !bytes.Equal(got, rec.Data.Message.Content) {
				t.Errorf("%s: content\n got %s\nwant %s", where, got, rec.Data.Message.Content)
			}
			var usage []byte
			if u := a.Usage(); u != nil {
				usage = u.AppendJSON(nil)
			}
			if !bytes.Equal(usage, rec.Data.Usage) {
				t.Errorf("%s: usage %s, want %s", where, usage, rec.Data.Usage)
			}
			if _, err := a.Finish(); (err != nil) != rec.Data.Interrupted {
				t.Errorf("%s: Finish error %v, interrupted %v", where, err, rec.Data.Interrupted)
			}
			t.Run(fmt.Sprintf("ref/%s/%d", filepath.Base(filepath.Dir(file)), i+1), func(t *testing.T) { compareWithRef(t, in) })
		}
	}
	if messages == 0 {
		t.Fatal("the corpus has no assistant/message")
	}
	t.Logf("%d assistant messages assembled", messages)
}
