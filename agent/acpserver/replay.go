package acpserver

import (
	"context"
	"encoding/base64"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/sessionlog"
)

var _ agent.PromptReplay = updates{}

// UserImage implements agent.PromptReplay: the image block the user sent,
// its bytes read back from the attachment store.
func (u updates) UserImage(ctx context.Context, mediaType string, data []byte) {
	up := acp.UpdateUserMessage(acp.ImageBlock(base64.StdEncoding.EncodeToString(data), mediaType))
	up.UserMessageChunk.MessageId = u.srv.messageID(u.session, "user")
	u.send(ctx, up)
}

// UserLink implements agent.PromptReplay: the resource_link block the user
// sent.
func (u updates) UserLink(ctx context.Context, l sessionlog.PromptLink) {
	b := acp.ResourceLinkBlock(l.Name, l.URI)
	if l.Title != "" {
		b.ResourceLink.Title = acp.Ptr(l.Title)
	}
	if l.MimeType != "" {
		b.ResourceLink.MimeType = acp.Ptr(l.MimeType)
	}
	up := acp.UpdateUserMessage(b)
	up.UserMessageChunk.MessageId = u.srv.messageID(u.session, "user")
	u.send(ctx, up)
}

// promptLink is the agent content of a resource_link block: its URI, and
// its name, title and MIME type for the log's prompt/links record.
func promptLink(l *acp.ContentBlockResourceLink) agent.Content {
	c := agent.Content{Link: l.Uri, LinkName: l.Name}
	if l.Title != nil {
		c.LinkTitle = *l.Title
	}
	if l.MimeType != nil {
		c.LinkMimeType = *l.MimeType
	}
	return c
}
