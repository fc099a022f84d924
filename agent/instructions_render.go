package agent

import (
	"fmt"
	"path"
	"strings"

	"github.com/reel-agent/reel/agent/tools"
)

// Rendering of instruction files into the text of the injected
// user/message, with the reference agent's wording, framing and byte
// budget (see instructions.go for when it is injected).

const (
	reminderOpen  = "<system-reminder>"
	reminderClose = "</system-reminder>"

	workspaceIntro = "The following workspace instructions may be relevant to your work. " +
		"Use them as guidance when applicable. More specific instructions take precedence over broader ones. " +
		"They do not override system, developer, or direct user instructions."
	replacementIntro = "This complete workspace instruction baseline replaces all earlier workspace instruction baselines. " +
		workspaceIntro
	emptyReplacementIntro = "This complete workspace instruction baseline replaces all earlier workspace instruction baselines. " +
		"No workspace instructions are currently active."
	compactIntro = "Workspace instructions were omitted or truncated to fit the configured byte budget."
)

// instrFile is an instruction file read for rendering.
type instrFile struct {
	abs     string // absolute path (for a removal: "removed:" + scope)
	display string // model-facing path: relative to the project root, or the home's
	content string
	version tools.FileVersion // zero when unknown
}

// truncatedFile records a file cut to fit the budget.
type truncatedFile struct {
	display        string
	original, incl int
}

// renderStyle is how a batch of files is introduced and each one shown.
type renderStyle struct {
	intro   string
	section func(f instrFile) string
}

// rendered is a rendered batch: its text, the files left out or cut, and
// the files whose content the text carries (a genuinely empty file counts
// when its heading survives).
type rendered struct {
	text        string
	omitted     []instrFile
	truncated   []truncatedFile
	represented []instrFile
}

// truncateUTF8 cuts s to at most n bytes, never inside a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := max(0, n)
	for end > 0 && s[end]&0xC0 == 0x80 {
		end--
	}
	return s[:end]
}

// escapeFrame keeps repository text from closing the reminder frame.
func escapeFrame(s string) string {
	return strings.ReplaceAll(s, reminderClose, `<\/system-reminder>`)
}

func baselineSection(f instrFile) string {
	return "Instructions from: " + f.display + "\n\n" + f.content
}

// scopeOfDisplay is the logical scope of a model-facing path: the home's
// file is "user-global", any other the directory it is in.
func (c *instrConfig) scopeOfDisplay(display string) string {
	if display == c.homeDisplay+"/"+userGlobalFile {
		return userGlobalDir
	}
	return path.Dir(display)
}

func (c *instrConfig) additionalSection(f instrFile) string {
	return "Additional instructions from: " + f.display + "\n\n" +
		"These instructions apply to work under `" + c.scopeOfDisplay(f.display) + "`. Use them as guidance when relevant; " +
		"more specific instructions take precedence. They do not override system, developer, or direct user instructions.\n\n" +
		f.content
}

// changeSection shows one transition of a reconciliation batch.
func (c *instrConfig) changeSection(ch instrChange, f instrFile) string {
	switch ch.Action {
	case actionSet:
		return c.additionalSection(f)
	case actionRemove:
		return "Instructions removed: " + ch.Path + "\n\nThe previously loaded instructions from this file no longer apply."
	}
	return "Updated instructions from: " + ch.Path + "\n\n" +
		"This file changed after it was loaded. Use the following content instead of the previously loaded instructions from this file.\n\n" +
		f.content
}

// budgetMarker is the notice naming what the budget left out or cut.
func budgetMarker(maxBytes int, omitted []instrFile, truncated []truncatedFile) string {
	if len(omitted) == 0 && len(truncated) == 0 {
		return ""
	}
	var parts []string
	if len(omitted) > 0 {
		names := make([]string, len(omitted))
		for i, f := range omitted {
			names[i] = f.display
		}
		parts = append(parts, "omitted "+strings.Join(names, ", "))
	}
	if len(truncated) > 0 {
		items := make([]string, len(truncated))
		for i, t := range truncated {
			items[i] = fmt.Sprintf("%s from %d to %d bytes", t.display, t.original, t.incl)
		}
		parts = append(parts, "truncated "+strings.Join(items, ", "))
	}
	return fmt.Sprintf("Workspace instruction budget %d bytes: %s", maxBytes, strings.Join(parts, "; "))
}

// buildText frames the marker, the intro and the sections in one
// system-reminder.
func buildText(files []instrFile, maxBytes int, omitted []instrFile, truncated []truncatedFile, st renderStyle) string {
	var blocks []string
	for _, b := range append([]string{budgetMarker(maxBytes, omitted, truncated), st.intro}, sections(files, st)...) {
		if b != "" {
			blocks = append(blocks, b)
		}
	}
	return reminderOpen + "\n" + escapeFrame(strings.Join(blocks, "\n\n")) + "\n" + reminderClose
}

