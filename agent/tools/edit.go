package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// EditArgs are the arguments of the edit tool.
type EditArgs struct {
	// FilePath is the file to edit, relative to the cwd or absolute.
	FilePath string `json:"file_path"`
	// OldString is the exact text to replace.
	OldString string `json:"old_string"`
	// NewString is the replacement text (may be empty).
	NewString string `json:"new_string"`
	// ReplaceAll replaces every occurrence instead of exactly one.
	ReplaceAll bool `json:"replace_all,omitempty"`
}

// ParseEditArgs decodes the edit tool's arguments.
func ParseEditArgs(raw json.RawMessage) (EditArgs, error) {
	var a EditArgs
	o, err := decodeArgs("edit", raw)
	if err != nil {
		return a, err
	}
	if a.FilePath, err = o.str("file_path", true); err != nil {
		return a, err
	}
	if a.OldString, err = o.text("old_string"); err != nil {
		return a, err
	}
	if a.NewString, err = o.text("new_string"); err != nil {
		return a, err
	}
	if a.ReplaceAll, err = o.boolean("replace_all"); err != nil {
		return a, err
	}
	return a, nil
}

// Edit is the edit tool: it replaces an exact string in a file.
type Edit struct{}

var _ Tool = Edit{}

// Name returns "edit".
func (Edit) Name() string { return "edit" }

// Schema returns the edit tool's schema.
func (Edit) Schema() Schema {
	return Schema{
		Name: "edit",
		Description: "Replace exact text in an existing file. old_string must match the file exactly, including whitespace and indentation, " +
			"and must occur exactly once unless replace_all is true; include enough surrounding lines to make it unique. " +
			"Read the file first: edit refuses a file this session has not read (or written), or one that changed since. Use write to create a new file.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"file_path": {"type": "string", "description": "Path of the file to edit, absolute or relative to the working directory."},
				"old_string": {"type": "string", "description": "The exact text to replace."},
				"new_string": {"type": "string", "description": "The text to put in its place (must differ from old_string)."},
				"replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false)."}
			},
			"required": ["file_path", "old_string", "new_string"]
		}`),
	}
}

// describeEdit returns the title and locations of an edit call.
func describeEdit(a EditArgs, resolve func(string) string) (string, []Location) {
	return "Edit " + a.FilePath, []Location{{Path: resolve(a.FilePath)}}
}

// Run edits the file. When the Env's Guard confines writes, the file is
// resolved and opened beneath a writable root, and read, changed and
// written through that one descriptor, never through Env.FS (see the
// package documentation).
func (e Edit) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	return e.run(ctx, env, raw, resolveAuto)
}

// run is Run with the resolution of confined paths chosen by how.
func (Edit) run(ctx context.Context, env *Env, raw json.RawMessage, how resolveMode) (Result, error) {
	a, err := ParseEditArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeEdit(a, env.abs)
	p := locs[0].Path
	fail := func(text string) (Result, error) { return errorResult(title, KindEdit, locs, text), nil }
	switch {
	case a.OldString == "":
		return fail("old_string must not be empty; use write to create or replace a whole file")
	case a.OldString == a.NewString:
		return fail("old_string and new_string are identical; there is nothing to change")
	}
	// Read before edit: only a file the session saw may be edited, and
	// only while it is as it was seen.
	key := fileKey(p)
	obs, seen := env.observation(key)
	switch {
	case env.guarded() && !seen:
		return fail(notReadForEdit(p))
	case env.guarded() && !obs.Present:
		return fail(absentForEdit(p))
	}
	roots, err := env.writeRoots(p)
	if err != nil {
		return fail(err.Error())
	}
	// One view: a confined edit changes the file on disk, so the text the
	// model was shown must have come from there.
	if len(roots) > 0 && env.guarded() && obs.Buffer {
		return fail(viewChanged("edit", p))
	}
	view := env.unconfinedView(obs, seen)
	var n int
	change := func(old *string, f opened) (string, error) {
		if env.guarded() && !obs.matches(f.version) {
			return "", errors.New(changedSinceRead("edit", p))
		}
		if old == nil {
			return "", errors.New("file not found: " + p + " (use write to create it)")
		}
		n = strings.Count(*old, a.OldString)
		switch {
		case n == 0:
			return "", errors.New("old_string not found in " + p)
		case n > 1 && !a.ReplaceAll:
			return "", fmt.Errorf("old_string occurs %d times in %s; add surrounding context to make it unique, or set replace_all to replace every occurrence", n, p)
		}
		locs[0].Line = 1 + strings.Count((*old)[:strings.Index(*old, a.OldString)], "\n")
		if a.ReplaceAll {
			return strings.ReplaceAll(*old, a.OldString, a.NewString), nil
		}
		return strings.Replace(*old, a.OldString, a.NewString, 1), nil
	}
	var old *string
	var updated string
	var after FileVersion
	if len(roots) > 0 {
		old, updated, after, err = env.rewriteConfined(p, roots, false, how, change)
		if env.guarded() && errors.Is(err, fs.ErrNotExist) {
			return fail(changedSinceRead("edit", p))
		}
		if err != nil {
			return fail(err.Error())
		}
	} else {
		st := statPath(p)
		if env.guarded() && !st.exists && st.err == nil && obs.onDisk() {
			return fail(changedSinceRead("edit", p))
		}
		old, err = view.readExisting(ctx, p)
		if err != nil {
			if msg := fileFailure(p, "edit"); msg != "" {
				return fail(msg)
			}
			return fail(fmt.Sprintf("cannot read %s: %v", p, unwrapPathError(err)))
		}
		if updated, err = change(old, opened{version: st.version}); err != nil {
			return fail(err.Error())
		}
		if err := view.writeText(ctx, p, updated); err != nil {
			return fail(fmt.Sprintf("cannot write %s: %v", p, unwrapPathError(err)))
		}
		after = statPath(p).version
	}
	env.observe(fileKey(p), Observation{Present: true, Version: after, Buffer: len(roots) == 0 && view.FS != nil})
	plural := "occurrence"
	if n > 1 {
		plural = "occurrences"
	}
	return Result{
		Text: fmt.Sprintf("Edited %s: replaced %d %s", p, n, plural), Kind: KindEdit, Title: title, Locations: locs,
		Diff: &Diff{Path: p, OldText: old, NewText: updated},
	}, nil
}
