package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/agent/llm/replay"
	"github.com/reel-agent/reel/internal/strictjson"
)

// Sentinel errors classify an *Error; test them with errors.Is. The JSON
// ones are strictjson's, shared with the replay override parser.
var (
	// ErrSyntax marks a file that is not well-formed JSON.
	ErrSyntax error = strictjson.ErrSyntax
	// ErrDuplicateField marks an object that names a key twice.
	ErrDuplicateField error = strictjson.ErrDuplicateField
	// ErrUnknownField marks a field the scenario vocabulary does not define,
	// or one that the surrounding op or kind does not accept.
	ErrUnknownField error = strictjson.ErrUnknownField
	// ErrMissingField marks a required field that is absent.
	ErrMissingField error = strictjson.ErrMissingField
	// ErrBadValue marks a field whose value has the wrong JSON type or an
	// invalid value (negative index, bad base64, …).
	ErrBadValue error = strictjson.ErrBadValue
	// ErrUnknownOp marks a step whose op the vocabulary does not define; it
	// is also an ErrBadValue.
	ErrUnknownOp error = unknownOp{}
	// ErrUnsafePath marks a path that is absolute or escapes its base
	// directory, including workspace symlinks that point outside it.
	ErrUnsafePath error = strictjson.ErrUnsafePath
	// ErrLayout marks a problem with the files of a scenario folder: a
	// missing input.json, a gap in session.N.jsonl numbering, a file where a
	// directory belongs, and so on.
	ErrLayout = errors.New("scenario: bad folder layout")
)

// unknownOp is ErrUnknownOp: an ErrBadValue with its own message (a
// constant value, so the package is initialized statically).
type unknownOp struct{}

func (unknownOp) Error() string { return string(strictjson.ErrBadValue) + ": unknown op" }
func (unknownOp) Unwrap() error { return strictjson.ErrBadValue }

// Error is a problem found while loading a scenario: the file (or folder
// entry), the JSON path of the offending value inside it (such as
// "steps[2].waitForFile.path"; "" for a problem of the file), its line and
// column, and what is wrong. Err is one of the sentinels above, possibly
// joined with a cause. It is strictjson's error, so a scenario's JSON files
// and its replay override report problems alike.
type Error = strictjson.Error

// File names inside a scenario folder.
const (
	// InputFile is the required client script.
	InputFile = "input.json"
	// SessionFile is the first session's recorded log.
	SessionFile = "session.jsonl"
	// OverrideFile is the optional replay override list.
	OverrideFile = "replay.override.json"
	// WorkspaceDir is the optional seed copied into the run's cwd.
	WorkspaceDir = "workspace"
	// WebDir is the optional folder of pages the harness serves on the
	// loopback port the scenario's prompts fetch from (web_fetch).
	WebDir = "web"
	// StandinFile is the conventional stand-in model script.
	StandinFile = "standin.json"
	// SeedFile is an optional log placed in the agent's state dir before
	// the run (a crashed or legacy session to load); it is session 0.
	SeedFile = "seed.jsonl"
)

// Scenario is a loaded scenario folder.
type Scenario struct {
	// Dir is the folder as passed to Load.
	Dir string
	// Name is the folder's base name.
	Name string
	// Input is the parsed input.json.
	Input *Input
	// Sessions lists the recorded logs in session order: Sessions[0] is
	// session.jsonl, Sessions[n] is session.n.jsonl. Empty when the folder
	// has no session.jsonl (numbering has no gaps; Load checks it).
	Sessions []string
	// Override is the parsed replay.override.json (replay.ParseOverride,
	// the format's one parser); nil when absent.
	Override *replay.Override
	// OverridePath is the path of replay.override.json, "" when absent.
	OverridePath string
	// Workspace is the path of the workspace/ seed, "" when absent.
	Workspace string
	// Web is the path of the web/ folder, "" when absent.
	Web string
	// Standin is the path of the stand-in model script: the one named by
	// Input.RecordedWith ("standin:FILE"), else standin.json if present,
	// else "".
	Standin string
	// Seed is the path of seed.jsonl, "" when absent.
	Seed string
	// Other lists, sorted, the names of entries Load does not interpret
	// (for example the corpus's stdout.expected.jsonl), so guards can
	// decide about them.
	Other []string
}

// HasSession reports whether the folder has a recorded session.jsonl.
func (s *Scenario) HasSession() bool { return len(s.Sessions) > 0 }

