package sessionlogtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reel-agent/reel/internal/corpustest"
	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// Backend is a store implementation under test.
type Backend struct {
	// Open returns a new Store instance over dir. The suite calls it more
	// than once per dir: instances over one dir must share sessions and
	// locks. The suite closes the stores it opens.
	Open func(t *testing.T, dir string) sessionlog.Store
	// Garble damages every stored event of session id in dir behind the
	// store's back (as a disk error would), leaving the header intact, so
	// that loading the session fails with sessionlog.ErrCorrupt. It proves
	// that List reads headers only. Nil skips that check.
	Garble func(t *testing.T, dir, id string)
}

// TestStore runs the contract every sessionlog.Store must meet.
func TestStore(t *testing.T, b Backend) {
	s := suite{b: b}
	t.Run("RoundTrip", s.roundTrip)
	t.Run("ContiguousSeqs", s.contiguous)
	t.Run("CreateExisting", s.createExisting)
	t.Run("InUse", s.inUse)
	t.Run("Concurrent", s.concurrent)
	t.Run("NotFound", s.notFound)
	t.Run("BadHeader", s.badHeader)
	t.Run("BadID", s.badID)
	t.Run("IntegerCreatedAt", s.integerCreatedAt)
	t.Run("ListLazy", s.listLazy)
	t.Run("Repair", s.repair)
	t.Run("Legacy", s.legacy)
	t.Run("SessionValidates", s.sessionValidates)
	t.Run("Context", s.context)
	t.Run("ClosedWriter", s.closedWriter)
	t.Run("Corpus", s.corpus)
}

type suite struct{ b Backend }

func (s suite) open(t *testing.T, dir string) sessionlog.Store {
	t.Helper()
	st := s.b.Open(t, dir)
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	return st
}

// header makes a header with a foreign field, which must survive verbatim.
func header(t *testing.T, id string, createdAt int64) sessionlog.Header {
	t.Helper()
	raw := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":"/work/%s","delegationDepth":0}`, id, createdAt, id)
	h, err := sessionlog.DecodeHeader([]byte(raw))
	must(t, err)
	return h
}

// create makes session id holding events, synced and closed.
func create(t *testing.T, st sessionlog.Store, h sessionlog.Header, events []sessionlog.Event) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, h)
	if err != nil {
		t.Fatalf("Create %s: %v", h.ID, err)
	}
	if len(events) > 0 {
		if err := w.Append(ctx, events...); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func inspect(t *testing.T, st sessionlog.Store, id string) *sessionlog.Loaded {
	t.Helper()
	l, err := st.Inspect(context.Background(), id)
	if err != nil {
		t.Fatalf("Inspect %s: %v", id, err)
	}
	return l
}

// encodeEvents renders events canonically, one per line, for comparison.
func encodeEvents(events []sessionlog.Event) string {
	var b []byte
	for i := range events {
		b = events[i].AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

func sameEvents(t *testing.T, what string, got, want []sessionlog.Event) {
	t.Helper()
	g, w := encodeEvents(got), encodeEvents(want)
	if g != w {
		t.Fatalf("%s: events differ\n got: %s\nwant: %s", what, g, w)
	}
}

func completeTurns(n int) []sessionlog.Event {
	b := NewBuilder(0)
	for turn := 1; turn <= n; turn++ {
		reason := ""
		if turn == 1 {
			reason = sessionlog.ReasonInitial
		}
		b.Turn(turn, fmt.Sprintf("prompt %d", turn), reason)
	}
	return b.Take()
}

func (s suite) roundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	h := header(t, "round-trip", 1_783_352_049_000) // before the events
	events := completeTurns(2)
	w, err := st.Create(ctx, h)
	must(t, err)
	// Several batches and checkpoints, as the agent loop writes them.
	for i := 0; i < len(events); i += 7 {
		j := min(i+7, len(events))
		if err := w.Append(ctx, events[i:j]...); err != nil {
			t.Fatalf("Append %d…%d: %v", i, j-1, err)
		}
		if i%14 == 0 {
			must(t, w.Sync(ctx))
		}
	}
	must(t, w.Close())
	st2 := s.open(t, dir)
	l := inspect(t, st2, h.ID)
	if !bytes.Equal(l.Log.Header().Raw, h.Raw) {
		t.Fatalf("header: got %s, want %s", l.Log.Header().Raw, h.Raw)
	}
	if len(l.Closers) != 0 || l.DroppedRecords != 0 {
		t.Fatalf("balanced log got closers %v, dropped %d", l.Closers, l.DroppedRecords)
	}
	sameEvents(t, "reloaded", l.Log.Events(), events)
	ol, ow, err := st2.Open(ctx, h.ID)
	must(t, err)
	if len(ol.Closers) != 0 {
		t.Fatalf("Open of a balanced log committed closers %v", ol.Closers)
	}
	sameEvents(t, "opened", ol.Log.Events(), events)
	must(t, ow.Close())
	infos := list(t, st2)
	if len(infos) != 1 || infos[0].ID != h.ID || infos[0].CreatedAt != h.CreatedAt || infos[0].Cwd != h.Cwd || infos[0].Location == "" {
		t.Fatalf("List = %+v, want one entry for %s", infos, h.ID)
	}
	// The last activity is no earlier than the last event: the list shows
	// when a session was last used, not when it was made.
	if last := events[len(events)-1].Time; infos[0].UpdatedAt < last || infos[0].UpdatedAt < h.CreatedAt {
		t.Fatalf("List UpdatedAt %d, want at least the last event's time %d and the creation time %d", infos[0].UpdatedAt, last, h.CreatedAt)
	}
}

func list(t *testing.T, st sessionlog.Store) []sessionlog.Info {
	t.Helper()
	var out []sessionlog.Info
	for info, err := range st.List(context.Background()) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		out = append(out, info)
	}
	return out
}

func wantErr(t *testing.T, what string, err error, target error, mention ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("%s: error %q does not mention %q", what, err, m)
		}
	}
}

