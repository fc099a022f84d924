package jsonl

import "github.com/reel-agent/reel/sessionlog/internal/faultfile"

// InjectFaults makes s open log files for appending through o, whose
// injector then decides which writes, fsyncs, truncations and closes fail.
func InjectFaults(s *Store, o *faultfile.Opener) {
	o.Open = func(path string) (faultfile.File, error) { return openAppend(path) }
	s.openFile = func(path string) (logFile, error) { return o.OpenFile(path) }
}
