package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent/tools"
	"github.com/reel-agent/reel/sessionlog"
)

// Attached is binary content a client attached to a prompt: an image, an
// audio clip or an embedded binary resource, its bytes decoded.
type Attached struct {
	// URI is where the content came from ("" for an inline image or clip).
	URI string
	// MediaType is the client's declared MIME type ("" when unknown).
	MediaType string
	// Data are the bytes.
	Data []byte
}

// maxLinkBytes bounds what a resource link may inline: a text file up to
// the read tool's output bound, an image up to the image limit.
const maxLinkBytes = tools.MaxReadOutputBytes

// ImageInput reports whether the engine admits images: its model takes them
// (Config.ImageInput) and it has a store for them (Config.Attachments). The
// ACP adapter advertises image prompts exactly then.
func (e *Engine) ImageInput() bool {
	return e.cfg.ImageInput && e.cfg.Attachments != nil
}

// promptMessage is the user/message of a prompt. An image is admitted
// (tools.InspectImage) and stored before the message is returned, so the
// message refers only to durable bytes. What cannot be sent — an image
// the model cannot take or that is refused, audio, a binary resource, a
// link that cannot be read — becomes a note the model reads in its place
// and the user sees as a thought: nothing is dropped silently. An error
// means the store failed.
//
// links are the prompt's resource links, each with the index of the part
// that stands for it, for the prompt/links record (see recordLinks).
func (r *run) promptMessage(ctx context.Context, prompt []Content) (_ sessionlog.UserMessage, links []sessionlog.PromptLink, _ error) {
	parts := make([]sessionlog.ContentPart, 0, len(prompt))
	for _, c := range prompt {
		var p sessionlog.ContentPart
		var err error
		switch {
		case c.Image != nil:
			p, err = r.attachImage(ctx, *c.Image, "")
		case c.Blob != nil:
			p, err = r.attachBlob(ctx, *c.Blob)
		case c.Link != "":
			p, err = r.attachLink(ctx, c.Link)
		default:
			p = sessionlog.TextPart(c.Text)
		}
		if err != nil {
			return sessionlog.UserMessage{}, nil, err
		}
		if breakImages() && p.Type == sessionlog.PartImage {
			continue
		}
		if c.Link != "" {
			links = append(links, sessionlog.PromptLink{Part: len(parts), URI: c.Link, Name: c.LinkName, Title: c.LinkTitle, MimeType: c.LinkMimeType})
		}
		parts = append(parts, p)
	}
	return sessionlog.NewUserMessage(r.e.newID(), parts...), links, nil
}

// recordLinks writes the prompt/links record of the prompt message m
// (nothing for a prompt without links), before m itself is written, so a
// loaded session retells each link as the link the user sent.
func (r *run) recordLinks(ctx context.Context, m sessionlog.UserMessage, links []sessionlog.PromptLink) error {
	if len(links) == 0 {
		return nil
	}
	_, err := r.s.emit(ctx, r.e.now(), sessionlog.TypePromptLinks, sessionlog.PromptLinksData{MessageID: m.ID, Links: links}, nil, nil)
	return err
}

// unsent is the note standing for content that is not sent: the model reads
// it, the user sees why as a thought.
func (r *run) unsent(ctx context.Context, what, why string) sessionlog.ContentPart {
	r.c.Updates.Thought(ctx, fmt.Sprintf("reel did not send %s to the model: %s.\n", what, why))
	return sessionlog.TextPart(fmt.Sprintf("[The user attached %s, which was not sent to you: %s.]", what, why))
}

// describeAttached names attached content for a note: "an image/png image
// (69 bytes)", with its URI when it has one.
func describeAttached(kind string, a Attached) string {
	mt := a.MediaType
	if mt == "" {
		mt = "untyped"
	}
	s := fmt.Sprintf("%s %s %s (%d bytes", article(mt), mt, kind, len(a.Data))
	if a.URI != "" {
		s += ", " + a.URI
	}
	return s + ")"
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiouAEIOU", rune(s[0])) {
		return "an"
	}
	return "a"
}

