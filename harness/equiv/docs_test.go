package equiv

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// docPath is the user documentation of the harness's formats.
const docPath = "../../docs/scenarios.md"

// TestDocTables keeps docs/scenarios.md's copy of the tool and message
// tables equal to ToolRules and MessageRules; REEL_WRITE_DOC=1 rewrites it.
func TestDocTables(t *testing.T) {
	checkDocBlock(t, docPath, "equivalence tables", MarkdownTables())
}

// checkDocBlock compares the text between a doc's begin and end markers
// with want, or rewrites it under REEL_WRITE_DOC=1.
func checkDocBlock(t *testing.T, path, marker, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	begin, end := "<!-- "+marker+":", "<!-- end "+marker+" -->"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q markers", path, begin, end)
	}
	i += strings.Index(doc[i:], "-->\n") + len("-->\n")
	if doc[i:j] == want {
		return
	}
	if os.Getenv("REEL_WRITE_DOC") == "1" {
		if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s block is out of date (REEL_WRITE_DOC=1 go test -run %s rewrites it); want:\n%s", path, marker, t.Name(), want)
}

// TestSpillTexts holds the decimal texts the bash rule quotes to the
// constants the comparison uses.
func TestSpillTexts(t *testing.T) {
	for _, tc := range []struct {
		n    int
		text string
	}{{spillSlack, spillSlackText}, {spillEdge, spillEdgeText}} {
		if got := strconv.Itoa(tc.n); got != tc.text {
			t.Errorf("constant %d is quoted as %q", tc.n, tc.text)
		}
	}
}
