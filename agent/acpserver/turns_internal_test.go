package acpserver

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reel-agent/reel/agent"
)

// TestParsePrices: the price file's strict parse, table-driven: what it
// accepts, and each refusal naming the model and the field.
func TestParsePrices(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
		want          Prices
	}{
		{"one model", `{"models":{"m":{"input":1,"cachedInput":0.5,"output":2,"currency":"EUR"}}}`, "", Prices{"m": {1, 0.5, 2, "EUR"}}},
		{"no models", `{"models":{}}`, "", Prices{}},
		{"models missing", `{}`, `"models" is required`, nil},
		{"unknown field", `{"models":{"m":{"input":1,"cachedInput":0,"output":2,"currency":"USD","cache":1}}}`, `model "m": json: unknown field "cache"`, nil},
		{"missing price", `{"models":{"m":{"input":1,"output":2,"currency":"USD"}}}`, `model "m": "cachedInput" is required`, nil},
		{"negative", `{"models":{"m":{"input":-1,"cachedInput":0,"output":2,"currency":"USD"}}}`, `model "m": "input" is -1`, nil},
		{"huge", `{"models":{"m":{"input":1,"cachedInput":0,"output":1e9,"currency":"USD"}}}`, `"output" is 1e+09`, nil},
		{"bad currency", `{"models":{"m":{"input":1,"cachedInput":0,"output":2,"currency":"dollars"}}}`, `"currency" must be an ISO 4217 code`, nil},
		{"empty name", `{"models":{"":{"input":1,"cachedInput":0,"output":2,"currency":"USD"}}}`, "a model name is empty", nil},
		{"trailing data", `{"models":{}} {}`, "trailing data", nil},
		{"not an object", `[1]`, "price file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePrices([]byte(tc.in))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			case tc.err == "" && len(got) != len(tc.want):
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

// TestCost: the cumulative cost sums each model's tokens at its price;
// a model without a price, or two currencies, give no cost rather than a
// wrong one.
func TestCost(t *testing.T) {
	p := Prices{"a": {Input: 1, CachedInput: 0.1, Output: 2, Currency: "USD"}, "b": {Input: 10, Output: 20, Currency: "USD"}, "e": {Input: 1, Output: 1, Currency: "EUR"}}
	tok := func(m string, in, cached, out int64) agent.ModelTokens {
		return agent.ModelTokens{Model: m, TokenCount: agent.TokenCount{Input: in, CacheRead: cached, Output: out, Calls: 1}}
	}
	for _, tc := range []struct {
		name  string
		spent []agent.ModelTokens
		want  float64 // -1: no cost
	}{
		{"one model", []agent.ModelTokens{tok("a", 1e6, 1e6, 1e6)}, 1 + 0.1 + 2},
		{"two models", []agent.ModelTokens{tok("a", 1e6, 0, 0), tok("b", 0, 0, 1e6)}, 1 + 20},
		{"unpriced model", []agent.ModelTokens{tok("a", 1, 0, 0), tok("zz", 1, 0, 0)}, -1},
		{"two currencies", []agent.ModelTokens{tok("a", 1, 0, 0), tok("e", 1, 0, 0)}, -1},
		{"nothing spent", nil, -1},
	} {
		c := p.Cost(tc.spent)
		switch {
		case tc.want < 0 && c != nil:
			t.Errorf("%s: cost %v, want none", tc.name, *c)
		case tc.want >= 0 && (c == nil || math.Abs(c.Amount-tc.want) > 1e-9):
			t.Errorf("%s: cost %v, want %v", tc.name, c, tc.want)
		}
	}
}

// FuzzParsePrices: any bytes either parse into a table of finite,
// non-negative prices with ISO codes, or are refused; never a panic.
func FuzzParsePrices(f *testing.F) {
	f.Add([]byte(`{"models":{"m":{"input":1,"cachedInput":0.5,"output":2,"currency":"EUR"}}}`))
	f.Add([]byte(`{"models":{"m":{"input":1e308,"cachedInput":-0,"output":2,"currency":"USD"}}}`))
	f.Add([]byte(`{"models":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParsePrices(in)
		if err != nil {
			return
		}
		for name, pr := range p {
			for _, v := range []float64{pr.Input, pr.CachedInput, pr.Output} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxPrice {
					t.Fatalf("model %q: price %v accepted", name, v)
				}
			}
			if !currencyCode().MatchString(pr.Currency) {
				t.Fatalf("model %q: currency %q accepted", name, pr.Currency)
			}
		}
	})
}

// FuzzParseSteering: any params either parse into a session id and at
// least one text, or are refused; never a panic.
func FuzzParseSteering(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","prompt":[{"type":"text","text":"use tabs"}]}`))
	f.Add([]byte(`{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}],"_meta":{"steering":{"idleBehavior":"promptRequired"}}}`))
	f.Add([]byte(`{"sessionId":"s","prompt":[{"type":"image","mimeType":"image/png","data":"AA=="}]}`))
	f.Add([]byte(`{"prompt":[]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, texts, err := parseSteering(json.RawMessage(in))
		if err != nil {
			return
		}
		if r.SessionID == "" || len(texts) == 0 || len(texts) != len(r.Prompt) {
			t.Fatalf("accepted %q: session %q, %d texts of %d blocks", in, r.SessionID, len(texts), len(r.Prompt))
		}
	})
}

// FuzzRenameQueued: a session/prompt frame renamed for the queue keeps
// its id and params exactly and names the internal method.
func FuzzRenameQueued(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`), "4")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a\"b","method":"session/prompt","params":null}`), `"a\"b"`)
	f.Fuzz(func(t *testing.T, line []byte, id string) {
		if !utf8.ValidString(id) {
			return // ids are keys of JSON ids read from valid JSON (idKey)
		}
		out, err := renameQueued(line, id)
		if err != nil {
			return
		}
		var in, got map[string]json.RawMessage
		if json.Unmarshal(line, &in) != nil {
			t.Fatalf("renamed a frame that is not an object: %q", line)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("renamed frame is not JSON: %v", err)
		}
		var method string
		var params queuedParams
		if json.Unmarshal(got["method"], &method) != nil || method != queuedMethod {
			t.Fatalf("method %s", got["method"])
		}
		if err := json.Unmarshal(got["params"], &params); err != nil || params.RequestID != id {
			t.Fatalf("params %s: %v", got["params"], err)
		}
		if compact(got["id"]) != compact(in["id"]) {
			t.Fatalf("id %s, want %s", got["id"], in["id"])
		}
	})
}

// compact is raw JSON without insignificant space ("" for none).
func compact(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var b strings.Builder
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	b.Write(out)
	return b.String()
}
