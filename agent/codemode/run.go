package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/reel-agent/reel/agent/codemode/tsstrip"
	"github.com/reel-agent/reel/agent/tools"
)

// The kinds of a failed run, as the reference names them (call-limit and
// memory are reel's own bounds).
const (
	KindException     = "exception"
	KindInvalidOutput = "invalid-output"
	KindOutputLimit   = "output-limit"
	KindTimeout       = "timeout"
	KindAbort         = "abort"
	KindCallLimit     = "call-limit"
	KindMemory        = "memory"
)

// failure is why a run failed.
type failure struct {
	kind, message string
}

// outcome is a finished run: what it printed, and its rendered return
// value or its failure.
type outcome struct {
	logs     []string
	rendered string
	failure  *failure
}

// noOutput is the text of a run that printed and returned nothing.
const noOutput = "(run_code completed with no output)"

// text is what the model reads of the run.
func (o outcome) text() string {
	logs := strings.Join(o.logs, "\n")
	if o.failure != nil {
		t := fmt.Sprintf("code run failed (%s): %s", o.failure.kind, o.failure.message)
		if len(o.logs) > 0 {
			t += "\nCaptured output:\n" + logs
		}
		return t
	}
	var parts []string
	for _, p := range []string{logs, o.rendered} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return noOutput
	}
	return strings.Join(parts, "\n")
}

// maxCallStack bounds the program's JavaScript call depth (a RangeError
// past it), so a runaway recursion is an exception, not a huge stack.
const maxCallStack = 4096

// watchEvery is how often the watchdog looks at the run's clocks and the
// heap.
const watchEvery = 5 * time.Millisecond

// runner is one run of one program.
type runner struct {
	vm     *goja.Runtime
	d      tools.Dispatcher
	callID string
	l      Limits
	ctx    context.Context // the run's: cancelled when it stops
	cancel context.CancelCauseFunc

	calls    int          // tool calls made (the JS goroutine only)
	inCall   atomic.Int64 // when the running tool call began (unix ns), 0 for none
	toolTime atomic.Int64 // ns spent in finished tool calls

	logs     []string
	logBytes int

	once    sync.Once
	stopped *failure // set once, by stop

	toolCallError goja.Constructor
	jsonParse     goja.Callable
}

// stop ends the run for f: the run's context is cancelled (a tool call in
// flight ends) and the program is interrupted. Only the first stop counts.
func (r *runner) stop(f failure) {
	r.once.Do(func() {
		r.stopped = &f
		r.cancel(errors.New(f.message))
		r.vm.Interrupt(f)
	})
}

// execute runs code, the body of an async function, with tools bound to d.
func execute(ctx context.Context, d tools.Dispatcher, callID, code string, l Limits) (out outcome) {
	// The program is TypeScript: its erasable syntax is blanked first
	// (positions kept); a program that cannot be stripped never runs.
	// A program that is not even well-formed tokens (an unterminated
	// string, an unmatched bracket) runs as written, so the engine's own
	// SyntaxError says what is wrong.
	stripped, err := tsstrip.Strip(code)
	var se *tsstrip.Error
	switch {
	case err == nil:
		code = stripped
	case !errors.As(err, &se) || !se.Unreadable:
		return outcome{failure: &failure{KindException, err.Error()}}
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &runner{vm: goja.New(), d: d, callID: callID, l: l, ctx: runCtx, cancel: cancel}
	r.vm.SetMaxCallStackSize(maxCallStack)
	if err := r.install(); err != nil {
		return outcome{failure: &failure{KindException, "setting up the program's runtime failed: " + err.Error()}}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.watch(ctx, done) })
	settle := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	defer func() {
		// A panic in the engine is this run's failure, not the process's;
		// the watchdog ends either way.
		if p := recover(); p != nil {
			settle()
			out = outcome{logs: r.logs, failure: &failure{KindException, fmt.Sprintf("the JavaScript engine failed: %v", p)}}
		}
	}()
	v, err := r.vm.RunString("(async function () {\n" + code + "\n})()")
	settle()
	if ctx.Err() != nil {
		// Cancelled: whatever the program did after (a tool call's
		// refusal, an exception), the run was aborted.
		r.stop(failure{KindAbort, fmt.Sprintf("the run was cancelled (%v)", context.Cause(ctx))})
	}
	return r.finish(v, err)
}

