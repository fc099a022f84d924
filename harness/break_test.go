package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reel-agent/reel/harness"
	"github.com/reel-agent/reel/internal/corpustest"
)

// The corpus check's self-test: reel built with -tags reelbreak is wrong
// on purpose in the way REEL_BREAK names (agent/break_on.go), and the
// corpus check must fail it. The short form runs each variant on a few
// corpus scenarios that exercise what it breaks; REEL_SELFTEST=full runs
// every variant on the whole corpus and logs which scenarios catch it:
//
//	REEL_SELFTEST=full go test ./harness -run TestBrokenAgents -v

// breakHooks are the calls agent/toolrun.go must make for a -tags
// reelbreak build to break anything (see agent/break_off.go).
var breakHooks = []string{"breakResult(", "breakMode(", "breakSkip(", "breakApprove()"}

// breakVariants are the broken agents and, for the short form, scenarios
// each must fail with the check that must catch it.
var breakVariants = []struct {
	kind      string
	scenarios []string
	check     string // a check name the failure must come from
}{
	{"garbage", []string{"tool-call-turn", "fs-read", "todo-write", "web-fetch", "skill-load"}, "tool result"},
	{"norun", []string{"bash-tool-turn", "fs-read", "fs-write"}, "tool result"},
	{"shift", []string{"tool-call-turn", "fs-delete-recreate"}, "tool result"},
	{"autoapprove", []string{"escalation-approved", "fs-escalation-approved"}, "permission requests"},
	{"nosandbox", []string{"escalation-approved", "fs-escalation-approved"}, "permission requests"},
	{"nohooks", []string{"hook-cc-pretool-deny", "hook-cc-stop-continue", "hook-codex-posttool-context"}, "hooks"},
	{"notitles", []string{"text-turn", "fs-read"}, "titles"},
	{"noimages", []string{"inline-image-prompt"}, "messages"},
	{"nosubagents", []string{"subagent-multi", "subagent-fork-in-process"}, "tool result"},
	{"noclosing", []string{"subagent-continuable-inheritance", "subagent-report"}, "messages"},
}

// unwiredHooks reports the hook calls agent/toolrun.go lacks.
func unwiredHooks(t *testing.T) []string {
	src, err := os.ReadFile(filepath.Join("..", "agent", "toolrun.go"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, h := range breakHooks {
		if !strings.Contains(string(src), h) {
			missing = append(missing, h)
		}
	}
	return missing
}

// TestBrokenAgents runs each broken variant and expects the corpus check
// to fail it.
func TestBrokenAgents(t *testing.T) {
	t.Parallel() // builds its own reels and runs them in its own trees
	corpus := corpustest.Dir(t)
	if missing := unwiredHooks(t); len(missing) > 0 {
		t.Skipf("agent/toolrun.go does not call the break hooks %v yet, so a -tags reelbreak build breaks nothing (see agent/break_off.go)", missing)
	}
	exe := reelBreakExe(t)
	full := os.Getenv("REEL_SELFTEST") == "full"
	var union []string
	for _, v := range breakVariants {
		union = append(union, v.scenarios...)
	}
	// The control: the same binary without REEL_BREAK. It must pass the
	// short form's scenarios, so what fails below fails because of the
	// break — and the check does not fail reel for presentation it
	// normalizes. In the full form a variant is caught by a scenario only
	// where the control passes.
	var controlNames []string
	if !full {
		controlNames = union
	}
	control := map[string]string{}
	t.Run("control", func(t *testing.T) {
		for _, r := range runCorpus(t, corpus, exe, "", controlNames) {
			control[r.Name] = r.Verdict
			if !full && r.Verdict != harness.VerdictPass {
				t.Errorf("%s without REEL_BREAK: %s\n%s", r.Name, r.Verdict, strings.Join(append(r.Failures, r.Unchecked...), "\n"))
			}
		}
	})
	for _, v := range breakVariants {
		t.Run(v.kind, func(t *testing.T) {
			names := v.scenarios
			if full {
				names = nil
			}
			caught := 0
			for _, r := range runCorpus(t, corpus, exe, v.kind, names) {
				switch {
				case control[r.Name] != harness.VerdictPass:
					if full && control[r.Name] != harness.VerdictIneligible {
						t.Logf("REEL_BREAK=%s: %s proves nothing (%s without the break)", v.kind, r.Name, control[r.Name])
					}
				case r.Verdict == harness.VerdictFail:
					caught++
					t.Logf("REEL_BREAK=%s is caught by %s: %s", v.kind, r.Name, firstOf(r.Failures))
					if !full && !hasCheck(r.Failures, v.check) {
						t.Errorf("REEL_BREAK=%s: %s fails, but not by the %q check:\n%s", v.kind, r.Name, v.check, strings.Join(r.Failures, "\n"))
					}
				case full:
					t.Logf("REEL_BREAK=%s is not caught by %s (%s)", v.kind, r.Name, r.Verdict)
				default:
					t.Errorf("REEL_BREAK=%s: %s is %s, want FAIL", v.kind, r.Name, r.Verdict)
				}
			}
			if caught == 0 {
				t.Errorf("REEL_BREAK=%s: no corpus scenario catches it", v.kind)
			}
		})
	}
}

// runCorpus runs the named corpus scenarios (nil: all) with REEL_BREAK set
// to kind ("" unset).
func runCorpus(t *testing.T, corpus, exe, kind string, names []string) []harness.CorpusResult {
	t.Helper()
	o := harness.CorpusOptions{Exe: exe, Jobs: 4}
	if kind != "" {
		o.Env = []string{"REEL_BREAK=" + kind}
	}
	if names != nil {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = regexp.QuoteMeta(n)
		}
		o.Filter = regexp.MustCompile("^(" + strings.Join(quoted, "|") + ")$")
	}
	results, err := harness.RunCorpusDir(context.Background(), corpus, o)
	if err != nil {
		t.Fatal(err)
	}
	if names != nil && len(results) != len(dedupe(names)) {
		t.Fatalf("ran %d corpus scenarios, want %d (%v)", len(results), len(dedupe(names)), names)
	}
	return results
}

func dedupe(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

func hasCheck(failures []string, check string) bool {
	for _, f := range failures {
		if strings.HasPrefix(f, check) {
			return true
		}
	}
	return false
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	l, _, _ := strings.Cut(s[0], "\n")
	return l
}
