package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// chunk is one chat.completion.chunk event.
type chunk struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []choice     `json:"choices"`
	Usage   *usageReport `json:"usage,omitempty"`
}

type choice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

type usageReport struct {
	PromptTokens            int64          `json:"prompt_tokens"`
	CompletionTokens        int64          `json:"completion_tokens"`
	TotalTokens             int64          `json:"total_tokens"`
	PromptCacheHitTokens    int64          `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens   int64          `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails     map[string]any `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]any `json:"completion_tokens_details"`
}

// streamResponse writes resp as server-sent events. It stops early when the
// client goes away.
func streamResponse(ctx context.Context, w http.ResponseWriter, n int, req chatRequest, resp Response) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	delay := time.Duration(resp.DelayMs) * time.Millisecond
	id := fmt.Sprintf("standin-%d", n)
	size := resp.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}

	send := func(payload any) bool {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		data, err := json.Marshal(payload)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return ctx.Err() == nil
	}
	delta := func(d map[string]any) bool {
		return send(chunk{ID: id, Object: "chat.completion.chunk", Model: req.Model,
			Choices: []choice{{Delta: d}}})
	}

	if !delta(map[string]any{"role": "assistant", "content": ""}) {
		return
	}
	for _, piece := range split(resp.Reasoning, size) {
		if !delta(map[string]any{"content": nil, "reasoning_content": piece}) {
			return
		}
	}
	for _, piece := range split(resp.Text, size) {
		if !delta(map[string]any{"content": piece}) {
			return
		}
	}
	for i, tc := range resp.ToolCalls {
		first := map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}
		if !delta(map[string]any{"tool_calls": []any{first}}) {
			return
		}
		for _, piece := range split(tc.Arguments, size) {
			more := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if !delta(map[string]any{"tool_calls": []any{more}}) {
				return
			}
		}
	}
	if resp.StreamError != "" {
		send(map[string]any{"error": map[string]any{"message": resp.StreamError, "type": "standin_error"}})
		return
	}
	if resp.Hang {
		<-ctx.Done()
		return
	}
	finish := resp.Finish
	if finish == "" {
		finish = "stop"
		if len(resp.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if !send(chunk{ID: id, Object: "chat.completion.chunk", Model: req.Model,
		Choices: []choice{{Delta: map[string]any{}, FinishReason: &finish}}}) {
		return
	}
	if req.StreamOptions.IncludeUsage {
		var u Usage
		if resp.Usage != nil {
			u = *resp.Usage
		}
		report := &usageReport{
			PromptTokens:            u.PromptTokens,
			CompletionTokens:        u.CompletionTokens,
			TotalTokens:             u.PromptTokens + u.CompletionTokens,
			PromptCacheHitTokens:    u.CacheHitTokens,
			PromptCacheMissTokens:   u.PromptTokens - u.CacheHitTokens,
			PromptTokensDetails:     map[string]any{"cached_tokens": u.CacheHitTokens},
			CompletionTokensDetails: map[string]any{"reasoning_tokens": u.ReasoningTokens},
		}
		if !send(chunk{ID: id, Object: "chat.completion.chunk", Model: req.Model, Choices: []choice{}, Usage: report}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// split cuts s into pieces of at most size runes.
func split(s string, size int) []string {
	var out []string
	for s != "" {
		n, i := 0, 0
		for i < len(s) && n < size {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			n++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
