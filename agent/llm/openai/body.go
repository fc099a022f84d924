package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/reel-agent/reel/agent/llm"
)

// encodedMessage is one history message as the chat messages it maps to,
// encoded and joined with commas (empty when it maps to none); image marks
// a message holding an image part the model is sent, whose encoding
// depends on the whole request (see images) and so is never kept.
type encodedMessage struct {
	frag  []byte
	image bool
}

// messagesMark stands in the request header's encoding for the history
// messages, which are spliced in its place.
const messagesMark = `"reel:history-messages"`

// requestBody is the JSON body of the chat-completions request for req
// (without the "stream" member the SDK adds), and the model it names. It
// is byte for byte params.MarshalJSON() of buildParams(cfg, req), but each
// history message is parsed and encoded once per conversation when req
// carries a Memo (owner identifies the provider's mapping): the header is
// encoded with a mark in place of the history, and the kept encodings are
// spliced in. A request whose history holds an image the model is sent
// takes the whole-request path.
func requestBody(cfg Config, owner any, req llm.Request) ([]byte, string, error) {
	imagesOn := cfg.ImageInput && cfg.Images != nil
	vals, err := req.Memo.Each(owner, req.Messages, func(raw json.RawMessage) (any, error) {
		return encodeMessage(raw, imagesOn)
	})
	if err != nil {
		// The whole-request path names the message that failed.
		return wholeBody(cfg, req)
	}
	n := 0
	for _, v := range vals {
		e := v.(*encodedMessage)
		if e.image {
			return wholeBody(cfg, req)
		}
		if len(e.frag) > 0 {
			n += len(e.frag) + 1
		}
	}
	if n == 0 {
		return wholeBody(cfg, req)
	}
	head := req
	head.Messages = nil
	params, err := buildParams(cfg, head)
	if err != nil {
		return nil, "", err
	}
	mark := param.Override[sdk.ChatCompletionSystemMessageParam](json.RawMessage(messagesMark))
	params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfSystem: &mark})
	enc, err := params.MarshalJSON()
	if err != nil {
		return nil, "", fmt.Errorf("encode request: %w", err)
	}
	at := bytes.Index(enc, []byte(messagesMark))
	if at < 0 || bytes.Count(enc, []byte(messagesMark)) != 1 {
		return wholeBody(cfg, req)
	}
	body := make([]byte, 0, len(enc)+n)
	body = append(body, enc[:at]...)
	first := true
	for _, v := range vals {
		e := v.(*encodedMessage)
		if len(e.frag) == 0 {
			continue
		}
		if !first {
			body = append(body, ',')
		}
		first = false
		body = append(body, e.frag...)
	}
	body = append(body, enc[at+len(messagesMark):]...)
	return body, params.Model, nil
}

// wholeBody encodes the whole request through the SDK's encoder.
func wholeBody(cfg Config, req llm.Request) ([]byte, string, error) {
	params, err := buildParams(cfg, req)
	if err != nil {
		return nil, "", err
	}
	enc, err := params.MarshalJSON()
	if err != nil {
		return nil, "", fmt.Errorf("encode request: %w", err)
	}
	return enc, params.Model, nil
}

// encodeMessage parses one history message and encodes the chat messages
// it maps to. An error is the message's parse or mapping error.
func encodeMessage(raw json.RawMessage, imagesOn bool) (*encodedMessage, error) {
	m, err := llm.ParseMessage(raw)
	if err != nil {
		return nil, err
	}
	if imagesOn && hasImage(m.Content) {
		return &encodedMessage{image: true}, nil
	}
	msgs, imgs, err := chatMessages(m, &images{})
	if err != nil {
		return nil, err
	}
	if len(imgs) > 0 {
		return &encodedMessage{image: true}, nil
	}
	var frag []byte
	for i := range msgs {
		// The SDK's own encoding, as it writes each element of the array
		// (no HTML escaping).
		b, err := msgs[i].MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode %s message: %w", m.Role, err)
		}
		if i > 0 {
			frag = append(frag, ',')
		}
		frag = append(frag, b...)
	}
	return &encodedMessage{frag: frag}, nil
}
