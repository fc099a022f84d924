package acpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/tools"
)

// Price is what one model's tokens cost, per million tokens, in Currency:
// Input for input tokens not served from the provider's cache,
// CachedInput for cache hits, Output for output (reasoning included).
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cachedInput"`
	Output      float64 `json:"output"`
	Currency    string  `json:"currency"`
}

// Prices maps a model name (as the provider is asked for it) to its price.
type Prices map[string]Price

// DefaultPrices is reel's built-in price table (USD per million tokens,
// the providers' list prices as of 2025-09; docs/cost.md). "standin" is
// the stand-in model's made-up price, so the cost path is exercised by
// recorded fixtures. A --prices file overrides and extends it.
func DefaultPrices() Prices {
	usd := func(in, cached, out float64) Price {
		return Price{Input: in, CachedInput: cached, Output: out, Currency: "USD"}
	}
	return Prices{
		"deepseek-chat":     usd(0.28, 0.028, 0.42),
		"deepseek-reasoner": usd(0.28, 0.028, 0.42),
		"gpt-5":             usd(1.25, 0.125, 10),
		"gpt-5-mini":        usd(0.25, 0.025, 2),
		"gpt-5-nano":        usd(0.05, 0.005, 0.4),
		"gpt-4.1":           usd(2, 0.5, 8),
		"gpt-4.1-mini":      usd(0.4, 0.1, 1.6),
		"gpt-4o":            usd(2.5, 1.25, 10),
		"gpt-4o-mini":       usd(0.15, 0.075, 0.6),
		"o3":                usd(2, 0.5, 8),
		"o4-mini":           usd(1.1, 0.275, 4.4),
		"standin":           usd(1, 0.1, 2),
	}
}

// maxPriceFile bounds a --prices file.
const maxPriceFile = 1 << 20

// maxPrice bounds one price (per million tokens): a larger one is a typo.
const maxPrice = 100000

// currencyCode is an ISO 4217 code.
var currencyCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]{3}$`) })

// ParsePrices parses a price file: {"models":{"<model>":{"input":…,
// "cachedInput":…,"output":…,"currency":"USD"}, …}}. Every field is
// required, prices are finite, not negative and at most 100000 per
// million tokens; unknown fields and trailing data are refused. The
// error names the model and the field.
func ParsePrices(data []byte) (Prices, error) {
	if len(data) > maxPriceFile {
		return nil, fmt.Errorf("price file: %d bytes, more than the %d reel reads", len(data), maxPriceFile)
	}
	var f struct {
		Models map[string]json.RawMessage `json:"models"`
	}
	if err := strictDecode(data, &f); err != nil {
		return nil, fmt.Errorf("price file: %w", err)
	}
	if f.Models == nil {
		return nil, fmt.Errorf(`price file: "models" is required`)
	}
	out := Prices{}
	for name, raw := range f.Models {
		var p struct {
			Input       *float64 `json:"input"`
			CachedInput *float64 `json:"cachedInput"`
			Output      *float64 `json:"output"`
			Currency    *string  `json:"currency"`
		}
		if name == "" {
			return nil, fmt.Errorf("price file: a model name is empty")
		}
		if err := strictDecode(raw, &p); err != nil {
			return nil, fmt.Errorf("price file: model %q: %w", name, err)
		}
		for field, v := range map[string]*float64{"input": p.Input, "cachedInput": p.CachedInput, "output": p.Output} {
			switch {
			case v == nil:
				return nil, fmt.Errorf("price file: model %q: %q is required", name, field)
			case math.IsNaN(*v) || *v < 0 || *v > maxPrice:
				return nil, fmt.Errorf("price file: model %q: %q is %v, want 0 to %d per million tokens", name, field, *v, maxPrice)
			}
		}
		if p.Currency == nil || !currencyCode().MatchString(*p.Currency) {
			return nil, fmt.Errorf("price file: model %q: \"currency\" must be an ISO 4217 code such as \"USD\"", name)
		}
		out[name] = Price{Input: *p.Input, CachedInput: *p.CachedInput, Output: *p.Output, Currency: *p.Currency}
	}
	return out, nil
}

// strictDecode decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// WithOverrides returns p with o's entries added or replacing p's.
func (p Prices) WithOverrides(o Prices) Prices {
	out := maps.Clone(p)
	if out == nil {
		out = Prices{}
	}
	maps.Copy(out, o)
	return out
}

// Cost is the cumulative cost of what the session's calls used, or nil
// when it cannot be told truthfully: a model that was used has no price,
// or the prices are in different currencies.
func (p Prices) Cost(spent []agent.ModelTokens) *acp.Cost {
	if len(spent) == 0 {
		return nil
	}
	amount, currency := 0.0, ""
	for _, m := range spent {
		pr, ok := p[m.Model]
		if !ok || (currency != "" && pr.Currency != currency) {
			return nil
		}
		currency = pr.Currency
		amount += (float64(m.Input)*pr.Input + float64(m.CacheRead)*pr.CachedInput + float64(m.Output)*pr.Output) / 1e6
	}
	return &acp.Cost{Amount: amount, Currency: currency}
}

// usageUpdate is the usage_update of a context use: the window, and the
// session's cumulative cost when it is known.
func (srv *Server) usageUpdate(use agent.ContextUsage) acp.SessionUpdate {
	return acp.SessionUpdate{UsageUpdate: &acp.SessionUsageUpdate{SessionUpdate: "usage_update", Used: use.Used, Size: use.Size,
		Cost: srv.prices().Cost(use.Spent)}}
}

// prices is the server's price table.
func (srv *Server) prices() Prices {
	if srv.cfg.Prices != nil {
		return srv.cfg.Prices
	}
	return DefaultPrices()
}

// turnUsage is the prompt response's usage: what the model calls of the
// prompt's turns used (the session's spent tokens after the prompt less
// before it), nil when no call reported usage.
func turnUsage(before, after []agent.ModelTokens) *acp.Usage {
	d := agent.SpentTotal(after).Sub(agent.SpentTotal(before))
	if d.Calls <= 0 {
		return nil
	}
	u := &acp.Usage{InputTokens: int(d.Input + d.CacheRead), OutputTokens: int(d.Output),
		TotalTokens: int(d.Input + d.CacheRead + d.Output)}
	if d.CacheRead > 0 {
		u.CachedReadTokens = acp.Ptr(int(d.CacheRead))
	}
	if d.Reasoning > 0 {
		u.ThoughtTokens = acp.Ptr(int(d.Reasoning))
	}
	return u
}

// rawOutput is a tool call's rawOutput: the result as the model got it.
func rawOutput(res tools.Result) map[string]any {
	out := map[string]any{"output": res.Text}
	if res.IsError {
		out["isError"] = true
	}
	return out
}
