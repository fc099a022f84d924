package acpcmd_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// surfaceProc starts reel acp on state with the in-process stand-in model
// answering texts in order.
func surfaceProc(t *testing.T, dir, state string, extra []string, texts ...string) *proc {
	t.Helper()
	if len(texts) == 0 {
		texts = []string{"unused"}
	}
	var rs []map[string]any
	for _, s := range texts {
		rs = append(rs, map[string]any{"text": s})
	}
	b, err := json.Marshal(map[string]any{"responses": rs})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "standin.json")
	if err := os.WriteFile(script, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"acp", "--state-dir", state, "--standin", script, "--no-title-model"}, extra...)
	return startProc(t, dir, baseEnv(t), args...)
}

// callErr sends a request that must fail and returns its error code and
// message (with its data).
func (p *proc) callErr(method string, params any) (int, string) {
	p.t.Helper()
	resp, _ := p.await(p.request(method, params))
	if resp.Error == nil {
		p.t.Fatalf("%s %v: answered %s, want an error", method, params, resp.raw)
	}
	return resp.Error.Code, resp.Error.Message + " " + string(resp.Error.Data)
}

// TestCommandsFollowTheSessionAnswer: the available_commands_update of a
// session comes right after the answer that gives the client its id
// (session/new, session/load, session/resume), never before it.
func TestCommandsFollowTheSessionAnswer(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	p1 := surfaceProc(t, dir, state, nil, "OK")
	p1.initialize()
	id := p1.request("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	resp, before := p1.await(id)
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.SessionID == "" {
		t.Fatalf("session/new answered %s", resp.raw)
	}
	sid := r.SessionID
	checkFollows := func(p *proc, method string, before []frame) {
		t.Helper()
		for _, f := range before {
			if _, kind, _ := f.update(); kind == "available_commands_update" {
				t.Errorf("%s: available_commands_update before the answer: %s", method, f.raw)
			}
		}
		// Another request after the answer: its answer bounds the wait.
		_, after := p.await(p.request("session/list", map[string]any{}))
		if len(after) == 0 {
			t.Errorf("%s: no frame between its answer and the next answer, want the available_commands_update of %s", method, sid)
		} else if s, kind, _ := after[0].update(); kind != "available_commands_update" || s != sid {
			t.Errorf("%s: the frame after the answer is %s, want the available_commands_update of %s", method, after[0].raw, sid)
		}
	}
	checkFollows(p1, "session/new", before)
	if stop, _ := p1.prompt(sid, "hello"); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p1.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p1.stderr.String())
	}
	for _, method := range []string{"session/load", "session/resume"} {
		p := surfaceProc(t, dir, state, nil)
		p.initialize()
		resp, before := p.await(p.request(method, map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}))
		if resp.Error != nil {
			t.Fatalf("%s: %s", method, resp.raw)
		}
		checkFollows(p, method, before)
		if code := p.finish(); code != 0 {
			t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
		}
	}
}

