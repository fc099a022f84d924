// Package sessionlogtest is the conformance suite of sessionlog.Store, in
// the manner of testing/fstest: every backend runs it unchanged.
//
//   - TestStore checks the contract: create, append (contiguous seqs, in
//     order, a refused batch writes nothing), reload, the single-writer lock
//     (ErrInUse across Store instances), lazy List, repair committed by Open
//     exactly once and only computed by Inspect, legacy refusal, header
//     checks, bad session ids (sessionlog.ErrBadID from Create, Open and
//     Inspect, naming the id), cancellation, and a byte-exact round trip of
//     every log of the conformance corpus.
//   - TestCrash, with RunCrashChild called from the backend's TestMain,
//     re-executes the test binary as a writer process and kills it with
//     SIGKILL at random points; every synced event must survive and the
//     session must repair once and go on. The child protocol is one line
//     per Sync on stdout: "synced SEQ TYPE CRC32".
//   - BenchmarkAppend and BenchmarkLoad measure any backend the same way.
//   - Builder and Generate make valid events in the data shapes of the dsh
//     corpus.
//
// The package writes nothing of its own to disk: the backends' formats are
// documented in their packages.
package sessionlogtest