func (s suite) contiguous(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	h := header(t, "contiguous", 1)
	events := completeTurns(2)
	first := slices.IndexFunc(events, func(e sessionlog.Event) bool { return e.Type == sessionlog.TypeTurnEnd }) + 1
	w, err := st.Create(ctx, h)
	must(t, err)
	// A batch with a gap inside it keeps nothing, not even its good prefix.
	gapped := slices.Clone(events[:4])
	gapped[3].Seq = 4
	wantErr(t, "batch with an inner gap", w.Append(ctx, gapped...), sessionlog.ErrInvalid, "seq 4")
	wantErr(t, "first append at seq 1", w.Append(ctx, events[1:3]...), sessionlog.ErrInvalid, "seq 1")
	if err := w.Append(ctx, events[:first]...); err != nil {
		t.Fatalf("contiguous append after refusals: %v", err)
	}
	must(t, w.Sync(ctx))
	wantErr(t, "duplicate append", w.Append(ctx, events[first-1]), sessionlog.ErrInvalid, fmt.Sprintf("seq %d", first-1))
	wantErr(t, "skipping append", w.Append(ctx, events[first+1]), sessionlog.ErrInvalid, fmt.Sprintf("seq %d", first+1))
	must(t, w.Close())
	sameEvents(t, "after refused appends", inspect(t, st, h.ID).Log.Events(), events[:first])

	// The same holds for a writer from Open.
	l, w, err := st.Open(ctx, h.ID)
	must(t, err)
	if l.Log.Len() != first {
		t.Fatalf("Open: %d events, want %d", l.Log.Len(), first)
	}
	wantErr(t, "duplicate append after Open", w.Append(ctx, events[first-1:]...), sessionlog.ErrInvalid)
	bad := events[first]
	bad.Data = []byte(`{"turn": 2}`)
	wantErr(t, "non-compact data", w.Append(ctx, bad), sessionlog.ErrInvalid, "compact")
	bad.Data = []byte(`{"turn":`)
	wantErr(t, "invalid data", w.Append(ctx, bad), sessionlog.ErrInvalid, "JSON")
	bad = events[first]
	bad.Type = ""
	wantErr(t, "no type", w.Append(ctx, bad), sessionlog.ErrInvalid, "no type")
	must(t, w.Append(ctx, events[first:]...))
	must(t, w.Close())
	sameEvents(t, "after Open and append", inspect(t, st, h.ID).Log.Events(), events)
}