// finish turns what RunString returned into the run's outcome.
func (r *runner) finish(v goja.Value, err error) outcome {
	out := outcome{logs: r.logs}
	if r.stopped != nil {
		out.failure = r.stopped
		return out
	}
	var exc *goja.Exception
	var syn *goja.CompilerSyntaxError
	var deep *goja.StackOverflowError
	switch {
	case errors.As(err, &deep):
		out.failure = &failure{KindException, "RangeError: Maximum call stack size exceeded"}
		return out
	case errors.As(err, &syn):
		out.failure = &failure{KindException, "SyntaxError: " + syn.Error()}
		return out
	case errors.As(err, &exc):
		out.failure = &failure{KindException, r.describe(exc.Value())}
		return out
	case err != nil:
		out.failure = &failure{KindException, err.Error()}
		return out
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		out.failure = &failure{KindException, "the program is not the body of a function (it closed the function it is run in)"}
		return out
	}
	switch p.State() {
	case goja.PromiseStateRejected:
		out.failure = &failure{KindException, r.describe(p.Result())}
		return out
	case goja.PromiseStatePending:
		out.failure = &failure{KindException, "the program did not finish: it awaits a promise that nothing settles (there are no timers or events)"}
		return out
	}
	res := p.Result()
	if res == nil || goja.IsUndefined(res) {
		return out
	}
	budget := r.l.MaxOutput - r.logBytes
	if goja.IsString(res) {
		s := res.String()
		if len(s) > budget {
			out.failure = &failure{KindOutputLimit, fmt.Sprintf("outer output exceeded %d bytes", r.l.MaxOutput)}
			return out
		}
		out.rendered = s
		return out
	}
	enc, err := encode(r.vm, res, max(budget, 0))
	switch {
	case errors.Is(err, errTooLarge):
		out.failure = &failure{KindOutputLimit, fmt.Sprintf("outer output exceeded %d bytes", r.l.MaxOutput)}
		return out
	case err != nil:
		out.failure = &failure{KindInvalidOutput, "program completion must be lossless JSON: " + err.Error()}
		return out
	}
	out.rendered = render(enc)
	if len(out.rendered) > budget {
		out.failure = &failure{KindOutputLimit, fmt.Sprintf("outer output exceeded %d bytes", r.l.MaxOutput)}
		out.rendered = ""
	}
	return out
}

// describe words a thrown value or rejection reason: "Name: message" for
// an error, its string form for anything else.
func (r *runner) describe(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	var s string
	func() {
		defer func() {
			if recover() != nil {
				s = "a value that cannot be shown"
			}
		}()
		s = v.String()
	}()
	return s
}

// install sets up the program's globals: console, tools and ToolCallError.
func (r *runner) install() error {
	vm := r.vm
	if _, err := vm.RunString(`class ToolCallError extends Error {
  constructor(toolName, message) { super(message); this.name = "ToolCallError"; this.toolName = toolName; }
}`); err != nil {
		return err
	}
	ctor, ok := goja.AssertConstructor(vm.Get("ToolCallError"))
	if !ok {
		return errors.New("ToolCallError is not a constructor")
	}
	r.toolCallError = ctor
	if err := vm.Set("ToolCallError", vm.Get("ToolCallError")); err != nil {
		return err
	}
	parse, ok := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	if !ok {
		return errors.New("JSON.parse is not a function")
	}
	r.jsonParse = parse
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(level, r.log); err != nil {
			return err
		}
	}
	if err := vm.Set("console", console); err != nil {
		return err
	}
	ts := vm.CreateObject(nil)
	for _, name := range r.d.Names() {
		if name == ToolName {
			continue
		}
		if err := ts.Set(name, r.binding(name)); err != nil {
			return err
		}
	}
	return vm.Set("tools", ts)
}

// log is console.log (and its other levels): one line of output, the
// arguments joined by spaces, strings as they are.
func (r *runner) log(call goja.FunctionCall) goja.Value {
	parts := make([]string, len(call.Arguments))
	for i, a := range call.Arguments {
		parts[i] = r.format(a)
	}
	line := strings.Join(parts, " ")
	sep := 0
	if len(r.logs) > 0 {
		sep = 1
	}
	if r.logBytes+sep+len(line) > r.l.MaxOutput {
		if room := r.l.MaxOutput - r.logBytes - sep; room > 0 {
			r.logs = append(r.logs, strings.ToValidUTF8(line[:room], ""))
			r.logBytes = r.l.MaxOutput
		}
		r.stop(failure{KindOutputLimit, fmt.Sprintf("outer output exceeded %d bytes", r.l.MaxOutput)})
		return goja.Undefined()
	}
	r.logs = append(r.logs, line)
	r.logBytes += sep + len(line)
	return goja.Undefined()
}