// TestResumeSession: session/resume (advertised) reopens a stored session
// in a fresh process without streaming its history back, and the next
// prompt continues it (the model sees the earlier turn); an unknown or
// path-like id is invalid params.
func TestResumeSession(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	p1 := surfaceProc(t, dir, state, nil, "OK")
	p1.initialize()
	sid := p1.newSession(ws)
	if stop, _ := p1.prompt(sid, "Remember PLUM."); stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	if code := p1.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p1.stderr.String())
	}

	p2 := surfaceProc(t, dir, state, nil, "PLUM")
	res, _ := p2.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if !strings.Contains(string(res), `"resume":{}`) {
		t.Errorf("initialize does not advertise session/resume: %s", res)
	}
	res, before := p2.call("session/resume", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}})
	if !strings.Contains(string(res), `"currentModeId":"workspace-write"`) {
		t.Errorf("session/resume result %s lacks the current mode", res)
	}
	for _, f := range before {
		t.Errorf("frame before the session/resume answer (resume streams no history): %s", f.raw)
	}
	stop, frames := p2.prompt(sid, "Which word?")
	if stop != "end_turn" {
		t.Fatalf("stopReason %q", stop)
	}
	answer := ""
	for _, f := range frames {
		if _, kind, text := f.update(); kind == "agent_message_chunk" {
			answer += text
		}
	}
	if answer != "PLUM" {
		t.Errorf("the resumed session answered %q, want PLUM", answer)
	}
	// A second resume of the open session answers with its state.
	if res, _ := p2.call("session/resume", map[string]any{"sessionId": sid, "cwd": ws, "mcpServers": []any{}}); !strings.Contains(string(res), "currentModeId") {
		t.Errorf("resume of the open session answered %s", res)
	}
	for _, bad := range []string{"no-such-session", "../" + sid, "/etc/passwd", ""} {
		if code, msg := p2.callErr("session/resume", map[string]any{"sessionId": bad, "cwd": ws, "mcpServers": []any{}}); code != -32602 {
			t.Errorf("session/resume %q: code %d (%s), want -32602", bad, code, msg)
		}
	}
	if code := p2.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p2.stderr.String())
	}
	d, err := os.ReadFile(filepath.Join(state, sid+".jsonl"))
	if err != nil || strings.Count(string(d), `"type":"turn/start"`) != 2 {
		t.Errorf("the resumed log does not hold both turns (%v)", err)
	}
}

// listPage sends session/list with cursor ("" for none) and returns the
// ids and the next cursor.
func listPage(t *testing.T, p *proc, cwd, cursor string) ([]string, string) {
	t.Helper()
	params := map[string]any{"cwd": cwd}
	if cursor != "" {
		params["cursor"] = cursor
	}
	res, _ := p.call("session/list", params)
	var r struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("session/list answered %s", res)
	}
	var ids []string
	for _, s := range r.Sessions {
		ids = append(ids, s.SessionID)
	}
	next := ""
	if r.NextCursor != nil {
		next = *r.NextCursor
		if next == "" {
			t.Errorf("session/list answered an empty nextCursor: %s", res)
		}
	}
	return ids, next
}

