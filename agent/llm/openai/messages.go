package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/reel-agent/reel/agent/llm"
)

// buildParams maps a request to chat-completions parameters (see the
// package documentation for the rules).
func buildParams(cfg Config, req llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = cfg.Model
	}
	if model == "" {
		return sdk.ChatCompletionNewParams{}, errors.New("request names no model and the provider has no default")
	}
	params := sdk.ChatCompletionNewParams{
		Model:         model,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	parsed := make([]llm.Message, len(req.Messages))
	for i, raw := range req.Messages {
		m, err := llm.ParseMessage(raw)
		if err != nil {
			return sdk.ChatCompletionNewParams{}, fmt.Errorf("message %d: %w", i, err)
		}
		parsed[i] = m
	}
	im := newImages(cfg, parsed)
	// The images of consecutive tool results follow them in one user
	// message, before the next message that is not a tool result.
	var pending []sdk.ChatCompletionContentPartUnionParam
	for i, m := range parsed {
		msgs, imgs, err := chatMessages(m, im)
		if err != nil {
			return sdk.ChatCompletionNewParams{}, fmt.Errorf("message %d: %w", i, err)
		}
		if len(pending) > 0 && len(msgs) > 0 && msgs[0].OfTool == nil {
			params.Messages = append(params.Messages, toolImagesMessage(pending))
			pending = nil
		}
		params.Messages = append(params.Messages, msgs...)
		pending = append(pending, imgs...)
	}
	if len(pending) > 0 {
		params.Messages = append(params.Messages, toolImagesMessage(pending))
	}
	tools, err := cfg.tools.get(req.Tools)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	params.Tools = tools
	if req.MaxTokens > 0 {
		if cfg.MaxCompletionTokens {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	return params, nil
}

// chatMessages maps one dsh message to chat messages, and returns the
// images of its tool results, which go after them (see images).
func chatMessages(m llm.Message, im *images) ([]sdk.ChatCompletionMessageParamUnion, []sdk.ChatCompletionContentPartUnionParam, error) {
	switch m.Role {
	case "user":
		var out []sdk.ChatCompletionMessageParamUnion
		var toolImgs []sdk.ChatCompletionContentPartUnionParam
		var texts []string
		var regular []llm.Part
		for _, p := range m.Content {
			switch p.Type {
			case llm.PartToolResult:
				if p.ToolCallID == "" {
					return nil, nil, errors.New("tool-result part without toolCallId")
				}
				var content string
				var err error
				if hasImage(p.Content) {
					var imgs []sdk.ChatCompletionContentPartUnionParam
					content, imgs, err = im.toolContent(p.Content)
					toolImgs = append(toolImgs, imgs...)
				} else {
					content, err = partsText(p.Content)
				}
				if err != nil {
					return nil, nil, fmt.Errorf("tool result %s: %w", p.ToolCallID, err)
				}
				out = append(out, sdk.ToolMessage(content, p.ToolCallID))
			default:
				regular = append(regular, p)
				if p.Type == llm.PartImage && im.on {
					continue
				}
				t, err := partText(p)
				if err != nil {
					return nil, nil, err
				}
				texts = append(texts, t)
			}
		}
		sendImages := im.on && hasImage(regular)
		if len(texts) == 0 && !sendImages {
			return out, toolImgs, nil
		}
		if len(toolImgs) > 0 {
			// The text after this message's tool results comes after
			// their images.
			out = append(out, toolImagesMessage(toolImgs))
			toolImgs = nil
		}
		if sendImages {
			parts, err := im.userContent(regular)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, sdk.UserMessage(parts))
		} else {
			out = append(out, sdk.UserMessage(strings.Join(texts, "\n")))
		}
		return out, toolImgs, nil
	case "assistant":
		var msg sdk.ChatCompletionAssistantMessageParam
		var texts []string
		for _, p := range m.Content {
			switch p.Type {
			case llm.PartReasoning:
				// Not sent back.
			case llm.PartText:
				texts = append(texts, p.Text)
			case llm.PartToolCall:
				msg.ToolCalls = append(msg.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       p.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: p.Name, Arguments: p.Arguments},
					},
				})
			default:
				return nil, nil, fmt.Errorf("assistant message: unsupported part type %q", p.Type)
			}
		}
		if len(texts) > 0 || len(msg.ToolCalls) == 0 {
			msg.Content.OfString = param.NewOpt(strings.Join(texts, "\n"))
		}
		return []sdk.ChatCompletionMessageParamUnion{{OfAssistant: &msg}}, nil, nil
	case "system":
		t, err := partsText(m.Content)
		if err != nil {
			return nil, nil, err
		}
		return []sdk.ChatCompletionMessageParamUnion{sdk.SystemMessage(t)}, nil, nil
	default:
		return nil, nil, fmt.Errorf("unsupported role %q", m.Role)
	}
}

