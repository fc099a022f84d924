package openai

import (
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/sessionlog"
)

// ImageSource reads back the bytes an image part refers to, checked
// against its reference (*sessionlog.Attachments is one).
type ImageSource interface {
	Read(a sessionlog.ImageAttachment) ([]byte, error)
}

// MaxRequestImageBytes bounds the base64 image payload of one request (the
// reference's default, 20 MiB): while the images of the history exceed it,
// the oldest are sent as OffloadedImageText instead, so a long session with
// many images keeps under the endpoints' request-size limits. The choice
// depends only on the logged references, so it is the same on every
// rebuild of the request.
const MaxRequestImageBytes = 20 << 20

// OffloadedImageText stands in the request for an image left out to keep
// it within MaxRequestImageBytes (the reference's wording).
const OffloadedImageText = "[image omitted to keep the request within its image limit; older images are omitted first. If this image is still needed, read its file again when a path is available; otherwise ask the user to attach it again.]"

// toolImagesText opens the user message carrying the images of the tool
// results before it (chat completions keep tool message content a string).
const toolImagesText = "Attached image(s) from tool result:"

// TakesImages reports whether a model takes image input, by the table of
// models known to: the reference's DeepSeek vision model (its catalog
// declares deepseek-v4-flash-vision-exp image-capable; every other DeepSeek
// model, and any model not listed, is text-only, as there), and OpenAI's
// multimodal chat models. reel acp's --image-input overrides it.
func TakesImages(model string) bool {
	m := strings.ToLower(model)
	if m == "deepseek-v4-flash-vision-exp" {
		return true
	}
	for _, prefix := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4"} {
		if strings.HasPrefix(m, prefix) && !strings.Contains(m, "audio") && !strings.HasPrefix(m, "o1-mini") && !strings.HasPrefix(m, "o3-mini") {
			return true
		}
	}
	return false
}

// images turns the image parts of one request into chat content: as
// image_url data URLs when the model takes images (Config.ImageInput with
// a Config.Images source), else, and for the oldest images over
// MaxRequestImageBytes, as a text note in the image's place.
type images struct {
	src  ImageSource
	on   bool
	skip int // image occurrences still to offload, oldest first
}

// newImages plans the images of req: how many of the oldest are offloaded.
func newImages(cfg Config, msgs []llm.Message) *images {
	im := &images{src: cfg.Images, on: cfg.ImageInput && cfg.Images != nil}
	if !im.on {
		return im
	}
	var sizes []int64
	var walk func([]llm.Part)
	walk = func(ps []llm.Part) {
		for _, p := range ps {
			if a, ok := imageRef(p); ok {
				sizes = append(sizes, (a.Bytes+2)/3*4)
			}
			walk(p.Content)
		}
	}
	total := int64(0)
	for _, m := range msgs {
		walk(m.Content)
	}
	for _, s := range sizes {
		total += s
	}
	for _, s := range sizes {
		if total <= MaxRequestImageBytes {
			break
		}
		total -= s
		im.skip++
	}
	return im
}

// imageRef is the reference of an image part.
func imageRef(p llm.Part) (sessionlog.ImageAttachment, bool) {
	if p.Type != llm.PartImage {
		return sessionlog.ImageAttachment{}, false
	}
	return sessionlog.ImageOf(sessionlog.RawPart(p.Raw))
}

// part is the chat content of one image part: an image_url part, or
// (sent is false) the text standing in its place.
func (im *images) part(p llm.Part) (c sdk.ChatCompletionContentPartUnionParam, text string, sent bool) {
	a, ok := imageRef(p)
	if !ok {
		return c, "[image: an attachment reference reel cannot read]", false
	}
	if !im.on {
		return c, fmt.Sprintf("[image: %s, %dx%d px, %d bytes; not sent: the model takes no image input]", a.MediaType, a.Width, a.Height, a.Bytes), false
	}
	if im.skip > 0 {
		im.skip--
		return c, OffloadedImageText, false
	}
	b, err := im.src.Read(a)
	if err != nil {
		return c, fmt.Sprintf("[image: %s, %dx%d px; not sent: %v]", a.MediaType, a.Width, a.Height, err), false
	}
	url := "data:" + a.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: url}), "", true
}

// hasImage reports whether parts hold an image part (at any depth).
func hasImage(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Type == llm.PartImage || hasImage(p.Content) {
			return true
		}
	}
	return false
}

// userContent is the content of a user message whose parts hold an image:
// its text and image parts in order (a text stand-in for an image not
// sent).
func (im *images) userContent(parts []llm.Part) ([]sdk.ChatCompletionContentPartUnionParam, error) {
	var out []sdk.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		if p.Type == llm.PartImage {
			c, text, sent := im.part(p)
			if !sent {
				c = sdk.TextContentPart(text)
			}
			out = append(out, c)
			continue
		}
		t, err := partText(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sdk.TextContentPart(t))
	}
	return out, nil
}

// toolContent is the text of a tool result holding an image, and its
// images, which follow the tool messages in a user message of their own:
// the text parts joined, "(see attached image)" when there are none; an
// image not sent is a line of the text instead.
func (im *images) toolContent(parts []llm.Part) (string, []sdk.ChatCompletionContentPartUnionParam, error) {
	var texts []string
	var imgs []sdk.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		if p.Type == llm.PartImage {
			c, text, sent := im.part(p)
			if sent {
				imgs = append(imgs, c)
			} else {
				texts = append(texts, text)
			}
			continue
		}
		t, err := partText(p)
		if err != nil {
			return "", nil, err
		}
		texts = append(texts, t)
	}
	text := strings.Join(texts, "\n")
	if text == "" && len(imgs) > 0 {
		text = "(see attached image)"
	}
	return text, imgs, nil
}

// toolImagesMessage is the user message carrying the images of the tool
// results just before it.
func toolImagesMessage(imgs []sdk.ChatCompletionContentPartUnionParam) sdk.ChatCompletionMessageParamUnion {
	return sdk.UserMessage(append([]sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(toolImagesText)}, imgs...))
}
