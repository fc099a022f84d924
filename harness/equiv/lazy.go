package equiv

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp after: the patterns of this package are
// compiled when a comparison first needs them, not at package init of every
// reel process (reel acp and reel sandbox-exec link this package but never
// compare). An invalid expr panics on first use, as MustCompile would at
// init; the package's tests use every pattern.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
