package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/internal/corpustest"
)

// TestCorpusMessagesMap maps every message the dsh corpus records to chat
// messages: nothing a real session holds may be refused.
func TestCorpusMessagesMap(t *testing.T) {
	files := corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
	n := 0
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
			var msg json.RawMessage
			switch rec.Type {
			case "user/message":
				msg = rec.Data
			case "assistant/message", "tool/result":
				var d struct {
					Message json.RawMessage `json:"message"`
				}
				if err := json.Unmarshal(rec.Data, &d); err != nil {
					t.Fatalf("%s:%d: %v", file, i+1, err)
				}
				msg = d.Message
			default:
				continue
			}
			m, err := llm.ParseMessage(msg)
			if err == nil {
				_, _, err = chatMessages(m, &images{})
			}
			if err != nil {
				t.Errorf("%s:%d: %v", file, i+1, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no messages in the corpus")
	}
}
