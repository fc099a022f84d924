// Package rpcclient is the snapshot harness's independent ACP client: a
// JSON-RPC 2.0 peer over newline-delimited JSON, built on
// github.com/sourcegraph/jsonrpc2 so that the harness shares no protocol
// code with the agent under test (it never imports the ACP SDK).
//
// # Wire
//
// The client reads the agent's stdout as a sequence of JSON objects and
// writes one JSON object per line, each terminated by "\n", to its stdin.
// Request ids are the integers 1, 2, … in call order. Every byte read from
// the agent is copied, before decoding and in order, to Options.Tee: that
// copy is the raw wire transcript. A frame that is not a JSON-RPC message
// ends the connection; the read error becomes the cause reported by Err and
// by the calls it cut short (all wrap ErrClosed).
//
// # Inbound traffic
//
// Notifications (session/update and any other) are recorded in arrival
// order on the reading goroutine, so a response is only delivered after
// every notification the agent sent before it. WaitFor blocks, without
// polling, until a recorded notification matches a predicate.
//
// Agent→client requests are served on their own goroutines:
// session/request_permission by Options.Permission (AnswerQueue implements
// the harness's FIFO-by-kind answers; no handler answers "cancelled"),
// fs/read_text_file and fs/write_text_file by Options.FS, and every other
// method with a method-not-found error (-32601).
//
// # Lifetime
//
// New starts reading at once. Done is closed when the connection has ended
// — the agent closed its stdout, sent garbage, ctx was cancelled or Close
// was called — and by then every frame read has been handled and teed.
package rpcclient