// TestListSessionsPages: session/list honours cursor and returns
// nextCursor while more sessions follow; paging visits every session once
// even when sessions are created between pages; a cursor reel did not
// make is invalid params naming the cursor.
func TestListSessionsPages(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	p := surfaceProc(t, dir, state, []string{"--list-page-size", "2"})
	p.initialize()
	var created []string
	for range 5 {
		created = append(created, p.newSession(ws))
	}
	var seen []string
	cursor, pages := "", 0
	for {
		ids, next := listPage(t, p, ws, cursor)
		pages++
		if len(ids) > 2 {
			t.Errorf("page %d holds %d sessions, more than the page size 2", pages, len(ids))
		}
		seen = append(seen, ids...)
		if pages == 1 {
			// Created while paging: must not shift the pages of the others.
			created = append(created, p.newSession(ws), p.newSession(ws))
		}
		if next == "" || pages > 10 {
			break
		}
		cursor = next
	}
	for _, id := range created[:5] {
		if n := count(seen, id); n != 1 {
			t.Errorf("session %s listed %d times over the pages, want once (pages %q)", id, n, seen)
		}
	}
	for _, id := range seen {
		if n := count(seen, id); n != 1 {
			t.Errorf("session %s listed %d times", id, n)
		}
	}
	if pages < 3 {
		t.Errorf("%d pages for at least 5 sessions at 2 a page", pages)
	}
	all, next := listPage(t, p, ws, "")
	if next == "" || len(all) != 2 {
		t.Errorf("first page %q next %q, want 2 sessions and a cursor", all, next)
	}
	for _, bad := range []string{
		"x", "!!!", base64.RawURLEncoding.EncodeToString([]byte("other:" + created[0])),
		base64.StdEncoding.EncodeToString([]byte("reel-list-v1:"+created[0])) + "=",
		strings.Repeat("A", 5000), base64.RawURLEncoding.EncodeToString([]byte("reel-list-v1:")),
	} {
		code, msg := p.callErr("session/list", map[string]any{"cwd": ws, "cursor": bad})
		if code != -32602 || !strings.Contains(msg, "cursor") {
			t.Errorf("session/list cursor %.40q: code %d %q, want -32602 naming the cursor", bad, code, msg)
		}
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestDeleteSessionUnderAttack: session/delete takes only the id of one
// of reel's stored top-level sessions. A hostile id (a path, a path-like
// id naming a file next to or outside the state dir, an unknown id) and a
// live session are refused with invalid params and remove nothing; a
// closed session's log goes, and the image objects only it referred to go
// with it, while an object another session shares stays.
func TestDeleteSessionUnderAttack(t *testing.T) {
	t.Parallel()
	dir, ws, state := workspace(t)
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	// Bait: logs a path-like id could name.
	bait := map[string]string{
		filepath.Join(dir, "victim.jsonl"):     "victim",
		filepath.Join(state, "..victim.jsonl"): "",
	}
	for f := range bait {
		if err := os.WriteFile(f, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := surfaceProc(t, dir, state, []string{"--image-input", "on"}, "seen A", "seen B")
	res, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if !strings.Contains(string(res), `"delete":{}`) {
		t.Fatalf("initialize does not advertise session/delete: %s", res)
	}
	image := map[string]any{"type": "image", "data": redPixel, "mimeType": "image/png"}
	a, b := p.newSession(ws), p.newSession(ws)
	for _, sid := range []string{a, b} {
		res, _ := p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "Look."}, image}})
		if !strings.Contains(string(res), "end_turn") {
			t.Fatalf("prompt answered %s", res)
		}
	}
	raw, _ := base64.StdEncoding.DecodeString(redPixel)
	digest := strings.TrimPrefix(sessionlog.AttachmentID(raw), "sha256:")
	object := filepath.Join(dir, "attachments", "v1", "objects", digest[:2], digest)
	if _, err := os.Stat(object); err != nil {
		t.Fatalf("the prompt image is not stored: %v", err)
	}
	for _, bad := range []string{
		"../victim", filepath.Join(dir, "victim"), ".", "..", ".victim", "a/../" + a, "no-such-session", "", a + "\x00", a, // a is live
	} {
		code, msg := p.callErr("session/delete", map[string]any{"sessionId": bad})
		if code != -32602 {
			t.Errorf("session/delete %q: code %d (%s), want -32602", bad, code, msg)
		}
		if bad == a && !strings.Contains(msg, "close it first") {
			t.Errorf("session/delete of the live session: %q does not say to close it first", msg)
		}
	}
	if code, msg := p.callErr("session/delete", []any{a}); code != -32602 {
		t.Errorf("session/delete with array params: code %d (%s), want -32602", code, msg)
	}
	for f := range bait {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a refused delete removed %s: %v", f, err)
		}
	}
	for _, sid := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(state, sid+".jsonl")); err != nil {
			t.Fatalf("a refused delete removed session %s: %v", sid, err)
		}
	}
	p.call("session/close", map[string]any{"sessionId": a})
	p.call("session/delete", map[string]any{"sessionId": a})
	if _, err := os.Stat(filepath.Join(state, a+".jsonl")); err == nil {
		t.Errorf("session %s's log is still there after session/delete", a)
	}
	if _, err := os.Stat(object); err != nil {
		t.Errorf("the image session %s still refers to was deleted with %s: %v", b, a, err)
	}
	if ids, _ := listPage(t, p, ws, ""); slices.Contains(ids, a) || !slices.Contains(ids, b) {
		t.Errorf("session/list after deleting %s lists %q", a, ids)
	}
	if code, _ := p.callErr("session/load", map[string]any{"sessionId": a, "cwd": ws, "mcpServers": []any{}}); code != -32602 {
		t.Errorf("session/load of the deleted session: code %d, want -32602", code)
	}
	p.call("session/close", map[string]any{"sessionId": b})
	p.call("session/delete", map[string]any{"sessionId": b})
	if _, err := os.Stat(object); err == nil {
		t.Errorf("the image only the deleted sessions referred to is still stored at %s", object)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("reel exited %d; stderr:\n%s", code, p.stderr.String())
	}
	checkFramesOnly(t, p.stdoutLines())
	checkFrames(t, p, map[string]string{"1": "InitializeResponse"})
}
