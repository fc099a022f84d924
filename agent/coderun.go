package agent

import (
	"context"
	"encoding/json"

	"github.com/reel-agent/reel/agent/codemode"
	"github.com/reel-agent/reel/agent/sandbox"
	"github.com/reel-agent/reel/agent/tools"
)

// codeDispatcher runs the tool calls of one run_code program (package
// codemode) through execTool, the path of a direct call, and logs each as
// the reference does (tool/code-dispatch-start, tool/code-dispatch).
type codeDispatcher struct {
	r    *run
	root string       // the run_code call's id
	mode sandbox.Mode // the mode run_code runs under: the tools a program sees
}

var _ tools.Dispatcher = codeDispatcher{}

// innerCallKey marks the context of a call a program made; its value is
// the id of the run_code call the program runs in.
type innerCallKey struct{}

// innerCall reports whether ctx is that of a call a program made, and the
// id of the run_code call it was made from.
func innerCall(ctx context.Context) (root string, ok bool) {
	root, ok = ctx.Value(innerCallKey{}).(string)
	return root, ok
}

// Names implements tools.Dispatcher.
func (d codeDispatcher) Names() []string { return d.r.s.toolsFor(d.mode).Names() }

// Dispatch implements tools.Dispatcher.
func (d codeDispatcher) Dispatch(ctx context.Context, sub, name string, args json.RawMessage) tools.Result {
	r, s := d.r, d.r.s
	wctx := context.WithoutCancel(ctx)
	start := codemode.DispatchStartData{RootCallID: d.root, ParentCallID: d.root, SubCallID: sub, Name: name, Arguments: args}
	if _, err := s.emit(wctx, r.e.now(), codemode.TypeDispatchStart, start, nil, nil); err != nil {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	if err := s.checkpoint(wctx); err != nil {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	call := ToolCall{ID: sub, Name: name, Arguments: args}
	res, ran := r.execTool(context.WithValue(ctx, innerCallKey{}, d.root), &call)
	if ran && ctx.Err() == nil {
		res = r.postTool(ctx, call, res)
	}
	done := codemode.DispatchData{DispatchStartData: start, IsError: res.IsError, Content: []codemode.TextPart{{Type: "text", Text: res.Text}}}
	if _, err := s.emit(wctx, r.e.now(), codemode.TypeDispatch, done, nil, nil); err != nil {
		return tools.Result{Text: err.Error(), IsError: true}
	}
	if ctx.Err() == nil {
		// What the next step's context messages need to know (an
		// instruction file found beside a file read).
		s.noteTouch(name, string(call.Arguments), res)
	}
	return res
}
