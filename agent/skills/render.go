package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/reel-agent/reel/internal/jsrules"
	"github.com/reel-agent/reel/sessionlog"
)

// Model-facing text: the catalog message, its replacement, and a loaded
// skill. The first catalog and the loaded skill reproduce the reference
// agent's recording (corpus scenario skill-load) byte for byte.

// Message source kinds and forms.
const (
	// CatalogKind is the source kind of a catalog message.
	CatalogKind = "skill-catalog"
	// InvocationKind is the source kind of a skill a user invoked.
	InvocationKind = "skill-invocation"
)

const (
	catalogIntro = "A skill is a reusable set of task-specific instructions. The following skills are available in this session:"
	catalogUse   = "If the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. " +
		"Load all applicable skills, then follow their full instructions. " +
		"This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded."
	catalogDirect = "A user may also invoke a skill directly; its <skill_content> block then appears in this conversation. " +
		"Follow it, and do not call the `skill` tool again for that skill."

	updateIntro = "The skills available in this session changed. This list replaces every earlier list of available skills:"
	updateUse   = "Call the `skill` tool only with a name from this list. If the user names a listed skill, or the task clearly matches its description, load it with the `skill` tool before acting."
	updateNone  = "No skill is available through the `skill` tool now; do not use skill names from earlier lists."
	updateStill = "A user may still invoke a skill directly; its <skill_content> block then appears in this conversation. " +
		"Follow it, and do not call the `skill` tool for it."

	resourcesDir = "Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed."
)

// Entry is one line of a catalog: a name and its description as the
// catalog shows it (white space collapsed, capped; not yet escaped).
type Entry struct {
	Name        string
	Description string
}

// Entries returns the catalog's lines: one per model-visible skill, in
// name order.
func (c *Catalog) Entries() []Entry {
	vis := c.ModelVisible()
	out := make([]Entry, len(vis))
	for i, s := range vis {
		out[i] = Entry{Name: s.Name, Description: catalogDescription(s.Description, c.maxDesc)}
	}
	return out
}

// Message returns the text of the first catalog message of a session;
// ok is false when no skill is model-visible (then no catalog is
// injected). Its source is Source(false).
func (c *Catalog) Message() (text string, ok bool) {
	entries := c.Entries()
	if len(entries) == 0 {
		return "", false
	}
	return renderCatalog(catalogIntro, entries, catalogUse, catalogDirect), true
}

// Update returns the text of a replacement catalog, for a session whose
// visible catalog has another Digest (or was compacted away); it may list
// no skill, retiring the earlier names. Its source is Source(true).
func (c *Catalog) Update() string {
	entries := c.Entries()
	if len(entries) == 0 {
		return renderCatalog(updateIntro, nil, updateNone, updateStill)
	}
	return renderCatalog(updateIntro, entries, updateUse, catalogDirect)
}

func renderCatalog(intro string, entries []Entry, tail ...string) string {
	var b strings.Builder
	b.WriteString("<system-reminder>\n")
	b.WriteString(intro)
	b.WriteString("\n\n<available_skills>\n")
	for _, e := range entries {
		b.WriteString("- `")
		b.WriteString(e.Name)
		b.WriteString("`: ")
		b.WriteString(escapeText(e.Description))
		b.WriteByte('\n')
	}
	b.WriteString("</available_skills>\n\n")
	for _, t := range tail {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	b.WriteString("</system-reminder>")
	return b.String()
}

// Source returns the source of the catalog message:
// {"kind":"skill-catalog","form":"catalog","entries":[{"name":…,"description":…}…]},
// with "update":true before "entries" for a replacement.
func (c *Catalog) Source(update bool) sessionlog.MessageSource {
	str := func(v string) json.RawMessage { return sessionlog.AppendString(nil, v) }
	extra := []sessionlog.Member{{Key: "form", Value: str("catalog")}}
	if update {
		extra = append(extra, sessionlog.Member{Key: "update", Value: json.RawMessage("true")})
	}
	list := []byte{'['}
	for i, e := range c.Entries() {
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, `{"name":`...)
		list = sessionlog.AppendString(list, e.Name)
		list = append(list, `,"description":`...)
		list = sessionlog.AppendString(list, e.Description)
		list = append(list, '}')
	}
	list = append(list, ']')
	extra = append(extra, sessionlog.Member{Key: "entries", Value: list})
	return sessionlog.MessageSource{Kind: CatalogKind, Extra: extra}
}