func (s suite) createExisting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	h := header(t, "existing", 7)
	events := completeTurns(1)
	create(t, st, h, events)
	for _, other := range []sessionlog.Store{st, s.open(t, dir)} {
		w, err := other.Create(ctx, h)
		if err == nil {
			_ = w.Close()
		}
		wantErr(t, "Create of an existing id", err, fs.ErrExist, h.ID)
	}
	sameEvents(t, "existing log after refused Create", inspect(t, st, h.ID).Log.Events(), events)
}

func (s suite) inUse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st1, st2 := s.open(t, dir), s.open(t, dir)
	h := header(t, "live", 9)
	events := completeTurns(2)
	half := len(events) / 2
	w1, err := st1.Create(ctx, h)
	must(t, err)
	for name, st := range map[string]sessionlog.Store{"same store": st1, "second store": st2} {
		if _, _, err := st.Open(ctx, h.ID); !errors.Is(err, sessionlog.ErrInUse) {
			t.Fatalf("%s: Open of a live session: got %v, want ErrInUse", name, err)
		} else if !strings.Contains(err.Error(), h.ID) {
			t.Fatalf("%s: ErrInUse %q does not name the session", name, err)
		}
		if w, err := st.Create(ctx, h); !errors.Is(err, sessionlog.ErrInUse) {
			if w != nil {
				_ = w.Close()
			}
			t.Fatalf("%s: Create of a live session: got %v, want ErrInUse", name, err)
		}
	}
	// The first writer still works, and readers may inspect meanwhile.
	must(t, w1.Append(ctx, events[:half]...))
	must(t, w1.Sync(ctx))
	sameEvents(t, "inspect while live", inspect(t, st2, h.ID).Log.Events()[:half], events[:half])
	must(t, w1.Append(ctx, events[half:]...))
	must(t, w1.Close())
	// Closing releases the lock: the other store may open it now, and then
	// it is the first store that is refused.
	_, w2, err := st2.Open(ctx, h.ID)
	if err != nil {
		t.Fatalf("Open after the writer closed: %v", err)
	}
	if _, _, err := st1.Open(ctx, h.ID); !errors.Is(err, sessionlog.ErrInUse) {
		t.Fatalf("Open while the second store writes: got %v, want ErrInUse", err)
	}
	must(t, w2.Close())
	sameEvents(t, "after two writers in turn", inspect(t, st1, h.ID).Log.Events(), events)
}

// concurrent writes different sessions of one store from several
// goroutines (run it with -race).
func (s suite) concurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	const writers = 4
	events := completeTurns(3)
	errs := make(chan error, writers)
	for g := range writers {
		go func() {
			errs <- func() error {
				w, err := st.Create(ctx, header(t, fmt.Sprintf("concurrent-%d", g), int64(g)))
				if err != nil {
					return err
				}
				for i := 0; i < len(events); i += 5 {
					if err := w.Append(ctx, events[i:min(i+5, len(events))]...); err != nil {
						return errors.Join(err, w.Close())
					}
					if err := w.Sync(ctx); err != nil {
						return errors.Join(err, w.Close())
					}
					if _, err := st.Inspect(ctx, fmt.Sprintf("concurrent-%d", (g+1)%writers)); err != nil && !errors.Is(err, sessionlog.ErrNotFound) {
						return errors.Join(err, w.Close())
					}
				}
				return w.Close()
			}()
		}()
	}
	for range writers {
		must(t, <-errs)
	}
	for g := range writers {
		sameEvents(t, "concurrent writer", inspect(t, st, fmt.Sprintf("concurrent-%d", g)).Log.Events(), events)
	}
	if n := len(list(t, st)); n != writers {
		t.Fatalf("List: %d sessions, want %d", n, writers)
	}
}

