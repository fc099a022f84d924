package sessionlog

import "strconv"

// TypePromptLinks is reel's log-only record of the resource links a user's
// prompt held, written before the user/message it describes. The message
// holds what the model reads for a link (the linked file inlined, a note,
// or "@uri"); this record keeps the link itself, so a loaded session retells
// the prompt as the user sent it. It never enters a model request.
//
//	{"messageId","links":[{"part","uri","name","title"?,"mimeType"?}]}
const TypePromptLinks = "prompt/links"

// PromptLink is one resource link of a prompt: Part is the index of the
// content part of the user/message that stands for it; URI and Name are
// the link's (ACP resource_link uri and name), Title and MimeType its
// optional members ("" when absent).
type PromptLink struct {
	Part     int    `json:"part"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Title    string `json:"title,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// PromptLinksData is the data of a prompt/links event: the id of the
// user/message whose parts Links describe.
type PromptLinksData struct {
	MessageID string       `json:"messageId"`
	Links     []PromptLink `json:"links"`
}

// AppendJSON appends {"messageId","links":[…]} in canonical member order.
func (d PromptLinksData) AppendJSON(b []byte) []byte {
	b = append(b, `{"messageId":`...)
	b = AppendString(b, d.MessageID)
	b = append(b, `,"links":[`...)
	for i, l := range d.Links {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"part":`...)
		b = strconv.AppendInt(b, int64(l.Part), 10)
		b = append(b, `,"uri":`...)
		b = AppendString(b, l.URI)
		b = append(b, `,"name":`...)
		b = AppendString(b, l.Name)
		if l.Title != "" {
			b = append(b, `,"title":`...)
			b = AppendString(b, l.Title)
		}
		if l.MimeType != "" {
			b = append(b, `,"mimeType":`...)
			b = AppendString(b, l.MimeType)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
