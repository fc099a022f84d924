package logcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// expandDirs replaces each folder among files by the JSONL logs in it
// (sorted), so that verify of a state directory checks every log and the
// pairing of parents and subagents.
func expandDirs(files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || !fi.IsDir() {
			out = append(out, f)
			continue
		}
		var logs []string
		for _, pattern := range []string{"*" + jsonl.ExtRaw, "*" + jsonl.ExtZstd} {
			m, _ := filepath.Glob(filepath.Join(f, pattern))
			logs = append(logs, m...)
		}
		if len(logs) == 0 {
			return nil, fmt.Errorf("%s: a folder without .jsonl or .jsonl.zst logs", f)
		}
		slices.Sort(logs)
		out = append(out, logs...)
	}
	return out, nil
}

// pairLog is a log verify read: its path, header and events.
type pairLog struct {
	path   string
	header sessionlog.Header
	events []sessionlog.Event
}

// subCall is one delegation of a parent: a subagent or subagent_fork
// call, or an agent a workflow run started.
type subCall struct {
	seq      int
	callID   string
	fork     bool
	answered bool
}

// verifyPairing checks, among the JSONL logs verified together, both sides
// of every parent–subagent link: each child names a parent that is there,
// the parent made a subagent call for each of its children (the k-th
// child by creation order answers the k-th call: subagent_fork for a fork,
// subagent otherwise), each such call has its result, and a fork child's
// first seedLength events are the parent's, ending before the call. Log
// times are not used: recordings may have rewritten them. It prints one
// line per parent with children.
func verifyPairing(logs []pairLog, stdout io.Writer) error {
	// Logs are linked within their folder: a folder is one store (or
	// one fixture), and ids may repeat across folders.
	key := func(path, id string) string { return filepath.Dir(path) + "\x00" + id }
	byID := map[string]pairLog{}
	var order []string
	for _, l := range logs {
		k := key(l.path, l.header.ID)
		byID[k] = l
		order = append(order, k)
	}
	kids := map[string][]pairLog{}
	var errs []error
	for _, k := range order {
		lf := byID[k]
		c, ok := lf.header.Child()
		if !ok {
			continue
		}
		pk := key(lf.path, c.Parent)
		if _, there := byID[pk]; !there {
			fmt.Fprintf(stdout, "%s: subagent of %s, whose log was not verified with it (the link is not checked)\n", lf.path, c.Parent)
			continue
		}
		kids[pk] = append(kids[pk], lf)
	}
	for _, pk := range order {
		children := kids[pk]
		if len(children) == 0 {
			continue
		}
		parent := byID[pk]
		pid := parent.header.ID
		slices.SortFunc(children, func(a, b pairLog) int {
			if a.header.CreatedAt != b.header.CreatedAt {
				return int(a.header.CreatedAt - b.header.CreatedAt)
			}
			return strings.Compare(a.header.ID, b.header.ID)
		})
		calls := subagentCalls(parent.events)
		bad := len(errs)
		if len(children) > len(calls) {
			errs = append(errs, fmt.Errorf("%s: %s, but the parent %s made %s", parent.path, plural(len(children), "subagent log"), pid, plural(len(calls), "subagent call")))
		}
		for k, ch := range children[:min(len(children), len(calls))] {
			c, _ := ch.header.Child()
			call := calls[k]
			switch {
			case call.fork != (c.SeedLength > 0):
				errs = append(errs, fmt.Errorf("%s: subagent %d is %s, but the parent's call %d (%s, seq %d) is %s",
					ch.path, k+1, kindOf(c.SeedLength > 0), k+1, call.callID, call.seq, kindOf(call.fork)))
			case !call.answered:
				errs = append(errs, fmt.Errorf("%s: the parent's call %s (seq %d) of subagent %d has no tool/result", parent.path, call.callID, call.seq, k+1))
			case c.SeedLength > call.seq:
				errs = append(errs, fmt.Errorf("%s: the fork copied %d events, past its call at the parent's seq %d", ch.path, c.SeedLength, call.seq))
			case c.SeedLength > 0:
				if err := sameSeed(parent.events, ch.events, c.SeedLength); err != nil {
					errs = append(errs, fmt.Errorf("%s: the fork's seed: %w", ch.path, err))
				}
			}
		}
		if len(errs) == bad {
			fmt.Fprintf(stdout, "%s: pairing ok, %s\n", parent.path, plural(len(children), "subagent"))
		}
	}
	return errors.Join(errs...)
}

// kindOf names a child or call by whether it forks.
func kindOf(fork bool) string {
	if fork {
		return "a fork (subagent_fork)"
	}
	return "a fresh child (subagent)"
}

// subagentCalls are the delegations of a log, in order: its subagent and
// subagent_fork calls, with whether each has its result, and the agents
// a workflow run started (tool-workflow/agent-start, dsh's; answered with
// their run).
func subagentCalls(evs []sessionlog.Event) []subCall {
	var out []subCall
	at := map[string]int{}
	for i := range evs {
		e := &evs[i]
		switch e.Type {
		case "tool-workflow/agent-start":
			out = append(out, subCall{seq: e.Seq, callID: "workflow agent", answered: true})
		case sessionlog.TypeToolCall:
			d, err := sessionlog.DecodeData[sessionlog.ToolCallData](e)
			if err == nil && (d.Name == "subagent" || d.Name == "subagent_fork") {
				at[d.CallID] = len(out)
				out = append(out, subCall{seq: e.Seq, callID: d.CallID, fork: d.Name == "subagent_fork"})
			}
		case sessionlog.TypeToolResult:
			d, err := sessionlog.DecodeData[sessionlog.ToolResultData](e)
			if err != nil || len(d.Message.Content) == 0 {
				continue
			}
			if k, ok := at[d.Message.Content[0].ToolCallID]; ok {
				out[k].answered = true
			}
		}
	}
	return out
}

// sameSeed checks that the child's first n events are the parent's.
func sameSeed(parent, child []sessionlog.Event, n int) error {
	if n > len(parent) || n > len(child) {
		return fmt.Errorf("seedLength %d, but the parent has %d events and the child %d", n, len(parent), len(child))
	}
	for i := 0; i < n; i++ {
		p, c := &parent[i], &child[i]
		if p.Type != c.Type || p.Time != c.Time || string(p.Data) != string(c.Data) {
			return fmt.Errorf("event %d is %s, the parent's is %s", i, c.Type, p.Type)
		}
	}
	if n < len(child) && child[n].Type != sessionlog.TypeEndSeed {
		return fmt.Errorf("event %d after the seed is %s, not %s", n, child[n].Type, sessionlog.TypeEndSeed)
	}
	return nil
}
