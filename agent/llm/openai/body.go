package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/reel-agent/reel/agent/llm"
)

// encodedMessage is one history message as the chat messages it maps to,
// encoded and joined with commas (empty when it maps to none); image marks
// a message holding an image part the model is sent, whose encoding
// depends on the whole request (see images) and so is never kept.
//
// run and end place the message in a joined encoding of the history up to
// and including it: run.buf[:end]. A run only grows at its end, and a
// message whose predecessor is no longer the end of its run starts a new
// run, so bytes handed out (a request body being sent) never change.
type encodedMessage struct {
	frag  []byte
	image bool
	run   *joined
	end   int
}

// joined is the joined encoding of a history prefix.
type joined struct{ buf []byte }

// messagesMark stands in the request header's encoding for the history
// messages, which are spliced in its place as the request is sent.
const messagesMark = `"reel:history-messages"`

// requestBody prepares the chat-completions request for req. When history
// is nil, params is the whole request. Otherwise params is its header (the
// model, options, system prompt and tools) with messagesMark in place of
// the history messages, and history is their encoding, joined: the body
// is params' encoding with history spliced in at the mark (see
// spliceHistory), byte for byte the encoding of buildParams(cfg, req).
//
// With a Memo on req, each history message is parsed and encoded once per
// conversation (owner identifies the provider's mapping), and the joined
// history grows with the conversation, so a step costs what is new. A
// request whose history holds an image the model is sent, or whose tools
// hold the mark, is built whole.
func requestBody(cfg Config, owner any, req llm.Request) (params sdk.ChatCompletionNewParams, history []byte, err error) {
	imagesOn := cfg.ImageInput && cfg.Images != nil
	whole := bytes.Contains(req.Tools, []byte(messagesMark[1:len(messagesMark)-1]))
	err = req.Memo.Each(owner, req.Messages, func(raw json.RawMessage) (any, error) {
		return encodeMessage(raw, imagesOn)
	}, func(vals []any) error {
		if whole {
			return nil
		}
		for _, v := range vals {
			if v.(*encodedMessage).image {
				whole = true
				return nil
			}
		}
		history = joinHistory(vals)
		return nil
	})
	if err != nil || whole || len(history) == 0 {
		// The whole-request path also names a message that fails.
		p, err := buildParams(cfg, req)
		return p, nil, err
	}
	head := req
	head.Messages = nil
	params, err = buildParams(cfg, head)
	if err != nil {
		return params, nil, err
	}
	mark := param.Override[sdk.ChatCompletionSystemMessageParam](json.RawMessage(messagesMark))
	params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfSystem: &mark})
	return params, history, nil
}

// joinHistory is the joined encoding of vals (encodedMessages), extending
// the run of the last message already placed.
func joinHistory(vals []any) []byte {
	k := len(vals)
	for k > 0 && vals[k-1].(*encodedMessage).run == nil {
		k--
	}
	run, end := &joined{}, 0
	if k > 0 {
		last := vals[k-1].(*encodedMessage)
		run, end = last.run, last.end
	}
	for _, v := range vals[k:] {
		e := v.(*encodedMessage)
		if len(run.buf) != end {
			// Another history went on from here: start a run of our own.
			run = &joined{buf: append([]byte(nil), run.buf[:end]...)}
		}
		if len(e.frag) > 0 {
			if end > 0 {
				run.buf = append(run.buf, ',')
			}
			run.buf = append(run.buf, e.frag...)
		}
		end = len(run.buf)
		e.run, e.end = run, end
	}
	return run.buf[:end:end]
}

// spliceHistory is the body enc (the header's encoding, with the mark)
// with history in place of the mark, as buffers to write in order.
func spliceHistory(enc, history []byte) (net.Buffers, int64, error) {
	at := bytes.Index(enc, []byte(messagesMark))
	if at < 0 || bytes.Count(enc, []byte(messagesMark)) != 1 {
		return nil, 0, errors.New("openai: request header does not hold the history mark exactly once")
	}
	bufs := net.Buffers{enc[:at], history, enc[at+len(messagesMark):]}
	return bufs, int64(len(enc) - len(messagesMark) + len(history)), nil
}

// withHistory is the request option that splices history into the body
// the SDK encoded (after it added its own members), as the request is
// sent.
func withHistory(history []byte) option.RequestOption {
	return option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if r.Body == nil {
			return nil, errors.New("openai: request has no body to splice the history into")
		}
		enc, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("openai: read request header: %w", err)
		}
		bufs, n, err := spliceHistory(enc, history)
		if err != nil {
			return nil, err
		}
		r.GetBody = func() (io.ReadCloser, error) {
			b := append(net.Buffers(nil), bufs...)
			return io.NopCloser(&b), nil
		}
		r.Body, _ = r.GetBody()
		r.ContentLength = n
		return next(r)
	})
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
