package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// WriteArgs are the arguments of the write tool.
type WriteArgs struct {
	// FilePath is the file to write, relative to the cwd or absolute.
	FilePath string `json:"file_path"`
	// Content is the complete new content (may be empty).
	Content string `json:"content"`
	// SandboxPermissions asks for a wider sandbox mode for this call; the
	// agent layer handles it.
	SandboxPermissions string `json:"sandbox_permissions,omitempty"`
	// Justification explains SandboxPermissions to the user.
	Justification string `json:"justification,omitempty"`
}

// ParseWriteArgs decodes the write tool's arguments.
func ParseWriteArgs(raw json.RawMessage) (WriteArgs, error) {
	var a WriteArgs
	o, err := decodeArgs("write", raw)
	if err != nil {
		return a, err
	}
	if a.FilePath, err = o.str("file_path", true); err != nil {
		return a, err
	}
	if a.Content, err = o.text("content"); err != nil {
		return a, err
	}
	if a.SandboxPermissions, err = o.str("sandbox_permissions", false); err != nil {
		return a, err
	}
	if a.Justification, err = o.str("justification", false); err != nil {
		return a, err
	}
	return a, nil
}

// Write is the write tool: it creates or replaces a whole file.
type Write struct {
	// Escalation adds sandbox_permissions and justification to the schema;
	// set it when a confining sandbox is active.
	Escalation bool
}

var _ Tool = Write{}

// Name returns "write".
func (Write) Name() string { return "write" }

// Schema returns the write tool's schema.
func (w Write) Schema() Schema {
	params := `{
		"type": "object",
		"properties": {
			"file_path": {"type": "string", "description": "Path of the file to write, absolute or relative to the working directory."},
			"content": {"type": "string", "description": "The complete new content of the file."}` +
		escalationProperties(w.Escalation) + `
		},
		"required": ["file_path", "content"]
	}`
	return Schema{
		Name: "write",
		Description: "Write a file, replacing its whole content or creating it (and missing parent directories). " +
			"Read an existing file first: write refuses to replace a file this session has not read, or one that changed since it was read. " +
			"Prefer edit for changing part of an existing file.",
		Parameters: compactJSON(params),
	}
}

// describeWrite returns the title and locations of a write call.
func describeWrite(a WriteArgs, resolve func(string) string) (string, []Location) {
	return "Write " + a.FilePath, []Location{{Path: resolve(a.FilePath)}}
}

// Run writes the file. When the Env's Guard confines writes, the file is
// resolved and opened beneath a writable root and written through that
// descriptor, never through Env.FS (see the package documentation).
func (w Write) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	return w.run(ctx, env, raw, resolveAuto)
}

// run is Run with the resolution of confined paths chosen by how.
func (Write) run(ctx context.Context, env *Env, raw json.RawMessage, how resolveMode) (Result, error) {
	a, err := ParseWriteArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeWrite(a, env.abs)
	p := locs[0].Path
	fail := func(text string) (Result, error) { return errorResult(title, KindEdit, locs, text), nil }
	roots, err := env.writeRoots(p)
	if err != nil {
		return fail(err.Error())
	}
	// Read before overwrite: a file the session saw may be replaced only
	// while it is as it was seen; any other write must create the file.
	key := fileKey(p)
	obs, seen := env.observation(key)
	replace := env.guarded() && seen && obs.Present
	// One view: a confined write replaces the file on disk, so the file
	// it replaces must have been seen there.
	if len(roots) > 0 && replace && obs.Buffer {
		return fail(viewChanged("write", p))
	}
	view := env.unconfinedView(obs, seen)
	var old *string
	var after FileVersion
	if len(roots) > 0 {
		old, _, after, err = env.rewriteConfined(p, roots, !replace || !obs.onDisk(), how, func(_ *string, f opened) (string, error) {
			switch {
			case replace && !obs.matches(f.version):
				return "", errors.New(changedSinceRead("write", p))
			case env.guarded() && !replace && !f.created:
				return "", errors.New(overwriteUnread(p))
			}
			return a.Content, nil
		})
		if replace && errors.Is(err, fs.ErrNotExist) {
			return fail(goneSinceRead(p))
		}
		if err != nil {
			return fail(err.Error())
		}
	} else {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return fail(p + " is a directory, not a file")
		}
		if env.guarded() {
			// Anything but a regular file, or a failing stat, is left to
			// the read below to report.
			switch st := statPath(p); {
			case st.err != nil || st.exists && !st.regular:
			case replace && !st.exists && obs.onDisk():
				return fail(goneSinceRead(p))
			case replace && !obs.matches(st.version):
				return fail(changedSinceRead("write", p))
			case !replace && st.exists:
				return fail(overwriteUnread(p))
			}
		}
		if old, err = view.readExisting(ctx, p); err != nil {
			return fail(fmt.Sprintf("cannot read the current content of %s: %v", p, unwrapPathError(err)))
		}
		if err := view.writeText(ctx, p, a.Content); err != nil {
			return fail(fmt.Sprintf("cannot write %s: %v", p, unwrapPathError(err)))
		}
		after = statPath(p).version
	}
	env.observe(fileKey(p), Observation{Present: true, Version: after, Buffer: len(roots) == 0 && view.FS != nil})
	text := fmt.Sprintf("Wrote %d bytes to %s", len(a.Content), p)
	if old == nil {
		text = fmt.Sprintf("Wrote %d bytes to %s (new file)", len(a.Content), p)
	}
	return Result{
		Text: text, Kind: KindEdit, Title: title, Locations: locs,
		Diff: &Diff{Path: p, OldText: old, NewText: a.Content},
	}, nil
}

// escalationProperties is the schema text of the escalation pair, led by a
// comma, or "" when escalation is off.
func escalationProperties(on bool) string {
	if !on {
		return ""
	}
	return `,
			"sandbox_permissions": {"type": "string", "enum": ["workspace-write", "danger-full-access"], "description": "Run this one call with a wider sandbox mode than the current one. Use only after the sandbox denied the call; the user is asked to approve."},
			"justification": {"type": "string", "description": "Why the wider sandbox mode is needed, shown to the user when asking for approval."}`
}
