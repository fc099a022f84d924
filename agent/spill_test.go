package agent_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reel-agent/reel/agent"
)

// TestEngineBashInlineLimit: the engine gives bash the configured inline
// limit (here 800, the reference's setting in its bash-spill recording,
// whose model saw 605 bytes of output and the notice, 800 in all), and
// the default is the reference's 50000.
func TestEngineBashInlineLimit(t *testing.T) {
	cmd := `{"command":"printf 'SPILL_START-'; head -c 2000 /dev/zero | tr '\\0' x; printf -- '-SPILL_END'"}`
	full := "SPILL_START-" + strings.Repeat("x", 2000) + "-SPILL_END"
	notice := regexp.MustCompile(`\n\n\(Omitted (\d+) bytes\. Full formatted result stored at: [^ ]+\. Use read with offset/limit, or grep this path to search within it\.\)$`)
	for _, limit := range []int{800, 0} {
		te := newTestEngine(t, func(c *agent.Config) { c.MaxInlineBytes = limit }, toolEntry("c1", "bash", cmd), textEntry("DONE"))
		s, err := te.NewSession(t.Context(), te.dir)
		if err != nil {
			t.Fatal(err)
		}
		var result string
		for _, l := range prompt(t, s, "spill") {
			if r, ok := strings.CutPrefix(l, "end c1 error=false "); ok {
				result = r
			}
		}
		switch {
		case limit == 0 && result != full:
			t.Errorf("default limit: result %q…, want the whole output", result[:min(80, len(result))])
		case limit == 800 && !notice.MatchString(result):
			t.Errorf("limit 800: result %q, want the head and tail and the notice", result)
		case limit == 800:
			// The notice's length depends on the spill path; what is left
			// of the 800 bytes is the head and tail.
			body := notice.ReplaceAllString(result, "")
			omitted, _ := strconv.Atoi(notice.FindStringSubmatch(result)[1])
			if len(result) != 800 || !strings.HasPrefix(body, "SPILL_START-xxx") || !strings.HasSuffix(body, "xxx-SPILL_END") || len(body) != len(full)-omitted {
				t.Errorf("limit 800: %d bytes, body of %d bytes %q…", len(result), len(body), body[:min(40, len(body))])
			}
		}
	}
}
