package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PartImage is the content part type of an image: {"type":"image",
// "attachment":{…}}. The part never carries the image's bytes, only the
// reference to them in the attachment store (see [Attachments]).
const PartImage = "image"

// ImageAttachment is the reference an image part carries, as dsh logs it:
//
//	{"attachmentId":"sha256:<hex>","mediaType","width","height","bytes","name"?}
//
// ID is "sha256:" and the hex SHA-256 of the bytes, which the attachment
// store keeps under that name; MediaType is image/png, image/jpeg,
// image/webp or image/gif; Width and Height are the decoded dimensions in
// pixels; Bytes is the length of the encoded image; Name, when set, is the
// base name of the file it was read from.
type ImageAttachment struct {
	ID        string `json:"attachmentId"`
	MediaType string `json:"mediaType"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Bytes     int64  `json:"bytes"`
	Name      string `json:"name,omitempty"`
}

// AppendJSON appends the reference in its canonical member order
// {"attachmentId","mediaType","width","height","bytes","name"?}.
func (a ImageAttachment) AppendJSON(b []byte) []byte {
	b = append(b, `{"attachmentId":`...)
	b = AppendString(b, a.ID)
	b = append(b, `,"mediaType":`...)
	b = AppendString(b, a.MediaType)
	b = append(b, `,"width":`...)
	b = strconv.AppendInt(b, int64(a.Width), 10)
	b = append(b, `,"height":`...)
	b = strconv.AppendInt(b, int64(a.Height), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, a.Bytes, 10)
	if a.Name != "" {
		b = append(b, `,"name":`...)
		b = AppendString(b, a.Name)
	}
	return append(b, '}')
}

// Digest returns the hex SHA-256 the ID names, or an error when the ID is
// not "sha256:" followed by 64 lower-case hex digits.
func (a ImageAttachment) Digest() (string, error) {
	hex, ok := strings.CutPrefix(a.ID, "sha256:")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: attachment id %q is not sha256:<64 hex digits>", ErrAttachment, a.ID)
	}
	return hex, nil
}

// ImagePart is the {"type":"image","attachment":a} part.
func ImagePart(a ImageAttachment) ContentPart {
	return ContentPart{Type: PartImage, Image: &a}
}

// ImageOf returns the reference of an image part, typed or kept verbatim
// (a foreign log may order the reference's members otherwise); false for
// any other part or an image part whose reference does not decode.
func ImageOf(p ContentPart) (ImageAttachment, bool) {
	if p.Image != nil {
		return *p.Image, true
	}
	if len(p.Raw) == 0 {
		return ImageAttachment{}, false
	}
	var w struct {
		Type       string           `json:"type"`
		Attachment *ImageAttachment `json:"attachment"`
	}
	if json.Unmarshal(p.Raw, &w) != nil || w.Type != PartImage || w.Attachment == nil {
		return ImageAttachment{}, false
	}
	return *w.Attachment, true
}

// appendImagePart appends {"type":"image","attachment":…}.
func appendImagePart(b []byte, a *ImageAttachment) []byte {
	b = append(b, `{"type":"image","attachment":`...)
	b = a.AppendJSON(b)
	return append(b, '}')
}

// decodeImagePart fills p from the attachment member of an image part:
// typed only when the reference re-encodes to the very bytes logged, so a
// foreign member order stays verbatim (Raw) and round-trips.
func (p *ContentPart) decodeImagePart(raw json.RawMessage) bool {
	var a ImageAttachment
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&a) != nil || !bytes.Equal(a.AppendJSON(nil), raw) {
		return false
	}
	p.Image = &a
	return true
}

// ErrAttachment reports an attachment that cannot be stored or read back
// as its reference says: a malformed id, a missing object, bytes whose
// digest or length differ from the reference.
var ErrAttachment = errors.New("sessionlog: attachment")
