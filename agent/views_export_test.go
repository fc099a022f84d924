package agent

import (
	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// LogOf is s's in-memory log, for tests that read it back.
func LogOf(s *Session) *sessionlog.Log { return s.log.Log() }

// HistoryOf is s's tools.History, what the session query tools read.
func HistoryOf(s *Session) tools.History { return history{s} }
