// Package codemode is reel's run_code tool ("code mode"): the model writes
// the body of an async TypeScript function that calls the session's tools
// as functions (await tools.bash({...})) and gets one curated result back —
// what the program printed with console.log and what it returned.
//
// When code mode is on, run_code is the only tool the model is offered
// (WireSchemas); the other tools are declared to it as TypeScript in the
// system prompt (PromptSection), and a direct call of any of them is
// refused (Admit). A program's tool calls go through the engine's own path
// for a direct call (tools.Dispatcher): the one strict parse of the tool's
// arguments, the PreToolUse and PostToolUse hooks, the sandbox mode and
// escalation approvals, the contained run and the log — each call is
// logged as a tool/code-dispatch-start and a tool/code-dispatch event
// (DispatchStartData, DispatchData), as the reference agent logs them.
//
// Programs run in process in a fresh goja runtime (a pure-Go ECMAScript
// engine: no file system, network, timers or modules), created only when
// run_code is called. A run is bounded (Limits): its busy time and wall
// time, the live heap it may grow, the tool calls it may make, the bytes
// of output it may print and return, and the size of each call's
// arguments; the session's cancel interrupts it. A run that breaks a bound
// fails with a "code run failed (KIND): MESSAGE" result and the output it
// printed before.
//
// The code is TypeScript, erasable syntax only, as the reference's: package
// tsstrip blanks its type syntax (keeping every position) before goja runs
// it, and refuses enum, namespace and the other non-erasable syntax as the
// run's exception, without running anything.
package codemode
