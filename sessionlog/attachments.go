package sessionlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Attachments is the durable store of the bytes image parts refer to: one
// immutable file per content, named by its SHA-256, beside the session
// logs (reel acp keeps it in the state dir's sibling "attachments", next
// to "sessions" and "spill", for both the JSONL and the SQLite backend):
//
//	<dir>/v1/objects/<first 2 hex digits>/<64 hex digits>
//	<dir>/v1/tmp/            staging for writes in progress
//
// Put writes a staging file, syncs it, links it into place (an existing
// object with the same digest is kept after checking it) and syncs the
// directories, so an id it returns names bytes that survive a crash; a
// log event referring to them is written only after. Nothing is ever
// rewritten; an object is deleted only by Remove, once no stored session
// refers to it (session/delete). Directories are 0700, objects 0600.
//
// Concurrency: safe for concurrent use, also by several processes
// sharing dir.
type Attachments struct{ dir string }

// NewAttachments returns the store rooted at dir (created on first Put).
func NewAttachments(dir string) *Attachments { return &Attachments{dir: dir} }

// Dir is the store's root directory.
func (s *Attachments) Dir() string { return s.dir }

// AttachmentID is the id of content: "sha256:" and its hex digest.
func AttachmentID(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// path is the object file of a digest.
func (s *Attachments) path(digest string) string {
	return filepath.Join(s.dir, "v1", "objects", digest[:2], digest)
}

// Put stores data durably and returns its id.
func (s *Attachments) Put(data []byte) (id string, err error) {
	id = AttachmentID(data)
	digest := id[len("sha256:"):]
	target := s.path(digest)
	bucket := filepath.Dir(target)
	staging := filepath.Join(s.dir, "v1", "tmp")
	for _, d := range []string{bucket, staging} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("%w: store %s: %w", ErrAttachment, id, err)
		}
	}
	f, err := os.CreateTemp(staging, digest[:8]+"-*")
	if err != nil {
		return "", fmt.Errorf("%w: store %s: %w", ErrAttachment, id, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%w: store %s: %w", ErrAttachment, id, err)
	}
	if err := os.Link(tmp, target); errors.Is(err, fs.ErrExist) {
		// Stored before (by this or another process): keep it if whole.
		if _, err := s.read(digest, int64(len(data))); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", fmt.Errorf("%w: store %s: %w", ErrAttachment, id, err)
	}
	for _, d := range []string{bucket, filepath.Dir(bucket), filepath.Dir(filepath.Dir(bucket))} {
		if err := syncDir(d); err != nil {
			return "", fmt.Errorf("%w: store %s: %w", ErrAttachment, id, err)
		}
	}
	return id, nil
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read returns the bytes a reference names, checked against it: the
// object must exist, have exactly a.Bytes bytes and the digest of a.ID.
func (s *Attachments) Read(a ImageAttachment) ([]byte, error) {
	digest, err := a.Digest()
	if err != nil {
		return nil, err
	}
	return s.read(digest, a.Bytes)
}

// read reads the object of digest, which must hold size bytes.
func (s *Attachments) read(digest string, size int64) ([]byte, error) {
	id := "sha256:" + digest
	f, err := os.Open(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not in the attachment store %s", ErrAttachment, id, s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrAttachment, id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrAttachment, id, err)
	}
	if int64(len(b)) != size || AttachmentID(b) != id {
		return nil, fmt.Errorf("%w: %s in %s is corrupt: its bytes do not match the reference (%d bytes expected)", ErrAttachment, id, s.dir, size)
	}
	return b, nil
}
