package sessionlog_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reel-agent/reel/sessionlog"
)

// TestImagePartRoundTrip: an image part in the canonical member order
// decodes typed and re-encodes to its bytes; one in another order (the
// reference's read_image writes bytes before width) stays verbatim and
// re-encodes to its bytes too; ImageOf reads both.
func TestImagePartRoundTrip(t *testing.T) {
	ref := sessionlog.ImageAttachment{ID: "sha256:" + strings.Repeat("ab", 32), MediaType: "image/png", Width: 1, Height: 2, Bytes: 69}
	tests := []struct {
		name  string
		raw   string
		typed bool
		want  sessionlog.ImageAttachment
	}{
		{"canonical", `{"type":"image","attachment":{"attachmentId":"` + ref.ID + `","mediaType":"image/png","width":1,"height":2,"bytes":69}}`, true, ref},
		{"canonical with name", `{"type":"image","attachment":{"attachmentId":"` + ref.ID + `","mediaType":"image/png","width":1,"height":2,"bytes":69,"name":"a.png"}}`, true,
			sessionlog.ImageAttachment{ID: ref.ID, MediaType: "image/png", Width: 1, Height: 2, Bytes: 69, Name: "a.png"}},
		{"reference read_image order", `{"type":"image","attachment":{"attachmentId":"` + ref.ID + `","mediaType":"image/png","bytes":69,"width":1,"height":2,"name":"a.png"}}`, false,
			sessionlog.ImageAttachment{ID: ref.ID, MediaType: "image/png", Width: 1, Height: 2, Bytes: 69, Name: "a.png"}},
		{"extra member", `{"type":"image","attachment":{"attachmentId":"` + ref.ID + `","mediaType":"image/png","width":1,"height":2,"bytes":69,"x":1}}`, false, ref},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p sessionlog.ContentPart
			if err := json.Unmarshal([]byte(tc.raw), &p); err != nil {
				t.Fatal(err)
			}
			if got := string(p.AppendJSON(nil)); got != tc.raw {
				t.Errorf("re-encoded\n %s\nwant\n %s", got, tc.raw)
			}
			if typed := p.Image != nil; typed != tc.typed {
				t.Errorf("typed = %v, want %v", typed, tc.typed)
			}
			if got, ok := sessionlog.ImageOf(p); !ok || got != tc.want {
				t.Errorf("ImageOf = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
	if got := string(sessionlog.ImagePart(ref).AppendJSON(nil)); got != tests[0].raw {
		t.Errorf("ImagePart encodes %s", got)
	}
}

// TestAttachments stores bytes, reads them back checked, keeps a second
// store of the same bytes, and refuses a corrupt object, a missing one and
// a malformed id.
func TestAttachments(t *testing.T) {
	dir := t.TempDir()
	s := sessionlog.NewAttachments(dir)
	data := []byte("\x89PNG fake image bytes")
	id, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if id != sessionlog.AttachmentID(data) || !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("id %q", id)
	}
	ref := sessionlog.ImageAttachment{ID: id, MediaType: "image/png", Width: 1, Height: 1, Bytes: int64(len(data))}
	if got, err := s.Read(ref); err != nil || string(got) != string(data) {
		t.Fatalf("Read = %q, %v", got, err)
	}
	if _, err := s.Put(data); err != nil {
		t.Fatalf("storing the same bytes again: %v", err)
	}
	hex := strings.TrimPrefix(id, "sha256:")
	obj := filepath.Join(dir, "v1", "objects", hex[:2], hex)
	if fi, err := os.Stat(obj); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("object %s: %v %v", obj, fi, err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "v1", "tmp")); len(left) != 0 {
		t.Errorf("staging files left behind: %v", left)
	}
	bad := []struct {
		name  string
		ref   sessionlog.ImageAttachment
		setup func()
		want  string
	}{
		{"wrong size", sessionlog.ImageAttachment{ID: id, Bytes: 3}, nil, "corrupt"},
		{"missing", sessionlog.ImageAttachment{ID: "sha256:" + strings.Repeat("0", 64), Bytes: 1}, nil, "is not in the attachment store"},
		{"malformed id", sessionlog.ImageAttachment{ID: "sha256:../../etc/passwd", Bytes: 1}, nil, "is not sha256:<64 hex digits>"},
		{"corrupt object", ref, func() { _ = os.Chmod(obj, 0o644); _ = os.WriteFile(obj, []byte("\x89PNG fake image bytez"), 0o644) }, "corrupt"},
		{"same bytes stored over a corrupt object", ref, nil, "corrupt"},
	}
	for _, tc := range bad {
		if tc.setup != nil {
			tc.setup()
		}
		_, err := s.Read(tc.ref)
		if tc.name == "same bytes stored over a corrupt object" {
			_, err = s.Put(data)
		}
		if !errors.Is(err, sessionlog.ErrAttachment) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrAttachment with %q", tc.name, err, tc.want)
		}
	}
}