func (s suite) notFound(t *testing.T) {
	ctx := context.Background()
	st := s.open(t, t.TempDir())
	if _, _, err := st.Open(ctx, "missing"); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("Open of a missing session: got %v, want ErrNotFound", err)
	}
	if _, err := st.Inspect(ctx, "missing"); !errors.Is(err, sessionlog.ErrNotFound) {
		t.Fatalf("Inspect of a missing session: got %v, want ErrNotFound", err)
	}
	if infos := list(t, st); len(infos) != 0 {
		t.Fatalf("List of an empty store: %+v", infos)
	}
}

func (s suite) badHeader(t *testing.T) {
	ctx := context.Background()
	st := s.open(t, t.TempDir())
	good := header(t, "good", 1)
	v1 := good
	v1.Raw = []byte(`{"type":"session","version":1,"id":"good","createdAt":1,"cwd":"/work/good"}`)
	for _, tc := range []struct {
		name string
		h    sessionlog.Header
		want error
	}{
		{"version 1 in raw", v1, sessionlog.ErrVersion},
		{"version 1 in fields", sessionlog.Header{Version: 1, ID: "v", CreatedAt: 1}, sessionlog.ErrVersion},
		{"float createdAt", sessionlog.Header{ID: "f", CreatedAt: 1, Raw: []byte(`{"type":"session","version":0,"id":"f","createdAt":1.5}`)}, sessionlog.ErrHeader},
		{"fields disagree with raw", sessionlog.Header{ID: "other", CreatedAt: 1, Cwd: "/work/good", Raw: good.Raw}, sessionlog.ErrHeader},
	} {
		w, err := st.Create(ctx, tc.h)
		if err == nil {
			_ = w.Close()
		}
		wantErr(t, tc.name, err, tc.want)
	}
	if infos := list(t, st); len(infos) != 0 {
		t.Fatalf("refused headers were stored: %+v", infos)
	}
	// A header built from fields alone (no Raw) is accepted.
	create(t, st, sessionlog.Header{ID: "fields-only", CreatedAt: 5, Cwd: "/w"}, nil)
	if got := inspect(t, st, "fields-only").Log.Header(); got.CreatedAt != 5 || got.Cwd != "/w" {
		t.Fatalf("fields-only header read back as %+v", got)
	}
}

// badIDs are strings no session id may be, each with what is wrong.
var badIDs = []struct{ why, id string }{
	{"empty", ""},
	{"dot", "."},
	{"dot dot", ".."},
	{"hidden", ".hidden"},
	{"parent path", "../escape"},
	{"absolute path", "/etc/passwd"},
	{"slash", "a/b"},
	{"trailing slash", "a/"},
	{"backslash", `a\b`},
	{"NUL", "a\x00b"},
	{"newline", "a\nb"},
	{"tab", "a\tb"},
	{"DEL", "a\x7fb"},
	{"201 bytes", strings.Repeat("x", 201)},
}

// goodIDs are unusual strings that are session ids, so that the rule is no
// wider than it says.
var goodIDs = []string{
	"e128dda9-ed11-4868-8266-0ef90d03c3d6",
	"a..b",
	"a.",
	"-",
	"{{sessionId}}",
	"séance",
	"with space",
	strings.Repeat("y", 200),
}

// badID checks that every store refuses an id that cannot name a session,
// with sessionlog.ErrBadID and a message that names the id, on Create, Open
// and Inspect, and stores nothing.
func (s suite) badID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	for _, tc := range badIDs {
		t.Run(tc.why, func(t *testing.T) {
			quoted := fmt.Sprintf("%q", tc.id)
			w, err := st.Create(ctx, sessionlog.NewHeader(tc.id, 1, "/w"))
			if err == nil {
				_ = w.Close()
			}
			wantErr(t, "Create", err, sessionlog.ErrBadID, quoted)
			_, w, err = st.Open(ctx, tc.id)
			if err == nil {
				_ = w.Close()
			}
			wantErr(t, "Open", err, sessionlog.ErrBadID, quoted)
			_, err = st.Inspect(ctx, tc.id)
			wantErr(t, "Inspect", err, sessionlog.ErrBadID, quoted)
		})
	}
	// Only the fields were given, so the header is built from the bad id.
	w, err := st.Create(ctx, sessionlog.Header{CreatedAt: 1})
	if err == nil {
		_ = w.Close()
	}
	wantErr(t, "Create with no id", err, sessionlog.ErrBadID, `""`)
	if infos := list(t, st); len(infos) != 0 {
		t.Fatalf("sessions with bad ids were stored: %+v", infos)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "escape*")); len(m) > 0 {
		t.Fatalf("a session id escaped the store directory: %v", m)
	}
	for _, id := range goodIDs {
		create(t, st, header(t, id, 1), nil)
		if _, err := st.Inspect(ctx, id); err != nil {
			t.Fatalf("Inspect %q: %v", id, err)
		}
		// A good id that names no session is not found, not bad.
		missing := id + "-missing"
		if len(missing) > 200 {
			missing = id[:190] + "-missing"
		}
		_, err := st.Inspect(ctx, missing)
		wantErr(t, "Inspect "+missing, err, sessionlog.ErrNotFound)
		if errors.Is(err, sessionlog.ErrBadID) {
			t.Fatalf("Inspect %q: %v matches ErrBadID", missing, err)
		}
	}
	if got := len(list(t, st)); got != len(goodIDs) {
		t.Fatalf("List: %d sessions, want %d", got, len(goodIDs))
	}
}

