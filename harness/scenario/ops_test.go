package scenario

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// recorder is a Driver that records which method ran which step.
type recorder struct{ calls []string }

func (r *recorder) note(m string, st Step) error {
	r.calls = append(r.calls, m+" "+string(st.Op))
	if st.ExpectError {
		r.calls[len(r.calls)-1] += " expectError"
	}
	return nil
}

func (r *recorder) Initialize(_ context.Context, st Step) error { return r.note("Initialize", st) }
func (r *recorder) NewSession(_ context.Context, st Step) error { return r.note("NewSession", st) }
func (r *recorder) Prompt(_ context.Context, st Step) error     { return r.note("Prompt", st) }
func (r *recorder) PromptAndCancel(_ context.Context, st Step) error {
	return r.note("PromptAndCancel", st)
}
func (r *recorder) PromptAndWaitForAgentMessage(_ context.Context, st Step) error {
	return r.note("PromptAndWaitForAgentMessage", st)
}
func (r *recorder) WaitForTurnEnd(_ context.Context, st Step) error {
	return r.note("WaitForTurnEnd", st)
}
func (r *recorder) WaitForTurnStart(_ context.Context, st Step) error {
	return r.note("WaitForTurnStart", st)
}
func (r *recorder) WaitForFile(_ context.Context, st Step) error { return r.note("WaitForFile", st) }
func (r *recorder) WaitForTitleAfterTurnEnd(_ context.Context, st Step) error {
	return r.note("WaitForTitleAfterTurnEnd", st)
}
func (r *recorder) WaitForSubagentTurnEnd(_ context.Context, st Step) error {
	return r.note("WaitForSubagentTurnEnd", st)
}
func (r *recorder) LoadSession(_ context.Context, st Step) error { return r.note("LoadSession", st) }
func (r *recorder) SetMode(_ context.Context, st Step) error     { return r.note("SetMode", st) }
func (r *recorder) Cancel(_ context.Context, st Step) error      { return r.note("Cancel", st) }
func (r *recorder) ListSessions(_ context.Context, st Step) error {
	return r.note("ListSessions", st)
}
func (r *recorder) ResumeSession(_ context.Context, st Step) error {
	return r.note("ResumeSession", st)
}
func (r *recorder) DeleteSession(_ context.Context, st Step) error {
	return r.note("DeleteSession", st)
}
func (r *recorder) ForkSession(_ context.Context, st Step) error {
	return r.note("ForkSession", st)
}

func (r *recorder) PromptQueued(_ context.Context, st Step) error {
	return r.note("PromptQueued", st)
}
func (r *recorder) Steer(_ context.Context, st Step) error { return r.note("Steer", st) }
func (r *recorder) SetConfigOption(_ context.Context, st Step) error {
	return r.note("SetConfigOption", st)
}

var _ Driver = (*recorder)(nil)

// TestStepRun checks that every op of the vocabulary runs through the
// Driver method it names (or is refused as not driven), and what the
// vocabulary says about prompts.
func TestStepRun(t *testing.T) {
	want := map[Op]string{
		OpInitialize:                   "Initialize",
		OpNewSession:                   "NewSession",
		OpPrompt:                       "Prompt",
		OpPromptContent:                "Prompt",
		OpPromptAndCancel:              "PromptAndCancel",
		OpPromptAndWaitForAgentMessage: "PromptAndWaitForAgentMessage",
		OpWaitForTurnEnd:               "WaitForTurnEnd",
		OpWaitForTurnStart:             "WaitForTurnStart",
		OpWaitForFile:                  "WaitForFile",
		OpWaitForTitleAfterTurnEnd:     "WaitForTitleAfterTurnEnd",
		OpWaitForSubagentTurnEnd:       "WaitForSubagentTurnEnd",
		OpLoadSession:                  "LoadSession",
		OpSetMode:                      "SetMode",
		OpCancel:                       "Cancel",
		OpListSessions:                 "ListSessions",
		OpPromptQueued:                 "PromptQueued",
		OpSteer:                        "Steer",
		OpSetConfigOption:              "SetConfigOption",
		OpResumeSession:                "ResumeSession",
		OpDeleteSession:                "DeleteSession",
		OpForkSession:                  "ForkSession",
	}
	if len(Ops()) != len(want) {
		t.Errorf("Ops() has %d ops, the test knows %d", len(Ops()), len(want))
	}
	prompts := []Op{OpPrompt, OpPromptContent, OpPromptAndCancel, OpPromptAndWaitForAgentMessage, OpPromptQueued}
	for _, op := range Ops() {
		method, known := want[op]
		if !known {
			t.Errorf("op %q is not in the test", op)
			continue
		}
		st := Step{Op: op}
		r := &recorder{}
		err := st.Run(context.Background(), r)
		if method == "" {
			if !errors.Is(err, ErrNotDriven) || len(r.calls) != 0 || st.Driven() {
				t.Errorf("%s: Run = %v, calls %v, Driven %v; want ErrNotDriven", op, err, r.calls, st.Driven())
			}
		} else if err != nil || !slices.Equal(r.calls, []string{method + " " + string(op)}) || !st.Driven() {
			t.Errorf("%s: Run = %v, calls %v, Driven %v; want %s", op, err, r.calls, st.Driven(), method)
		}
		if st.IsPrompt() != slices.Contains(prompts, op) {
			t.Errorf("%s: IsPrompt = %v", op, st.IsPrompt())
		}
	}

	// A step built with the twin's name runs as its base op with
	// ExpectError; an unknown op is refused.
	r := &recorder{}
	if err := (Step{Op: "promptExpectError"}).Run(context.Background(), r); err != nil || !slices.Equal(r.calls, []string{"Prompt prompt expectError"}) {
		t.Errorf("twin: %v %v", err, r.calls)
	}
	if err := (Step{Op: "dance"}).Run(context.Background(), r); !errors.Is(err, ErrUnknownOp) || (Step{Op: "dance"}).Driven() {
		t.Errorf("unknown op: %v", err)
	}
}

// TestTwin checks that the corpus's promptExpectError loads as prompt with
// ExpectError and is written back in that form.
func TestTwin(t *testing.T) {
	in, err := ParseInput("input.json", []byte(`{"steps":[{"op":"promptExpectError","text":"x","session":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Step{Op: OpPrompt, Text: "x", Session: 1, ExpectError: true}); !reflect.DeepEqual(in.Steps[0], want) {
		t.Errorf("step = %+v, want %+v", in.Steps[0], want)
	}
	for _, st := range []Step{in.Steps[0], {Op: "promptExpectError", Text: "x", Session: 1}} {
		b, err := st.MarshalJSON()
		if want := `{"op":"prompt","text":"x","session":1,"expectError":true}`; err != nil || string(b) != want {
			t.Errorf("MarshalJSON(%+v) = %s, %v; want %s", st, b, err, want)
		}
	}
	in, err = ParseInput("input.json", []byte(`{"steps":[{"op":"newSessionExpectError","additionalDirectories":["/extra-dir"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Step{Op: OpNewSession, ExpectError: true, AdditionalDirectories: []string{"/extra-dir"}}); !reflect.DeepEqual(in.Steps[0], want) {
		t.Errorf("step = %+v, want %+v", in.Steps[0], want)
	}
	if b, err := in.Steps[0].MarshalJSON(); err != nil || string(b) != `{"op":"newSession","expectError":true,"additionalDirectories":["/extra-dir"]}` {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
	b, _ := Step{Op: OpLoadSession}.MarshalJSON()
	if string(b) != `{"op":"loadSession"}` {
		t.Errorf("expectError false is written: %s", b)
	}
}