// Load reads and validates the scenario folder dir. Every validation error
// is an *Error naming the offending file (and field); I/O errors are
// wrapped with the path.
func Load(dir string) (*Scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc := &Scenario{Dir: dir, Name: filepath.Base(filepath.Clean(dir))}
	sessions := make(map[int]string)
	var input, standin string
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		switch {
		case name == InputFile:
			input = p
		case name == OverrideFile:
			sc.OverridePath = p
		case name == WorkspaceDir:
			sc.Workspace = p
		case name == WebDir:
			sc.Web = p
		case name == StandinFile:
			standin = p
		case name == SeedFile:
			sc.Seed = p
		case name == SessionFile:
			sessions[0] = p
		case strings.HasPrefix(name, "session.") && strings.HasSuffix(name, ".jsonl"):
			n, ok := sessionNumber(name)
			if !ok {
				return nil, &Error{File: p, Msg: "malformed session file name; want session.jsonl or session.N.jsonl with N = 1, 2, …", Err: ErrLayout}
			}
			sessions[n] = p
		default:
			sc.Other = append(sc.Other, name)
		}
	}
	slices.Sort(sc.Other)

	if input == "" {
		return nil, &Error{File: filepath.Join(dir, InputFile), Msg: "required file is missing", Err: ErrLayout}
	}
	for _, f := range []string{input, sc.OverridePath, standin, sc.Seed} {
		if err := mustBeFile(f); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(input)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if sc.Input, err = ParseInput(input, data); err != nil {
		return nil, err
	}

	if sc.Sessions, err = orderSessions(dir, sessions); err != nil {
		return nil, err
	}

	if sc.OverridePath != "" {
		data, err := os.ReadFile(sc.OverridePath)
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		if sc.Override, err = replay.ParseOverride(sc.OverridePath, data); err != nil {
			return nil, err
		}
	}

	if sc.Web != "" {
		if err := checkWorkspace(sc.Web); err != nil {
			return nil, err
		}
	}
	if sc.Workspace != "" {
		if err := checkWorkspace(sc.Workspace); err != nil {
			return nil, err
		}
	}

	sc.Standin = standin
	if script, ok := sc.Input.StandinScript(); ok {
		p := filepath.Join(dir, filepath.FromSlash(script))
		if _, err := os.Stat(p); err != nil {
			return nil, &Error{File: input, Path: "recordedWith", Msg: fmt.Sprintf("stand-in script %q: %v", script, err), Err: errors.Join(ErrLayout, err)}
		}
		if err := mustBeFile(p); err != nil {
			return nil, err
		}
		sc.Standin = p
	}
	return sc, nil
}

// sessionNumber parses N out of "session.N.jsonl" (N >= 1, no leading zero).
func sessionNumber(name string) (int, bool) {
	mid := strings.TrimSuffix(strings.TrimPrefix(name, "session."), ".jsonl")
	if mid == "" || mid[0] == '0' || strings.TrimLeft(mid, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(mid)
	return n, err == nil && n >= 1
}

// orderSessions turns the found session files into a gap-free list.
func orderSessions(dir string, found map[int]string) ([]string, error) {
	if len(found) == 0 {
		return nil, nil
	}
	keys := make([]int, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for i, k := range keys {
		if k != i {
			missing := SessionFile
			if i > 0 {
				missing = fmt.Sprintf("session.%d.jsonl", i)
			}
			return nil, &Error{File: found[k], Msg: fmt.Sprintf("%s is missing (session files must be numbered without gaps)", filepath.Join(dir, missing)), Err: ErrLayout}
		}
		if err := mustBeFile(found[k]); err != nil {
			return nil, err
		}
		out = append(out, found[k])
	}
	return out, nil
}

// mustBeFile refuses anything but a regular file (symlinks included);
// an empty path passes.
func mustBeFile(p string) error {
	if p == "" {
		return nil
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return &Error{File: p, Msg: fmt.Sprintf("must be a regular file, found %s", describeMode(fi.Mode())), Err: ErrLayout}
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "a special file"
	}
}

// checkWorkspace refuses a workspace that is not a real directory, special
// files inside it, and symlinks that point outside it.
func checkWorkspace(ws string) error {
	fi, err := os.Lstat(ws)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	if !fi.IsDir() {
		return &Error{File: ws, Msg: fmt.Sprintf("must be a directory, found %s", describeMode(fi.Mode())), Err: ErrLayout}
	}
	return filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scenario: %w", err)
		}
		switch t := d.Type(); {
		case t.IsDir(), t.IsRegular():
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("scenario: %w", err)
			}
			if filepath.IsAbs(target) {
				return &Error{File: p, Msg: fmt.Sprintf("symlink target %q is absolute; it must stay inside the workspace", target), Err: ErrUnsafePath}
			}
			rel, err := filepath.Rel(ws, filepath.Join(filepath.Dir(p), target))
			if err != nil || !filepath.IsLocal(rel) {
				return &Error{File: p, Msg: fmt.Sprintf("symlink target %q escapes the workspace", target), Err: ErrUnsafePath}
			}
			return nil
		default:
			return &Error{File: p, Msg: "special files are not allowed in a workspace", Err: ErrLayout}
		}
	})
}

// Discover returns, sorted, the scenario folders directly under root:
// the sub-directories that contain an input.json. Use Orphans for the
// sub-directories that do not.
func Discover(root string) ([]string, error) {
	found, _, err := survey(root)
	return found, err
}

// Orphans returns, sorted, the sub-directories directly under root that
// have no input.json — folders a guard should fail on.
func Orphans(root string) ([]string, error) {
	_, orphans, err := survey(root)
	return orphans, err
}

func survey(root string) (scenarios, orphans []string, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario: %w", err)
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		fi, err := os.Stat(p) // follow a symlinked folder; Load judges its content
		if err != nil {
			return nil, nil, fmt.Errorf("scenario: %w", err)
		}
		if !fi.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(p, InputFile)); err == nil {
			scenarios = append(scenarios, p)
		} else if errors.Is(err, fs.ErrNotExist) {
			orphans = append(orphans, p)
		} else {
			return nil, nil, fmt.Errorf("scenario: %w", err)
		}
	}
	return scenarios, orphans, nil
}