func (s suite) integerCreatedAt(t *testing.T) {
	dir := t.TempDir()
	st := s.open(t, dir)
	// 2^53+1 does not survive a float64 round trip.
	const big = int64(1)<<53 + 1
	h := header(t, "big-created", big)
	create(t, st, h, nil)
	st2 := s.open(t, dir)
	got := inspect(t, st2, h.ID).Log.Header()
	if got.CreatedAt != big || !bytes.Equal(got.Raw, h.Raw) {
		t.Fatalf("header read back as createdAt %d raw %s, want %d %s", got.CreatedAt, got.Raw, big, h.Raw)
	}
	infos := list(t, st2)
	if len(infos) != 1 || infos[0].CreatedAt != big {
		t.Fatalf("List = %+v, want createdAt %d", infos, big)
	}
}

func (s suite) listLazy(t *testing.T) {
	dir := t.TempDir()
	st := s.open(t, dir)
	ids := []string{"c-session", "a-session", "b-session"}
	for i, id := range ids {
		create(t, st, header(t, id, int64(100+i)), completeTurns(1))
	}
	if s.b.Garble == nil {
		t.Log("backend has no Garble hook: laziness of List not proven")
	} else {
		s.b.Garble(t, dir, "b-session")
		if _, err := st.Inspect(context.Background(), "b-session"); !errors.Is(err, sessionlog.ErrCorrupt) {
			t.Fatalf("garbled session: Inspect got %v, want ErrCorrupt", err)
		}
	}
	infos := list(t, s.open(t, dir))
	var got []string
	for _, in := range infos {
		got = append(got, in.ID)
		if want := header(t, in.ID, 0); in.Cwd != want.Cwd {
			t.Fatalf("List %s: cwd %q, want %q", in.ID, in.Cwd, want.Cwd)
		}
	}
	if want := []string{"a-session", "b-session", "c-session"}; !slices.Equal(got, want) {
		t.Fatalf("List ids = %v, want %v (ordered by id)", got, want)
	}
	if infos[0].CreatedAt != 101 || infos[1].CreatedAt != 102 || infos[2].CreatedAt != 100 {
		t.Fatalf("List createdAt wrong: %+v", infos)
	}
	// An early break stops the iteration.
	n := 0
	for range st.List(context.Background()) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("List did not stop after break")
	}
}

// crashedTurn is a log ending mid-turn: an assistant message asked for a
// tool, the tool/call was logged, the result never was.
func crashedTurn() (events []sessionlog.Event, callSeq int) {
	b := NewBuilder(0)
	b.Turn(1, "first", sessionlog.ReasonInitial)
	b.TurnStart(2)
	b.StepStart(1)
	b.User("second")
	call := Call{ID: "call-orphan", Name: "bash", Arguments: `{"command":"sleep 100"}`}
	b.Assistant("Running it.", call)
	callSeq = b.ToolCall(call)
	return b.Take(), callSeq
}

