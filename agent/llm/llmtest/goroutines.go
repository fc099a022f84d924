package llmtest

import (
	"runtime"
	"strconv"
	"strings"
)

// goroutine is one entry of a full stack dump.
type goroutine struct {
	id    uint64
	state string // "running", "select", "IO wait", …
	stack string
}

// goroutines returns every goroutine of the process by id.
func goroutines() map[uint64]goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[uint64]goroutine{}
	for _, dump := range strings.Split(string(buf), "\n\n") {
		if g, ok := parseGoroutine(dump); ok {
			out[g.id] = g
		}
	}
	return out
}

// currentGoroutine returns the id of the calling goroutine.
func currentGoroutine() uint64 {
	buf := make([]byte, 128)
	g, _ := parseGoroutine(string(buf[:runtime.Stack(buf, false)]))
	return g.id
}

// parseGoroutine parses a dump that starts "goroutine 18 [chan receive, 2
// minutes]:".
func parseGoroutine(dump string) (goroutine, bool) {
	rest, ok := strings.CutPrefix(dump, "goroutine ")
	if !ok {
		return goroutine{}, false
	}
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return goroutine{}, false
	}
	id, err := strconv.ParseUint(rest[:sp], 10, 64)
	if err != nil {
		return goroutine{}, false
	}
	open := strings.IndexByte(rest, '[')
	if open < 0 {
		return goroutine{}, false
	}
	state := rest[open+1:]
	if end := strings.IndexAny(state, ",]"); end >= 0 {
		state = state[:end]
	}
	return goroutine{id: id, state: state, stack: dump}, true
}

// parked reports whether goroutine id exists and is parked: waiting in the
// scheduler (on a channel, a lock, the network, a timer or a system call)
// rather than running or ready to run.
func parked(id uint64) bool {
	g, ok := goroutines()[id]
	return ok && g.state != "running" && g.state != "runnable"
}
