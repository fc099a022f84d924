package scenario

import (
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

// TestDocOpTable keeps docs/scenarios.md's table of ops, with each op's
// required and optional fields, equal to opTable, the table ParseInput
// dispatches on; and its table of top-level fields equal to inputFields.
func TestDocOpTable(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("the scenario format documentation is missing: %v", err)
	}
	doc := string(raw)

	table := opTable()
	documented := map[Op]bool{}
	for _, row := range docTable(t, doc, "ops table", "end ops table") {
		if len(row) != 4 {
			t.Errorf("%s: ops table row %q: want 4 cells (op, required, optional, what), got %d", docPath, row, len(row))
			continue
		}
		op := Op(names(row[0])[0])
		if documented[op] {
			t.Errorf("%s: op %q is listed twice", docPath, op)
		}
		documented[op] = true
		fs, ok := table[op]
		if !ok {
			t.Errorf("%s lists op %q, which the loader does not accept", docPath, op)
			continue
		}
		wantRequired := slices.Sorted(slices.Values(fs.required))
		var wantOptional []string
		for _, f := range fs.allowed {
			if f != fOp && !slices.Contains(fs.required, f) {
				wantOptional = append(wantOptional, f)
			}
		}
		slices.Sort(wantOptional)
		if got := names(row[1]); !slices.Equal(got, wantRequired) {
			t.Errorf("%s: op %q: required fields %q, the loader requires %q", docPath, op, got, wantRequired)
		}
		if got := names(row[2]); !slices.Equal(got, wantOptional) {
			t.Errorf("%s: op %q: optional fields %q, the loader also accepts %q", docPath, op, got, wantOptional)
		}
	}
	for op := range table {
		if !documented[op] {
			t.Errorf("the loader accepts op %q, which %s does not list", op, docPath)
		}
	}
	// Ops, the exported vocabulary, is the same set.
	ops := Ops()
	if len(ops) != len(table) {
		t.Errorf("Ops() has %d ops, the loader's table %d", len(ops), len(table))
	}
	for _, op := range ops {
		if _, ok := table[op]; !ok {
			t.Errorf("Ops() lists %q, which the loader does not accept", op)
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
