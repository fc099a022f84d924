package equiv

import (
	"strings"
)

// MarkdownTables renders ToolRules and MessageRules as the Markdown tables
// docs/scenarios.md carries (a test keeps the two in step).
func MarkdownTables() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| tool | compared (when both calls succeed) | presentation normalized away |\n|---|---|---|\n")
	b.WriteString("| every tool | the outcome (`isError`) of every call; the wording of failures is not compared | — |\n")
	for _, r := range ToolRules {
		b.WriteString("| `" + r.Tool + "` | " + cell(r.Compared) + " | " + cell(r.Normalized) + " |\n")
	}
	b.WriteString("| any other tool | the outcome only; the scenario is reported partial | — |\n")
	b.WriteString("\n| message class | source | compared |\n|---|---|---|\n")
	for _, r := range MessageRules {
		b.WriteString("| " + r.Class + " | " + cell(r.Source) + " | " + cell(r.Compared) + " |\n")
	}
	return b.String()
}