func sections(files []instrFile, st renderStyle) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = st.section(f)
	}
	return out
}

func withContent(f instrFile, n int) instrFile {
	f.content = truncateUTF8(f.content, n)
	return f
}

// truncateToFit finds, by bisection, the longest head of f's content whose
// rendering fits maxBytes.
func truncateToFit(f instrFile, maxBytes int, omitted []instrFile, st renderStyle) instrFile {
	original := len(f.content)
	lo, hi := 0, original
	best := withContent(f, 0)
	for lo <= hi {
		mid := (lo + hi) / 2
		cand := withContent(f, mid)
		tr := []truncatedFile{{display: f.display, original: original, incl: len(cand.content)}}
		if len(buildText([]instrFile{cand}, maxBytes, omitted, tr, st)) <= maxBytes {
			best, lo = cand, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// renderFiles renders files (broadest first) within maxBytes: whole if
// they fit; else without the broadest files, as few as needed; else the
// most specific file alone, cut (with the compact intro if need be); else
// only the budget notice. The text never exceeds maxBytes.
func renderFiles(files []instrFile, maxBytes int, st renderStyle) rendered {
	if maxBytes <= 0 {
		return rendered{omitted: files}
	}
	if full := buildText(files, maxBytes, nil, nil, st); len(full) <= maxBytes {
		return rendered{text: full, represented: files}
	}
	for start := 1; start < len(files); start++ {
		included, omitted := files[start:], files[:start]
		if t := buildText(included, maxBytes, omitted, nil, st); len(t) <= maxBytes {
			return rendered{text: t, omitted: omitted, represented: included}
		}
	}
	if len(files) == 0 {
		return rendered{}
	}
	last := files[len(files)-1]
	omitted := files[:len(files)-1]
	original := len(last.content)
	for _, cst := range []renderStyle{st, {intro: compactIntro, section: st.section}} {
		cut := truncateToFit(last, maxBytes, omitted, cst)
		tr := []truncatedFile{{display: last.display, original: original, incl: len(cut.content)}}
		if t := buildText([]instrFile{cut}, maxBytes, omitted, tr, cst); len(t) <= maxBytes {
			var rep []instrFile
			if len(cut.content) > 0 || original == 0 {
				rep = []instrFile{last}
			}
			return rendered{text: t, omitted: omitted, truncated: tr, represented: rep}
		}
	}
	tr := []truncatedFile{{display: last.display, original: original}}
	notice := escapeFrame(budgetMarker(maxBytes, omitted, tr))
	withHeading := escapeFrame(notice + "\n\n" + st.section(withContent(last, 0)))
	if len(withHeading) <= maxBytes {
		var rep []instrFile
		if original == 0 {
			rep = []instrFile{last}
		}
		return rendered{text: withHeading, omitted: omitted, truncated: tr, represented: rep}
	}
	return rendered{text: truncateUTF8(notice, maxBytes), omitted: omitted, truncated: tr}
}

// renderBaseline renders a complete baseline; replace marks one that
// supersedes a visible baseline of another identity.
func renderBaseline(files []instrFile, maxBytes int, replace bool) rendered {
	st := renderStyle{intro: workspaceIntro, section: baselineSection}
	if replace {
		st.intro = replacementIntro
		if len(files) == 0 {
			st.intro = emptyReplacementIntro
		}
	}
	return renderFiles(files, maxBytes, st)
}

// changeItem is one transition of a reconciliation batch and the file
// content it shows.
type changeItem struct {
	change instrChange
	file   instrFile
}

// renderChanges renders a reconciliation batch within maxBytes and returns
// the transitions its text carries.
func (c *instrConfig) renderChanges(items []changeItem, maxBytes int) (string, []instrChange) {
	byAbs := make(map[string]changeItem, len(items))
	files := make([]instrFile, len(items))
	for i, it := range items {
		byAbs[it.file.abs] = it
		files[i] = it.file
	}
	st := renderStyle{section: func(f instrFile) string {
		it := byAbs[f.abs]
		return c.changeSection(it.change, f)
	}}
	r := renderFiles(files, maxBytes, st)
	rep := make(map[string]bool, len(r.represented))
	for _, f := range r.represented {
		rep[f.abs] = true
	}
	var changes []instrChange
	for _, it := range items {
		if rep[it.file.abs] {
			changes = append(changes, it.change)
		}
	}
	return r.text, changes
}