// partsText joins the text of parts with "\n".
func partsText(parts []llm.Part) (string, error) {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		t, err := partText(p)
		if err != nil {
			return "", err
		}
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n"), nil
}

// partText is the text a user-side part contributes.
func partText(p llm.Part) (string, error) {
	switch p.Type {
	case llm.PartText:
		return p.Text, nil
	case llm.PartImage:
		// Reached only when the image is not sent (see images).
		_, text, _ := (&images{}).part(p)
		return text, nil
	default:
		return "", fmt.Errorf("unsupported part type %q", p.Type)
	}
}

// toolSchema is one entry of llm.Request.Tools.
type toolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// toolsCache keeps the function tools of the tool schemas a provider
// mapped last: the requests of a conversation repeat the same schemas
// (about 10 KiB, strictly decoded tool by tool), so a step after the
// first pays a comparison of bytes instead. It is safe for concurrent
// use; a nil cache maps every time.
type toolsCache struct {
	mu    sync.Mutex
	raw   []byte
	tools []sdk.ChatCompletionToolUnionParam
}

// get is chatTools(raw), from the cache when raw is the schemas it mapped
// last. The tools are shared by the requests that get them: read only.
func (c *toolsCache) get(raw json.RawMessage) ([]sdk.ChatCompletionToolUnionParam, error) {
	if c == nil {
		return chatTools(raw)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil && bytes.Equal(c.raw, raw) {
		return slices.Clip(c.tools), nil
	}
	tools, err := chatTools(raw)
	if err != nil {
		return nil, err
	}
	c.raw, c.tools = append([]byte{}, raw...), tools
	return slices.Clip(tools), nil
}

// chatTools maps tool schemas to function tools, keeping each parameters
// schema byte for byte.
func chatTools(raw json.RawMessage) ([]sdk.ChatCompletionToolUnionParam, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(items))
	for i, item := range items {
		dec := json.NewDecoder(bytes.NewReader(item))
		dec.DisallowUnknownFields()
		var ts toolSchema
		if err := dec.Decode(&ts); err != nil {
			return nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("tools[%d]: trailing data", i)
		}
		if ts.Name == "" {
			return nil, fmt.Errorf("tools[%d]: no name", i)
		}
		tool := param.Override[sdk.ChatCompletionFunctionToolParam](json.RawMessage(functionTool(ts)))
		out = append(out, sdk.ChatCompletionToolUnionParam{OfFunction: &tool})
	}
	return out, nil
}

// functionTool renders {"type":"function","function":{"name","description","parameters"}}
// without HTML escaping and with the parameters schema as given.
func functionTool(ts toolSchema) []byte {
	b := []byte(`{"type":"function","function":{"name":`)
	b = append(b, jsonString(ts.Name)...)
	if ts.Description != "" {
		b = append(b, `,"description":`...)
		b = append(b, jsonString(ts.Description)...)
	}
	if len(ts.Parameters) > 0 {
		b = append(b, `,"parameters":`...)
		b = append(b, ts.Parameters...)
	}
	return append(b, `}}`...)
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