// Digest identifies the catalog's entries: equal digests, equal catalog
// for the model. It is the reference's: SHA-256, in hex, of the entries'
// JSON pairs ["name","description"] joined by "\n".
func (c *Catalog) Digest() string { return digest(c.Entries()) }

func digest(entries []Entry) string {
	var b []byte
	for i, e := range entries {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, '[')
		b = sessionlog.AppendString(b, e.Name)
		b = append(b, ',')
		b = sessionlog.AppendString(b, e.Description)
		b = append(b, ']')
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SourceDigest returns the Digest of the catalog a logged message source
// records; ok is false for any other source, or a catalog source whose
// entries cannot be read (a foreign or damaged record, to be ignored).
func SourceDigest(src sessionlog.MessageSource) (string, bool) {
	if src.Kind != CatalogKind {
		return "", false
	}
	for _, m := range src.Extra {
		if m.Key != "entries" {
			continue
		}
		var raw []map[string]json.RawMessage
		if json.Unmarshal(m.Value, &raw) != nil {
			return "", false
		}
		entries := make([]Entry, len(raw))
		for i, r := range raw {
			var e Entry
			// A member that is absent or not a string fails to decode.
			if json.Unmarshal(r["name"], &e.Name) != nil || e.Name == "" || json.Unmarshal(r["description"], &e.Description) != nil {
				return "", false
			}
			entries[i] = e
		}
		return digest(entries), true
	}
	return "", false
}

// InvocationSource is the source of the message a user's invocation of
// the skill name enters: {"kind":"skill-invocation","name":…,"form":"instructions"}.
func InvocationSource(name string) sessionlog.MessageSource {
	return sessionlog.MessageSource{Kind: InvocationKind, Extra: []sessionlog.Member{
		{Key: "name", Value: sessionlog.AppendString(nil, name)},
		{Key: "form", Value: sessionlog.AppendString(nil, "instructions")},
	}}
}

// InvokedNames returns the skill names a user's prompt invokes, in order,
// each once: every white-space-delimited word "/NAME" whose NAME is a
// valid skill name, anywhere in the text ("/usr/bin" and "5/8" are not).
// Whether a name is a user-visible skill is for the caller to check.
func InvokedNames(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, jsrules.IsSpace) {
		if n, ok := strings.CutPrefix(w, "/"); ok && ValidName(n) && !contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Content renders a loaded skill as the model sees it (the skill tool's
// result, and what a user's invocation enters):
//
//	<skill_content name="NAME">
//	<skill_resources>
//	Base directory for this skill: DIR
//	Resolve relative paths … Load referenced resources only as needed.
//	</skill_resources>
//
//	<skill_instructions>
//	BODY
//	</skill_instructions>
//	</skill_content>
//
// The name is escaped as an attribute and the directory as text; the
// body, trusted local content, is verbatim.
func Content(s Skill, body string) string {
	var b strings.Builder
	b.WriteString(`<skill_content name="`)
	b.WriteString(escapeAttr(s.Name))
	b.WriteString("\">\n<skill_resources>\nBase directory for this skill: ")
	b.WriteString(escapeText(s.Dir))
	b.WriteByte('\n')
	b.WriteString(resourcesDir)
	b.WriteString("\n</skill_resources>\n\n<skill_instructions>\n")
	b.WriteString(body)
	b.WriteString("\n</skill_instructions>\n</skill_content>")
	return b.String()
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;")
)

// escapeText keeps text from opening or closing a tag of the frame.
func escapeText(s string) string { return textEscaper.Replace(s) }

// escapeAttr escapes an attribute value.
func escapeAttr(s string) string { return attrEscaper.Replace(s) }

// catalogDescription collapses white space runs to one space, trims, and
// cuts to max UTF-16 code units ending in "..." (a character the cut
// would split is left out whole).
func catalogDescription(s string, max int) string {
	s = strings.Join(strings.FieldsFunc(s, jsrules.IsSpace), " ")
	if jsrules.UTF16Len(s) <= max {
		return s
	}
	keep, units := 0, 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > max-3 {
			keep = i
			break
		}
		units += w
		keep = i + utf8.RuneLen(r)
	}
	return s[:keep] + "..."
}
