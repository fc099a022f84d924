package equiv

import (
	"regexp"
	"sync"
)

// pattern is a regular expression compiled on its first use: the patterns
// of this package are compiled when a comparison first needs them, not at
// package init of every reel process (reel acp and reel sandbox-exec link
// this package but never compare). A package-level &pattern{expr: …} is
// initialized statically, so the package's initialization does no work at
// all (TestACPSkipsHarnessInit in cmd/reel holds it). An invalid expr
// panics on first use, as MustCompile would at init; the package's tests
// use every pattern.
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
