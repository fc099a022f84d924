package scenario

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// docPath is the user documentation of the scenario formats.
const docPath = "../../docs/scenarios.md"

// docTable returns the rows of the markdown table between the HTML comment
// starting with begin and the one starting with end: each row's cells,
// trimmed, header and separator rows dropped.
func docTable(t *testing.T, doc, begin, end string) [][]string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- "+begin)
	if !ok {
		t.Fatalf("%s: no %q marker", docPath, "<!-- "+begin)
	}
	body, _, ok := strings.Cut(rest, "<!-- "+end)
	if !ok {
		t.Fatalf("%s: no %q marker after %q", docPath, "<!-- "+end, begin)
	}
	var rows [][]string
	for i, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if i == 0 || !strings.HasPrefix(line, "|") {
			continue // the rest of the marker comment, blank lines
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		if strings.Trim(cells[0], "-") == "" || !strings.HasPrefix(cells[0], "`") {
			continue // separator or header
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: the %q table has no rows", docPath, begin)
	}
	return rows
}

// names parses a cell such as "`text`, `waitForFile`" or "—" into a sorted
// list of names.
func names(cell string) []string {
	var out []string
	for _, part := range strings.Split(cell, ",") {
		part = strings.TrimSpace(part)
		if part == "—" || part == "" {
			continue
		}
		name, _, _ := strings.Cut(strings.Trim(part, "`"), "`")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// notDriven is appended to the description of an op reel's harness does
// not drive.
const notDriven = " (the corpus's vocabulary; reel's harness does not drive it, so a corpus scenario using it is ineligible)"

// opTableMarkdown renders the table of ops from the vocabulary: each op,
// its required and optional fields, what the client does.
func opTableMarkdown() string {
	list := func(fields []string) string {
		if len(fields) == 0 {
			return "—"
		}
		var quoted []string
		for _, f := range fields {
			quoted = append(quoted, "`"+f+"`")
		}
		return strings.Join(quoted, ", ")
	}
	var b strings.Builder
	b.WriteString("| op | required | optional | what the client does |\n|---|---|---|---|\n")
	for _, s := range vocabulary {
		doc := s.doc
		if s.twin != "" {
			doc += "; `" + string(s.twin) + "` (the corpus's name) means this op with `expectError: true`"
		}
		if s.run == nil {
			doc += notDriven
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.op, list(s.required), list(s.optional), doc)
	}
	return b.String()
}

// TestDocOpTable keeps docs/scenarios.md's table of ops equal to the one
// generated from the vocabulary (REEL_WRITE_DOC=1 rewrites it), and its
// table of top-level fields equal to inputFields.
func TestDocOpTable(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("the scenario format documentation is missing: %v", err)
	}
	doc := string(raw)

	const begin, end = "<!-- ops table", "<!-- end ops table -->"
	head, rest, ok := strings.Cut(doc, begin)
	if !ok {
		t.Fatalf("%s: no %q marker", docPath, begin)
	}
	marker, rest, _ := strings.Cut(rest, "\n")
	_, tail, ok := strings.Cut(rest, end)
	if !ok {
		t.Fatalf("%s: no %q marker after %q", docPath, end, begin)
	}
	want := head + begin + marker + "\n" + opTableMarkdown() + end + tail
	if os.Getenv("REEL_WRITE_DOC") == "1" {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if doc != want {
		t.Errorf("%s: the table of ops is not the vocabulary's (rewrite it with REEL_WRITE_DOC=1 go test -run TestDocOpTable ./harness/scenario/); want:\n%s", docPath, opTableMarkdown())
	}

	// The generated rows say what the loader accepts.
	rows := docTable(t, want, "ops table", "end ops table")
	if len(rows) != len(Ops()) {
		t.Errorf("%d rows for %d ops", len(rows), len(Ops()))
	}
	for i, row := range rows {
		spec, twin, ok := lookup(Op(names(row[0])[0]))
		if !ok || twin || spec.op != Ops()[i] {
			t.Errorf("row %d %q is not op %q", i, row[0], Ops()[i])
			continue
		}
		in := fmt.Sprintf(`{"steps":[{"op":%q}]}`, spec.op)
		_, err := ParseInput("doc.json", []byte(in))
		if req := names(row[1]); len(req) == 0 && err != nil {
			t.Errorf("op %s documents no required field, but %s: %v", spec.op, in, err)
		} else if len(req) > 0 && !errors.Is(err, ErrMissingField) {
			t.Errorf("op %s documents required fields %q, but %s gives %v", spec.op, req, in, err)
		}
	}

	var fields []string
	for _, row := range docTable(t, doc, "input fields", "end input fields") {
		name := names(row[0])[0]
		fields = append(fields, name)
		if required := row[1] == "yes"; required != (name == "steps") {
			t.Errorf("%s: input field %q documented required=%v; only steps is required", docPath, name, required)
		}
	}
	slices.Sort(fields)
	if want := slices.Sorted(slices.Values(inputFields())); !slices.Equal(fields, want) {
		t.Errorf("%s documents input fields %q, the loader accepts %q", docPath, fields, want)
	}
}