func checkClosers(t *testing.T, closers []sessionlog.Event, next, callSeq int) {
	t.Helper()
	if len(closers) != 3 {
		t.Fatalf("closers = %s, want tool/result, step/end, turn/end", encodeEvents(closers))
	}
	r := closers[0]
	if r.Type != sessionlog.TypeToolResult || r.Seq != next || !slices.Equal(r.SourceEventSeqs, []int{callSeq}) ||
		r.SurfaceOp == nil || r.SurfaceOp.Replace || !bytes.Contains(r.Data, []byte(sessionlog.ToolOutcomeUnknown)) {
		t.Fatalf("first closer %s: want an error tool/result at seq %d citing tool/call %d", r.AppendJSON(nil), next, callSeq)
	}
	if closers[1].Type != sessionlog.TypeStepEnd || closers[2].Type != sessionlog.TypeTurnEnd ||
		!bytes.Contains(closers[2].Data, []byte(`"kind":"interrupted"`)) {
		t.Fatalf("closers = %s", encodeEvents(closers))
	}
}

func (s suite) repair(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := s.open(t, dir)
	h := header(t, "crashed", 3)
	events, callSeq := crashedTurn()
	create(t, st, h, events)

	// Inspect computes the closers and writes nothing.
	for range 2 {
		l := inspect(t, st, h.ID)
		checkClosers(t, l.Closers, len(events), callSeq)
		if l.Log.Len() != len(events)+3 {
			t.Fatalf("Inspect: log has %d events, want %d stored + 3 closers", l.Log.Len(), len(events))
		}
	}
	// Open commits them once.
	l, w, err := st.Open(ctx, h.ID)
	must(t, err)
	checkClosers(t, l.Closers, len(events), callSeq)
	committed := slices.Clone(l.Log.Events())
	must(t, w.Close())
	st2 := s.open(t, dir)
	l2, w2, err := st2.Open(ctx, h.ID)
	must(t, err)
	if len(l2.Closers) != 0 {
		t.Fatalf("second Open added closers again: %s", encodeEvents(l2.Closers))
	}
	sameEvents(t, "after repair", l2.Log.Events(), committed)

	// A new turn appends cleanly after the repair.
	sess := sessionlog.NewSession(l2.Log, w2)
	b := NewBuilder(l2.Log.Len())
	b.Turn(NextTurn(l2.Log.Events()), "after the crash", sessionlog.ReasonResume)
	next := b.Take()
	if err := sess.Append(ctx, next...); err != nil {
		t.Fatalf("new turn after repair: %v", err)
	}
	must(t, sess.Checkpoint(ctx))
	must(t, sess.Close())
	l3 := inspect(t, st2, h.ID)
	if len(l3.Closers) != 0 {
		t.Fatalf("closers after a clean turn: %s", encodeEvents(l3.Closers))
	}
	sameEvents(t, "repair then new turn", l3.Log.Events(), append(committed, next...))
}

func (s suite) legacy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		event func(b *Builder) int
		typ   string
	}{
		{"header-delta", func(b *Builder) int {
			return b.add(sessionlog.TypeLegacyHeaderDelta, []byte(`{"delta":{"system":"x"},"base":4}`), nil, nil)
		}, sessionlog.TypeLegacyHeaderDelta},
		{"fallback-header", func(b *Builder) int {
			h := sessionlog.RequestHeader{Config: []byte(`{"model":"m"}`)}
			return b.add(sessionlog.TypeRequestHeader, sessionlog.HeaderData(h, "fallback"), nil, nil)
		}, sessionlog.TypeRequestHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := s.open(t, dir)
			h := header(t, "legacy-"+tc.name, 11)
			b := NewBuilder(0)
			b.Turn(1, "before", sessionlog.ReasonInitial)
			b.TurnStart(2)
			b.StepStart(1)
			b.User("legacy next")
			seq := tc.event(b)
			events := b.Take()
			create(t, st, h, events)
			mention := []string{fmt.Sprintf("seq %d", seq), tc.typ, h.ID}
			for range 2 { // a refused Open releases its lock and writes nothing
				_, w, err := st.Open(ctx, h.ID)
				if err == nil {
					_ = w.Close()
				}
				wantErr(t, "Open", err, sessionlog.ErrLegacy, mention...)
			}
			_, err := st.Inspect(ctx, h.ID)
			wantErr(t, "Inspect", err, sessionlog.ErrLegacy, mention...)
		})
	}
}

