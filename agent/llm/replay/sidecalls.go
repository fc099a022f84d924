package replay

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// The model calls that are not a step's — a compaction's summary and a
// session title — are matched too. Their recorded requests are rebuilt
// from the log:
//
//   - a compaction summary (compaction/start, then a compaction/summary
//     marked as a local stream call): the messages are the surface events
//     compaction/start names (the surface span from seq start to seq end
//     as it stood at compaction/start, exactly messages of them), projected as every
//     request projects them, followed by the summary instruction; the
//     output-token cap is the summary's maxTokens. The system prompt and
//     the instruction are not in the log: they are reel's own and pinned
//     in the pins folder (instructions/compaction-system_1.snap.md and
//     instructions/compaction-request_1.snap.md), compared under
//     MatchFull only.
//   - a title call (session/title-llm-request): the system prompt, the
//     messages and the output-token cap, all logged. The i-th title call is
//     matched with the i-th recorded title request, whatever answers it (a
//     title override included).

// The pinned instructions of the compaction summary's request: its system
// prompt and its instruction message (the pins folder's
// instructions/NAME_1.snap.md).
const (
	compactionSystemPin  = "compaction-system"
	compactionRequestPin = "compaction-request"
	compactionSystemRef  = "{{instructions:" + compactionSystemPin + "}}"
	compactionRequestRef = "{{instructions:" + compactionRequestPin + "}}"
)

// InstructionPins names the pinned instructions a compaction summary's
// request is compared with. docs/scenarios.md names each (a test keeps the
// two in step).
var InstructionPins = []string{compactionSystemPin, compactionRequestPin}

// compactionKey is the key of a compaction's summary request: its Where
// in the derived script is "compaction summary at seq N" (summary seq),
// and a request finds it by the turn and step that compact.
func compactionKey(turn, step int) string {
	return fmt.Sprintf("compaction at turn %d step %d", turn, step)
}

// requestKey is the key under which Wants keeps the recorded request a
// request req answers.
func requestKey(req llm.Request) string {
	if req.Purpose == llm.PurposeCompaction {
		return compactionKey(req.Turn, req.Step)
	}
	return stepKey(req.Turn, req.Step)
}

// compactionWants rebuilds every compaction summary request of a log, keyed
// both by the summary entry's Where and by compactionKey.
func compactionWants(h sessionlog.Header, events []sessionlog.Event, out map[string]*Want) error {
	has := false
	for i := range events {
		if events[i].Type == sessionlog.TypeCompactionStart {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	l := sessionlog.New(h)
	var open *Want
	for i := range events {
		e := &events[i]
		switch e.Type {
		case sessionlog.TypeCompactionStart:
			d, err := sessionlog.DecodeData[sessionlog.CompactionStartData](e)
			if err != nil {
				return fmt.Errorf("replay: seq %d (%s): %w", e.Seq, e.Type, err)
			}
			w := &Want{Turn: d.Turn, Step: d.Step, Purpose: llm.PurposeCompaction,
				Header:      sessionlog.RequestHeader{System: compactionSystemRef},
				Instruction: compactionRequestRef}
			seqs := l.Surface().Seqs()
			from, to := slices.Index(seqs, d.Start), slices.Index(seqs, d.End)
			if from < 0 || to < from {
				return fmt.Errorf("replay: compaction at seq %d names surface seqs %d…%d, which the surface does not hold in that order", e.Seq, d.Start, d.End)
			}
			for _, seq := range seqs[from : to+1] {
				m, err := sessionlog.ProjectMessage(l.Event(seq))
				if err != nil {
					return fmt.Errorf("replay: compaction at seq %d: %w", e.Seq, err)
				}
				w.Messages = append(w.Messages, m)
			}
			if len(w.Messages) != d.Messages {
				return fmt.Errorf("replay: compaction at seq %d names %d surface messages (seqs %d…%d), the surface holds %d there", e.Seq, d.Messages, d.Start, d.End, len(w.Messages))
			}
			open = w
		case sessionlog.TypeCompactionSum:
			var d struct {
				MaxTokens     int  `json:"maxTokens"`
				LLMStreamCall bool `json:"llmStreamCall"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return fmt.Errorf("replay: seq %d (%s): %w", e.Seq, e.Type, err)
			}
			if open != nil && d.LLMStreamCall {
				open.MaxTokens = d.MaxTokens
				out[fmt.Sprintf("compaction summary at seq %d", e.Seq)] = open
				out[compactionKey(open.Turn, open.Step)] = open
			}
			open = nil
		case sessionlog.TypeCompactionEnd:
			open = nil
		}
		if err := l.Append(*e); err != nil {
			return fmt.Errorf("replay: rebuild the surface for compaction: %w", err)
		}
	}
	return nil
}

// TitleWants rebuilds the request of every recorded title call, in order.
func TitleWants(events []sessionlog.Event) ([]*Want, error) {
	var out []*Want
	for i := range events {
		e := &events[i]
		if e.Type != sessionlog.TypeTitleLLMRequest {
			continue
		}
		d, err := sessionlog.DecodeData[sessionlog.TitleLLMRequestData](e)
		if err != nil {
			return nil, fmt.Errorf("replay: seq %d (%s): %w", e.Seq, e.Type, err)
		}
		w := &Want{Purpose: llm.PurposeTitle, Header: sessionlog.RequestHeader{System: d.System}, MaxTokens: d.MaxTokens}
		for _, m := range d.Messages {
			w.Messages = append(w.Messages, m.AppendJSON(nil))
		}
		out = append(out, w)
	}
	return out, nil
}

// attachTitleWants gives the i-th title entry the i-th recorded title
// request when it has none (an override's entry answers the same call).
func attachTitleWants(titles []Entry, wants []*Want) {
	for i := range titles {
		if titles[i].Want == nil && i < len(wants) {
			titles[i].Want = wants[i]
		}
	}
}
