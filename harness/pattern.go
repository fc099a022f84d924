package harness

import (
	"regexp"
	"sync"
)

// pattern is a regular expression compiled on its first use. A
// package-level &pattern{expr: …} is initialized statically: reel acp and
// reel sandbox-exec link this package but never run the harness, and its
// initialization does no work in them (TestACPSkipsHarnessInit in
// cmd/reel holds it).
type pattern struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// get returns the compiled pattern, compiling it on the first call.
func (p *pattern) get() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.expr) })
	return p.re
}