// format shows one console.log argument: a string as it is, an error as
// "Name: message", a function by its name, JSON for what is JSON, else its
// string form.
func (r *runner) format(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if goja.IsString(v) {
		return v.String()
	}
	if obj, ok := v.(*goja.Object); ok {
		if _, fn := goja.AssertFunction(v); fn {
			if name := obj.Get("name"); name != nil && name.String() != "" {
				return "[Function: " + name.String() + "]"
			}
			return "[Function (anonymous)]"
		}
		if obj.ClassName() == "Error" {
			return r.describe(v)
		}
		if enc, err := encode(r.vm, v, r.l.MaxOutput+1); err == nil {
			return string(enc)
		}
	}
	return r.describe(v)
}

// binding is tools.NAME: it runs one call of the tool through the
// dispatcher, synchronously, and returns a promise of its value. A failed
// call rejects with a ToolCallError.
func (r *runner) binding(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		vm := r.vm
		promise, resolve, reject := vm.NewPromise()
		fail := func(msg string) goja.Value {
			e, err := r.toolCallError(nil, vm.ToValue(name), vm.ToValue(msg))
			if err != nil {
				_ = reject(err)
			} else {
				_ = reject(e)
			}
			return vm.ToValue(promise)
		}
		if r.ctx.Err() != nil {
			return fail(fmt.Sprintf("run_code run is over (%v); %s not dispatched", context.Cause(r.ctx), name))
		}
		if r.calls >= r.l.MaxCalls {
			r.stop(failure{KindCallLimit, fmt.Sprintf("tool-call budget exhausted (%d calls in one run)", r.l.MaxCalls)})
			return fail("the run's tool-call budget is exhausted")
		}
		arg := call.Argument(0)
		if goja.IsUndefined(arg) {
			return fail("tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)")
		}
		args, err := encode(vm, arg, r.l.MaxArgBytes)
		if err != nil {
			return fail("tool arguments must be lossless JSON: " + err.Error())
		}
		r.calls++
		sub := fmt.Sprintf("%s:code:%d", r.callID, r.calls)
		began := time.Now()
		r.inCall.Store(began.UnixNano())
		res := r.d.Dispatch(r.ctx, sub, name, args)
		r.toolTime.Add(int64(time.Since(began)))
		r.inCall.Store(0)
		if r.ctx.Err() != nil {
			return fail(fmt.Sprintf("run_code run is over (%v); %s result discarded", context.Cause(r.ctx), name))
		}
		if res.IsError {
			return fail(res.Text)
		}
		v, err := r.value(res)
		if err != nil {
			return fail("the result could not be handed to the program: " + err.Error())
		}
		_ = resolve(v)
		return vm.ToValue(promise)
	}
}

// value is what a tool call resolves to: the tool's typed value, else its
// text.
func (r *runner) value(res tools.Result) (goja.Value, error) {
	if len(res.Value) == 0 || !json.Valid(res.Value) {
		return r.vm.ToValue(res.Text), nil
	}
	return r.jsonParse(goja.Undefined(), r.vm.ToValue(string(res.Value)))
}

// watch stops the run when the session cancels it, when its busy time or
// wall time is over, or when the heap grew past the limit; it returns when
// done is closed.
func (r *runner) watch(parent context.Context, done <-chan struct{}) {
	began := time.Now()
	// runtime.ReadMemStats, not runtime/metrics: the latter's package
	// init would cost every reel process, code mode or not.
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := heap()
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-parent.Done():
			r.stop(failure{KindAbort, fmt.Sprintf("the run was cancelled (%v)", context.Cause(parent))})
			return
		case <-tick.C:
		}
		now := time.Now()
		wall := now.Sub(began)
		busy := wall - time.Duration(r.toolTime.Load())
		if at := r.inCall.Load(); at != 0 {
			busy -= now.Sub(time.Unix(0, at))
		}
		switch {
		case wall > r.l.Wall:
			r.stop(failure{KindTimeout, fmt.Sprintf("wall-clock ceiling reached (%dms)", r.l.Wall.Milliseconds())})
			return
		case busy > r.l.Compute:
			r.stop(failure{KindTimeout, fmt.Sprintf("compute budget exhausted (%dms busy)", r.l.Compute.Milliseconds())})
			return
		}
		if h := heap(); h > base && h-base > r.l.MaxHeap {
			r.stop(failure{KindMemory, fmt.Sprintf("the program's memory grew past %d MiB", r.l.MaxHeap>>20)})
			return
		}
	}
}
