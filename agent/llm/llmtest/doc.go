// Package llmtest is the conformance suite of [llm.Stream], in the manner of
// testing/fstest and testing/slogtest: every stream implementation runs it
// unchanged.
//
//   - [TestStream] checks the contract documented on [llm.Stream]: the
//     chunks of a complete response are well formed and end with io.EOF,
//     which is sticky; once Close has been called Next returns
//     [llm.ErrClosed], however far the stream had got; Close is idempotent
//     and safe from any goroutine, also while Next is blocked, which it
//     unblocks; cancelling the stream's context unblocks a blocked Next
//     with an error satisfying errors.Is(err, context.Canceled); a failure
//     is sticky; and no goroutine the streams started outlives them.
//   - [CheckChunks] checks one complete response against the stream order
//     of the llm package documentation.
//
// The implementation under test provides openers ([Streams]): one for a
// complete response, and optionally one for a stream that hangs (for the
// checks of a blocked Next) and one for a stream that fails. Each check
// opens its own streams. For example, for a provider behind a local HTTP
// server:
//
//	func TestConformance(t *testing.T) {
//		llmtest.TestStream(t, llmtest.Streams{
//			Open: func(t testing.TB, ctx context.Context) llm.Stream { return open(t, ctx, okScript) },
//			Hang: func(t testing.TB, ctx context.Context) llm.Stream { return open(t, ctx, hangScript) },
//			Fail: func(t testing.TB, ctx context.Context) llm.Stream { return open(t, ctx, failScript) },
//			Settle: client.CloseIdleConnections,
//		})
//	}
//
// The suite waits without wall-clock thresholds: it tells a blocked Next
// from a slow one by looking at the goroutine running it (parked in the
// scheduler), and its only timeouts are generous guards that turn a hang
// into a failure. The leak check compares the process's goroutines before
// and after using streams, so TestStream must not run in parallel with
// other tests.
//
// The suite's own tests run it on deliberately broken streams and expect
// each to fail the check of the promise it breaks.
package llmtest
