package openai

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reel-agent/reel/agent/llm"
)

// Defaults for [Config] fields left zero.
const (
	DefaultMaxAttempts = 3
	DefaultBaseDelay   = 500 * time.Millisecond
	DefaultMaxDelay    = 8 * time.Second
)

// Config configures a [Provider]. The agent fills it from flags and the
// environment; start from [DeepSeek] or [OpenAI].
type Config struct {
	// Name identifies the provider in log lines, e.g. "deepseek".
	Name string
	// BaseURL is the API root; "/chat/completions" is appended.
	BaseURL string
	// Model is used when a request names none.
	Model string
	// APIKey is the key itself. When empty, the key is read from the
	// environment variable KeyEnv. When both are empty no Authorization
	// header is sent (for the stand-in server).
	APIKey string
	// KeyEnv names the environment variable holding the key.
	KeyEnv string
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// instead of max_tokens.
	MaxCompletionTokens bool
	// MaxAttempts bounds the attempts to open a stream (default 3). A
	// caller with its own retry policy sets 1, so retries do not nest (reel
	// acp does: the agent loop retries and tells the editor).
	MaxAttempts int
	// BaseDelay is the wait before the first retry, doubled for each
	// further one (default 500ms); MaxDelay caps it (default 8s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// HTTPClient sends the requests (nil: a client without overall timeout,
	// since streams are long; cancellation comes from the context).
	HTTPClient *http.Client
	// Logger receives retry lines (nil discards).
	Logger *slog.Logger
	// LookupEnv reads the environment (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// ImageInput says the model takes images: image parts are sent as
	// image_url data URLs read from Images (see image.go); without it, or
	// without Images, each is a text note in its place.
	ImageInput bool
	Images     ImageSource

	// tools caches the mapping of tool schemas for the provider New
	// makes (nil: none).
	tools *toolsCache
}

// DeepSeek returns the configuration of the DeepSeek API: base URL
// https://api.deepseek.com, model deepseek-chat, key from DEEPSEEK_API_KEY.
func DeepSeek() Config {
	return Config{Name: "deepseek", BaseURL: "https://api.deepseek.com", Model: "deepseek-chat", KeyEnv: "DEEPSEEK_API_KEY"}
}

// OpenAI returns the configuration of the OpenAI API: base URL
// https://api.openai.com/v1, model gpt-4.1, key from OPENAI_API_KEY.
func OpenAI() Config {
	return Config{Name: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4.1", KeyEnv: "OPENAI_API_KEY",
		MaxCompletionTokens: true}
}

// Provider streams chat completions from an OpenAI-compatible API. It is
// safe for concurrent use.
type Provider struct {
	cfg Config
	key string
	svc sdk.ChatCompletionService
	log *slog.Logger
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for cfg. It fails when cfg names a key variable
// that is unset or empty; the error names the variable, never a value.
func New(cfg Config) (*Provider, error) {
	if cfg.BaseURL == "" {
		return nil, fmt.Errorf("openai: provider %q: no base URL", cfg.Name)
	}
	key := cfg.APIKey
	if key == "" && cfg.KeyEnv != "" {
		lookup := cfg.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(cfg.KeyEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("openai: provider %q: no API key: set %s", cfg.Name, cfg.KeyEnv)
		}
		key = v
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = DefaultBaseDelay
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	cfg.APIKey = "" // kept only in p.key
	cfg.tools = &toolsCache{}
	return &Provider{cfg: cfg, key: key, svc: sdk.NewChatCompletionService(opts...), log: logger}, nil
}

// Stream opens a chat-completions stream for req, retrying retryable
// failures to open it (see the package documentation).
func (p *Provider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	params, history, err := requestBody(p.cfg, p, req)
	if err != nil {
		return nil, &llm.ProviderError{Code: llm.CodeBadRequest, Message: p.redact(err.Error())}
	}
	for attempt := 1; ; attempt++ {
		s, perr, hint := p.open(ctx, params, history)
		if perr == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openai: stream %s: %w", params.Model, ctx.Err())
		}
		if !perr.Retryable() || attempt >= p.cfg.MaxAttempts {
			return nil, perr
		}
		delay := p.backoff(attempt, hint)
		p.log.Warn("model call failed; retrying",
			"provider", p.cfg.Name, "model", params.Model, "attempt", attempt, "maxAttempts", p.cfg.MaxAttempts,
			"delay", delay, "code", perr.Code, "status", perr.Status, "error", perr.Message)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("openai: stream %s: waiting to retry: %w", params.Model, ctx.Err())
		case <-t.C:
		}
	}
}

// open makes one attempt to open a stream, with history (when not nil)
// spliced into the encoding of params (see requestBody). On failure it
// also returns the server's Retry-After hint, if any.
func (p *Provider) open(ctx context.Context, params sdk.ChatCompletionNewParams, history []byte) (*stream, *llm.ProviderError, time.Duration) {
	sctx, cancel := context.WithCancel(ctx)
	var res *http.Response
	capture := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(r)
		res = resp
		return resp, err
	})
	opts := []option.RequestOption{capture}
	if history != nil {
		opts = append(opts, withHistory(history))
	}
	sse := p.svc.NewStreaming(sctx, params, opts...)
	if err := sse.Err(); err != nil {
		cancel()
		_ = sse.Close()
		if res == nil {
			return nil, classify(err, 0, p.key), 0
		}
		return nil, classify(err, res.StatusCode, p.key), retryAfter(res.Header)
	}
	return newStream(ctx, cancel, sse, p.key), nil, 0
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h http.Header) time.Duration {
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

// backoff is BaseDelay·2^(attempt-1), raised to the server's hint, capped
// by MaxDelay.
func (p *Provider) backoff(attempt int, hint time.Duration) time.Duration {
	d := p.cfg.BaseDelay
	for i := 1; i < attempt && d < p.cfg.MaxDelay; i++ {
		d *= 2
	}
	return min(max(d, hint), p.cfg.MaxDelay)
}

func (p *Provider) redact(s string) string { return redact(s, p.key) }
