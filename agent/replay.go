package agent

import (
	"context"
	"fmt"

	"github.com/reel-agent/reel/sessionlog"
)

// PromptReplay is implemented by the Updates of a client that can be shown
// a prompt's images and resource links as the blocks the user sent. History
// retells them through it when the Updates it is given implement it, and as
// text otherwise.
type PromptReplay interface {
	// UserImage retells an image of a prompt: its media type and bytes,
	// read back from the attachment store.
	UserImage(ctx context.Context, mediaType string, data []byte)
	// UserLink retells a resource link of a prompt.
	UserLink(ctx context.Context, link sessionlog.PromptLink)
}

// PlainRetell is implemented by the Updates of a client whose frames can
// be written straight from the log's bytes. History hands it the texts
// and tool results of plain records (sessionlog.ValidMessageParts) as the
// JSON strings the log holds, not decoded; a false return says the
// string was not taken, and History retells it through Updates instead.
type PlainRetell interface {
	// RetellText retells a text — the user's (RetellUser), the model's
	// answer (RetellAnswer) or its reasoning (RetellThought) — given as
	// the JSON string quoted (nil: the empty text).
	RetellText(ctx context.Context, kind string, quoted []byte) bool
	// RetellToolEnd retells the end of call id (a JSON string) with no
	// diff: its output the strings of texts joined, failed or not.
	RetellToolEnd(ctx context.Context, id []byte, texts [][]byte, isError bool) bool
}

// The kinds of text PlainRetell.RetellText retells.
const (
	RetellUser    = "user"
	RetellAnswer  = "answer"
	RetellThought = "thought"
)

// retellPrompt retells the parts of the user's prompt message m to u,
// links (by part index) as the links the user sent.
func (s *Session) retellPrompt(ctx context.Context, u Updates, m *sessionlog.Message, links map[int]sessionlog.PromptLink) {
	pr, _ := u.(PromptReplay)
	for i, p := range m.Content {
		if l, ok := links[i]; ok && pr != nil {
			pr.UserLink(ctx, l)
			continue
		}
		switch a := p.Attachment; {
		case p.Type == "text":
			u.UserText(ctx, p.Text)
		case p.Type == sessionlog.PartImage && a != nil:
			if data, ok := s.attachment(*a); ok && pr != nil {
				pr.UserImage(ctx, a.MediaType, data)
				continue
			}
			u.UserText(ctx, fmt.Sprintf("[image: %s, %dx%d px]", a.MediaType, a.Width, a.Height))
		}
	}
}

// attachment reads the bytes an image part refers to from the engine's
// attachment store, checked against the reference; false when there is
// no store or the bytes are gone or do not match.
func (s *Session) attachment(a sessionlog.ImageAttachment) ([]byte, bool) {
	store := s.eng.cfg.Attachments
	if store == nil {
		return nil, false
	}
	data, err := store.Read(a)
	if err != nil {
		s.eng.log.Warn("a prompt's image cannot be read back for the loaded session", "session", s.id, "attachment", a.ID, "err", err)
		return nil, false
	}
	return data, true
}

// promptLinks decodes a prompt/links event into the links by part index
// of the message it names; false for data that does not decode.
func promptLinks(e *sessionlog.Event) (string, map[int]sessionlog.PromptLink, bool) {
	d, err := sessionlog.DecodeData[sessionlog.PromptLinksData](e)
	if err != nil || d.MessageID == "" {
		return "", nil, false
	}
	m := make(map[int]sessionlog.PromptLink, len(d.Links))
	for _, l := range d.Links {
		if l.URI != "" {
			m[l.Part] = l
		}
	}
	return d.MessageID, m, true
}