// attachImage admits and stores an image; name is the file it was read
// from ("" for an inline image).
func (r *run) attachImage(ctx context.Context, a Attached, name string) (sessionlog.ContentPart, error) {
	what := describeAttached("image", a)
	if !r.e.ImageInput() {
		return r.unsent(ctx, what, fmt.Sprintf("the model %q takes no image input (start reel with an image-capable --model, see the README's Images section)", r.e.cfg.Model)), nil
	}
	info, err := tools.InspectImage(a.Data)
	switch {
	case errors.Is(err, tools.ErrImageSide):
		return r.unsent(ctx, what, fmt.Sprintf("at least one image side exceeds the %dpx limit; downscale the image and attach the smaller copy", tools.MaxImageSide)), nil
	case errors.Is(err, tools.ErrImagePixels):
		return r.unsent(ctx, what, fmt.Sprintf("the image exceeds the %d-pixel limit; downscale it", tools.MaxImagePixels)), nil
	case errors.Is(err, tools.ErrImageBytes):
		return r.unsent(ctx, what, fmt.Sprintf("the image is larger than the %d-byte limit; downscale it", tools.MaxImageBytes)), nil
	case err != nil:
		return r.unsent(ctx, what, "its bytes are not a whole PNG, JPEG, WebP or GIF image"), nil
	}
	if a.MediaType != "" && a.MediaType != info.MediaType {
		return r.unsent(ctx, what, fmt.Sprintf("it is declared %s but its bytes are %s", a.MediaType, info.MediaType)), nil
	}
	ref, err := r.e.storeImage(tools.Image{Data: a.Data, ImageInfo: info, Name: name})
	if err != nil {
		return sessionlog.ContentPart{}, err
	}
	return sessionlog.ImagePart(ref), nil
}

// storeImage stores an admitted image and returns its reference.
func (e *Engine) storeImage(img tools.Image) (sessionlog.ImageAttachment, error) {
	id, err := e.cfg.Attachments.Put(img.Data)
	if err != nil {
		return sessionlog.ImageAttachment{}, fmt.Errorf("store image: %w", err)
	}
	return sessionlog.ImageAttachment{
		ID: id, MediaType: img.MediaType, Width: img.Width, Height: img.Height,
		Bytes: int64(len(img.Data)), Name: img.Name,
	}, nil
}

// attachBlob sends a binary resource or an audio clip where the model
// takes it: an image as an image, UTF-8 text as a file block; anything
// else (audio: no model reel drives takes it) is a note.
func (r *run) attachBlob(ctx context.Context, a Attached) (sessionlog.ContentPart, error) {
	switch {
	case strings.HasPrefix(a.MediaType, "image/"):
		return r.attachImage(ctx, a, "")
	case strings.HasPrefix(a.MediaType, "audio/"):
		return r.unsent(ctx, describeAttached("audio clip", a), fmt.Sprintf("the model %q takes no audio input", r.e.cfg.Model)), nil
	case isText(a.Data):
		return sessionlog.TextPart(fileBlock(a.URI, string(a.Data))), nil
	}
	return r.unsent(ctx, describeAttached("binary file", a), "it is neither text nor an image the model can take"), nil
}

// isText reports whether b reads as text: valid UTF-8 without NUL.
func isText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// fileBlock is the text of an embedded file as the model reads it.
func fileBlock(uri, text string) string {
	return fmt.Sprintf("<file uri=%q>\n%s\n</file>", uri, text)
}

// attachLink inlines a resource link: a file:// URI is read the way the
// file tools read (a regular file only, opened without blocking, nothing of
// procfs or sysfs, bounded) and sent as an embedded resource would be;
// another scheme stays the link as text (@uri); a file that cannot be read
// is a note.
func (r *run) attachLink(ctx context.Context, uri string) (sessionlog.ContentPart, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return sessionlog.TextPart("@" + uri), nil
	}
	p := u.Path
	if u.Host != "" && u.Host != "localhost" || !filepath.IsAbs(p) {
		return r.unsent(ctx, "the linked file "+uri, "only local absolute file:// links can be read"), nil
	}
	limit := int64(maxLinkBytes)
	if tools.ImageMediaType(p) != "" {
		limit = tools.MaxImageBytes
	}
	data, _, err := tools.ReadRegularFile(filepath.Clean(p), limit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r.unsent(ctx, "the linked file "+uri, "it does not exist"), nil
	case errors.Is(err, tools.ErrNotRegular):
		return r.unsent(ctx, "the linked file "+uri, "it is not a regular file"), nil
	case errors.Is(err, tools.ErrTooLarge):
		return r.unsent(ctx, "the linked file "+uri, fmt.Sprintf("it is larger than %d bytes; ask the model to read it with its tools instead", limit)), nil
	case err != nil:
		return r.unsent(ctx, "the linked file "+uri, "it cannot be read: "+err.Error()), nil
	}
	if mt := tools.ImageMediaType(p); mt != "" {
		return r.attachImage(ctx, Attached{URI: uri, MediaType: mt, Data: data}, filepath.Base(p))
	}
	return r.attachBlob(ctx, Attached{URI: uri, Data: data})
}

// toolResult is the tool/result of a call: its text, and the images it
// read (stored first) as image parts after the text.
func (r *run) toolResult(step int, id string, res tools.Result) (sessionlog.ToolResultData, error) {
	data := sessionlog.NewToolResult(r.turn, step, id, res.Text, res.IsError, r.e.newID())
	if len(res.Images) == 0 || breakImages() {
		return data, nil
	}
	part := &data.Message.Content[0]
	for _, img := range res.Images {
		ref, err := r.e.storeImage(img)
		if err != nil {
			return data, err
		}
		part.Content = append(part.Content, sessionlog.ImagePart(ref))
	}
	return data, nil
}