func (s suite) sessionValidates(t *testing.T) {
	ctx := context.Background()
	st := s.open(t, t.TempDir())
	h := header(t, "validated", 1)
	w, err := st.Create(ctx, h)
	must(t, err)
	sess := sessionlog.NewSession(sessionlog.New(h), w)
	b := NewBuilder(0)
	b.TurnStart(1)
	b.StepStart(1)
	b.add(sessionlog.TypeLegacyHeaderDelta, []byte(`{}`), nil, nil)
	err = sess.Append(ctx, b.Take()...)
	wantErr(t, "Session.Append of a delta", err, sessionlog.ErrLegacy, "seq 2")
	must(t, sess.Close())
	// The two valid events before it were written; the delta was not.
	l := inspect(t, st, h.ID)
	if l.Log.Len() != 2+len(l.Closers) || l.Log.Event(1).Type != sessionlog.TypeStepStart {
		t.Fatalf("after a refused append: %s", encodeEvents(l.Log.Events()))
	}
}

func (s suite) context(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	st := s.open(t, dir)
	h := header(t, "ctx", 1)
	if _, err := st.Create(ctx, h); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with a cancelled context: %v", err)
	}
	create(t, st, h, nil)
	if _, _, err := st.Open(ctx, h.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled context: %v", err)
	}
	if _, err := st.Inspect(ctx, h.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("Inspect with a cancelled context: %v", err)
	}
	for _, err := range st.List(ctx) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("List with a cancelled context: %v", err)
		}
	}
	_, w, err := st.Open(context.Background(), h.ID)
	must(t, err)
	ev := NewBuilder(0)
	ev.TurnStart(1)
	if err := w.Append(ctx, ev.Take()...); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: %v", err)
	}
	if err := w.Sync(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sync with a cancelled context: %v", err)
	}
	must(t, w.Close())
	if n := inspect(t, st, h.ID).Log.Len(); n != 0 {
		t.Fatalf("cancelled append stored %d events", n)
	}
}

func (s suite) closedWriter(t *testing.T) {
	ctx := context.Background()
	st := s.open(t, t.TempDir())
	h := header(t, "closed", 1)
	w, err := st.Create(ctx, h)
	must(t, err)
	must(t, w.Close())
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ev := NewBuilder(0)
	ev.TurnStart(1)
	if err := w.Append(ctx, ev.Take()...); err == nil {
		t.Fatal("Append after Close succeeded")
	}
	if err := w.Sync(ctx); err == nil {
		t.Fatal("Sync after Close succeeded")
	}
}

// CorpusLogs returns every session*.jsonl of the conformance corpus
// (../shared/corpus/dsh-acp-snapshots beside the repository root). When the
// corpus is absent it skips the test with one line naming the missing path,
// and under CI=true fails it with that line.
func CorpusLogs(t testing.TB) []string {
	t.Helper()
	return corpustest.Files(t, filepath.Join("*", "session*.jsonl"))
}

func (s suite) corpus(t *testing.T) {
	ctx := context.Background()
	for _, f := range CorpusLogs(t) {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			must(t, err)
			d, err := jsonl.Decode(bytes.NewReader(raw), f)
			must(t, err)
			dir := t.TempDir()
			st := s.open(t, dir)
			w, err := st.Create(ctx, d.Header)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if err := w.Append(ctx, d.Events...); err != nil {
				t.Fatalf("import: %v", err)
			}
			must(t, w.Close())
			l := inspect(t, s.open(t, dir), d.Header.ID)
			stored := l.Log.Events()[:l.Log.Len()-len(l.Closers)]
			var out bytes.Buffer
			must(t, jsonl.Encode(&out, l.Log.Header(), stored))
			if !bytes.Equal(out.Bytes(), raw) {
				t.Fatalf("read back and re-encoded, %s differs from the corpus file (%d vs %d bytes)", f, out.Len(), len(raw))
			}
		})
	}
}

// must stops the test on an unexpected error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
