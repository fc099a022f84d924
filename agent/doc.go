// Package agent is reel's ACP agent: it maps the Agent Client Protocol onto
// sessions whose every turn is written through the session log.
//
// A prompt opens turn/start. Each step writes step/start, the entered
// user/messages, the request/header the step owes (initial, resume, change,
// series — or none), request/context right before the model call, the
// stream as assistant/chunk events, assistant/message citing its chunks,
// tool/call then tool/result (citing the call) per tool call, and step/end.
// The turn ends with turn/end. The model request is built from the log, so
// nothing reaches a model unless it is on the log first; the log is made
// durable before each model call, before each tool runs, after each step
// and at turn end.
//
// stdout carries protocol frames only; diagnostics go to the injected
// *slog.Logger (stderr in reel acp).
package agent
