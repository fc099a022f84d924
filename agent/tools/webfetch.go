package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/marker"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/reel-agent/reel/sessionlog"
	"golang.org/x/net/html"
)

// Defaults of the web_fetch tool, the reference agent's (its web-fetch-http
// provider and tool-web configuration).
const (
	// DefaultWebFetchMaxURLLength is the longest URL web_fetch accepts, in bytes.
	DefaultWebFetchMaxURLLength = 2048
	// DefaultWebFetchMaxResponseBytes caps the bytes of a response body:
	// a declared Content-Length over it refuses the fetch, a body that
	// grows past it is cut there and the result says it was truncated.
	DefaultWebFetchMaxResponseBytes = 5_000_000
	// DefaultWebFetchMaxBodyChars caps the decoded body, in characters.
	DefaultWebFetchMaxBodyChars = 100_000
	// DefaultWebFetchMaxOutputChars caps the source characters converted
	// to Markdown and the whole result text (header, body and notice).
	DefaultWebFetchMaxOutputChars = 200_000
	// DefaultWebFetchTimeout bounds one call: every request, redirect and
	// the body read.
	DefaultWebFetchTimeout = 30 * time.Second
	// DefaultWebFetchMaxRedirects is how many same-origin redirects a call
	// follows.
	DefaultWebFetchMaxRedirects = 5
	// DefaultWebFetchUserAgent names reel, never a browser.
	DefaultWebFetchUserAgent = "reel (+https://github.com/reel-agent/reel)"
)

// webFetchAccept is the Accept header of every request: the body kinds the
// tool can show.
const webFetchAccept = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.8"

// webFetchTruncated ends a result whose content was cut.
const webFetchTruncated = "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"

// minWebFetchOutputChars is the smallest output cap: the truncation notice
// always fits, so a result says whether it was cut (see [WebFetchMetaOf]).
const minWebFetchOutputChars = 1024

// KindFetch is the ACP tool kind of web_fetch.
const KindFetch Kind = "fetch"

// WebFetchArgs are the arguments of the web_fetch tool.
type WebFetchArgs struct {
	// URL is the http or https URL to fetch.
	URL string `json:"url"`
}

// ParseWebFetchArgs decodes the web_fetch tool's arguments: one string,
// url, with every other member name refused. A blank url parses; Run
// refuses it as the reference does ("url must be a non-empty string").
func ParseWebFetchArgs(raw json.RawMessage) (WebFetchArgs, error) {
	var a WebFetchArgs
	o, err := decodeArgs("web_fetch", raw)
	if err != nil {
		return a, err
	}
	for name := range o.fields {
		if name == "url" {
			continue
		}
		msg := `unknown argument (want one of "url")`
		if strings.EqualFold(name, "url") {
			msg = `unknown argument; names are case-sensitive (did you mean "url"?)`
		}
		return a, &ArgError{Tool: "web_fetch", Arg: name, Msg: msg}
	}
	if !o.has("url") {
		return a, &ArgError{Tool: "web_fetch", Arg: "url", Msg: "missing (required)"}
	}
	a.URL, err = o.str("url", false)
	return a, err
}

// Describe implements Describer: the URL as the model gave it, kind
// fetch, no files.
func (WebFetch) Describe(args json.RawMessage) (string, Kind, []Location) {
	return describeWebFetch(args)
}

// describeWebFetch returns the title, kind and locations of a web_fetch
// call: the URL as the model gave it, kind fetch, no files.
func describeWebFetch(args json.RawMessage) (string, Kind, []Location) {
	a, err := ParseWebFetchArgs(args)
	if err != nil || strings.TrimSpace(a.URL) == "" {
		return "web_fetch", KindFetch, nil
	}
	return a.URL, KindFetch, nil
}

// WebFetch is the web_fetch tool: it GETs one http or https URL and shows
// the body, HTML converted to Markdown, under a "Fetched URL (HTTP status)"
// line. It follows the reference agent's web_fetch over its HTTP provider:
//
//   - Only http and https URLs of at most MaxURLLength bytes, without
//     credentials, are fetched; anything else is refused before any
//     network access. NetworkOff refuses every call.
//   - Requests carry the User-Agent and an Accept header, never cookies
//     or credentials. Redirects (301, 302, 303, 307, 308) are followed up
//     to MaxRedirects, and only within the origin (scheme, host, port); a
//     redirect elsewhere, or to another scheme, fails the call and names
//     its target so the model can fetch it with a new call.
//   - A response status other than 2xx is shown like any other, not as an
//     error. Only HTML (text/html, application/xhtml+xml), other text/*,
//     JSON and XML bodies are shown; any other content type (a binary)
//     fails the call. The charset is taken from the Content-Type, UTF-8
//     by default.
//   - A declared Content-Length over MaxResponseBytes fails the call; a
//     body growing past it is cut there, as is a decoded body over
//     MaxBodyChars, and the result then ends with a truncation notice.
//     The whole result text is kept within MaxOutputChars.
//   - The call ends after Timeout; a context cancelled by the caller ends
//     it with a Go error wrapping ctx.Err().
//
// Failures to fetch are IsError results whose text starts with "Error: "
// (the reference's runtime wording). The zero value is ready to use; its
// fields configure the tool and are read-only once it is in a [Set].
type WebFetch struct {
	// Transport sends the requests; nil means a transport that uses no
	// proxy and connects to no address blockedAddr refuses (see
	// guardedDial). Whatever the transport, a URL whose host is a refused
	// address literal or a metadata host name is refused before any
	// request (checkDestination).
	// Tests point it at a local server. The tool sets no cookie jar and
	// follows redirects itself, whatever the transport.
	Transport http.RoundTripper
	// NetworkOff refuses every call (reel was started with --network off).
	NetworkOff bool
	// MaxURLLength is the longest URL accepted; 0 means
	// DefaultWebFetchMaxURLLength.
	MaxURLLength int
	// MaxResponseBytes caps the body bytes read; 0 means
	// DefaultWebFetchMaxResponseBytes.
	MaxResponseBytes int64
	// MaxBodyChars caps the decoded body; 0 means
	// DefaultWebFetchMaxBodyChars.
	MaxBodyChars int
	// MaxOutputChars caps the result text; 0 means
	// DefaultWebFetchMaxOutputChars. Values below 1024 count as 1024.
	MaxOutputChars int
	// Timeout bounds a call; 0 means DefaultWebFetchTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects a call follows; 0 means
	// DefaultWebFetchMaxRedirects, a negative value follows none.
	MaxRedirects int
	// UserAgent is sent with every request; "" means
	// DefaultWebFetchUserAgent.
	UserAgent string
}

var _ Tool = WebFetch{}

// Name returns "web_fetch".
func (WebFetch) Name() string { return "web_fetch" }

// Schema returns the web_fetch tool's schema. Its description is the
// reference's, which its recorded request headers pin.
func (WebFetch) Schema() Schema {
	return Schema{
		Name:        "web_fetch",
		Description: "Fetch the content of a specific HTTP(S) URL and return it decoded to text.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"url": {"type": "string", "description": "The HTTP(S) URL to fetch."}
			},
			"required": ["url"]
		}`),
	}
}

// WebFetchMeta is the summary the reference records as the "meta" member
// of a successful web_fetch tool/result, for a client to show a fetch card
// on replay without parsing the text.
type WebFetchMeta struct {
	// URL is the final URL, after redirects.
	URL string `json:"url"`
	// StatusCode is the HTTP status of the response.
	StatusCode int `json:"statusCode"`
	// Truncated reports that the text shown was cut.
	Truncated bool `json:"truncated"`
}

// AppendJSON appends {"url","statusCode","truncated"}, as the reference
// writes the tool/result meta of a fetch.
func (m WebFetchMeta) AppendJSON(b []byte) []byte {
	b = append(b, `{"url":`...)
	b = sessionlog.AppendString(b, m.URL)
	b = append(b, `,"statusCode":`...)
	b = strconv.AppendInt(b, int64(m.StatusCode), 10)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, m.Truncated)
	return append(b, '}')
}

// WebFetchMetaOf recovers the meta of a web_fetch result from its text; ok
// is false for an error result or a text web_fetch did not produce. The
// result's first line names the final URL and status, and a cut result
// always ends with the truncation notice.
func WebFetchMetaOf(res Result) (meta WebFetchMeta, ok bool) {
	if res.IsError {
		return meta, false
	}
	first, _, found := strings.Cut(res.Text, "\n\n")
	if !found || !strings.HasPrefix(first, "Fetched ") || !strings.HasSuffix(first, ")") {
		return meta, false
	}
	i := strings.LastIndex(first, " (HTTP ")
	if i < len("Fetched ") {
		return meta, false
	}
	code, err := strconv.Atoi(first[i+len(" (HTTP ") : len(first)-1])
	if err != nil {
		return meta, false
	}
	return WebFetchMeta{
		URL:        first[len("Fetched "):i],
		StatusCode: code,
		Truncated:  strings.HasSuffix(res.Text, webFetchTruncated),
	}, true
}

// limits returns the tool's effective limits.
func (w WebFetch) limits() WebFetch {
	l := w
	if l.MaxURLLength <= 0 {
		l.MaxURLLength = DefaultWebFetchMaxURLLength
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultWebFetchMaxResponseBytes
	}
	if l.MaxBodyChars <= 0 {
		l.MaxBodyChars = DefaultWebFetchMaxBodyChars
	}
	if l.MaxOutputChars <= 0 {
		l.MaxOutputChars = DefaultWebFetchMaxOutputChars
	}
	l.MaxOutputChars = max(l.MaxOutputChars, minWebFetchOutputChars)
	if l.Timeout <= 0 {
		l.Timeout = DefaultWebFetchTimeout
	}
	switch {
	case l.MaxRedirects == 0:
		l.MaxRedirects = DefaultWebFetchMaxRedirects
	case l.MaxRedirects < 0:
		l.MaxRedirects = 0
	}
	if l.UserAgent == "" {
		l.UserAgent = DefaultWebFetchUserAgent
	}
	if l.Transport == nil {
		l.Transport = guardedTransport()
	}
	return l
}

// webFetchError is a failure to fetch or show a resource; its message is
// what the model sees after "Error: ".
type webFetchError struct{ msg string }

func (e *webFetchError) Error() string { return e.msg }

// fetchFail returns a *webFetchError with a formatted message.
func fetchFail(format string, args ...any) error {
	return &webFetchError{msg: fmt.Sprintf(format, args...)}
}

// parseFetchURL validates the URL of a request or a redirect target as the
// reference does: at most maxLen bytes, absolute, http or https, a host,
// no user or password. The URL is returned normalized (scheme and host in
// lower case, default port dropped, "/" for an empty path), as the
// reference's URL parser prints it; a host that ends in a number is an
// IPv4 address in any WHATWG spelling ("2852039166", "0xA9FEA9FE",
// "0251.0376.0251.0376", "169.254.169.254.") and is printed dotted, as
// the reference's parser does, or the URL is invalid.
func parseFetchURL(raw string, maxLen int) (*url.URL, error) {
	if len(raw) > maxLen {
		return nil, fetchFail("URL exceeds the maximum length of %d", maxLen)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" {
		return nil, fetchFail("invalid URL: %s", raw)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fetchFail("unsupported URL scheme %q (only http and https are allowed)", scheme+":")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return nil, fetchFail("invalid URL: %s", raw)
	}
	if u.User != nil {
		return nil, fetchFail("credentials in URLs are not allowed")
	}
	u.Scheme = scheme
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if !strings.Contains(host, ":") {
		if ip, numeric, ok := whatwgIPv4(host); ok {
			host = ip.String()
		} else if numeric {
			return nil, fetchFail("invalid URL: %s", raw)
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" && port != defaultPort(scheme) {
		host += ":" + port
	}
	u.Host = host
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// defaultPort is the port a scheme implies.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// sameOrigin reports whether a and b (both from parseFetchURL) share
// scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host
}

// Run fetches the URL.
func (w WebFetch) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseWebFetchArgs(raw)
	if err != nil {
		return Result{}, err
	}
	title, kind, _ := describeWebFetch(raw)
	fail := func(msg string) (Result, error) { return errorResult(title, kind, nil, "Error: "+msg), nil }
	if strings.TrimSpace(a.URL) == "" {
		return fail("url must be a non-empty string")
	}
	if w.NetworkOff {
		return fail("web_fetch is unavailable: reel was started with --network off, so this session has no network access. Nothing was fetched.")
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("tools: web_fetch %s: %w", a.URL, err)
	}
	l := w.limits()
	res, err := l.fetch(ctx, a.URL)
	if err != nil {
		var fe *webFetchError
		if errors.As(err, &fe) {
			return fail(fe.msg)
		}
		return Result{}, fmt.Errorf("tools: web_fetch %s: %w", a.URL, err)
	}
	out := Result{Text: l.render(ctx, res), Kind: kind, Title: title}
	if m, ok := WebFetchMetaOf(out); ok {
		out.Meta = m.AppendJSON(nil)
	}
	return out, nil
}

// fetched is a fetched resource, decoded.
type fetched struct {
	url       string
	status    int
	html      bool
	content   string
	truncated bool // cut at MaxResponseBytes or MaxBodyChars
}

// fetch GETs raw, following same-origin redirects, within the tool's
// timeout. A *webFetchError is a failure for the model; any other error
// wraps the cancellation of ctx.
func (l WebFetch) fetch(ctx context.Context, raw string) (fetched, error) {
	cur, err := parseFetchURL(raw, l.MaxURLLength)
	if err != nil {
		return fetched{}, err
	}
	tctx, cancel := context.WithTimeoutCause(ctx, l.Timeout, errWebFetchTimeout)
	defer cancel()
	client := &http.Client{
		Transport:     l.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for redirects := 0; ; redirects++ {
		if err := checkDestination(cur.Hostname()); err != nil {
			return fetched{}, err
		}
		resp, err := l.get(tctx, client, cur)
		if err != nil {
			return fetched{}, l.transportError(ctx, tctx, err)
		}
		if !isRedirect(resp.StatusCode) {
			f, err := l.read(tctx, resp, cur)
			if err != nil {
				var fe *webFetchError
				if !errors.As(err, &fe) {
					err = l.transportError(ctx, tctx, err)
				}
			}
			return f, err
		}
		resp.Body.Close()
		if redirects >= l.MaxRedirects {
			return fetched{}, fetchFail("exceeded the maximum of %d redirects", l.MaxRedirects)
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return fetched{}, fetchFail("redirect response (HTTP %d) without a Location header", resp.StatusCode)
		}
		ref, err := url.Parse(loc)
		if err != nil {
			return fetched{}, fetchFail("invalid redirect Location %q", loc)
		}
		next, err := parseFetchURL(cur.ResolveReference(ref).String(), l.MaxURLLength)
		if err != nil {
			return fetched{}, err
		}
		if !sameOrigin(next, cur) {
			return fetched{}, fetchFail("cross-origin redirect to %s://%s is not followed automatically; retry against that URL directly", next.Scheme, next.Host)
		}
		cur = next
	}
}

// errWebFetchTimeout is the cause of a call that ran out of time.
var errWebFetchTimeout = errors.New("web fetch timed out")

// transportError words a failed request or body read: the caller's
// cancellation stays a Go error, the tool's timeout and a network failure
// are failures for the model.
func (l WebFetch) transportError(ctx, tctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(context.Cause(tctx), errWebFetchTimeout) {
		return fetchFail("web fetch timed out after %s", l.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fetchFail("web fetch failed: %v", err)
}

// get sends one GET to u: the User-Agent and Accept headers, nothing else
// of the caller's (no cookie, no credentials).
func (l WebFetch) get(ctx context.Context, client *http.Client, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fetchFail("invalid URL: %s", u)
	}
	req.Header.Set("User-Agent", l.UserAgent)
	req.Header.Set("Accept", webFetchAccept)
	return client.Do(req)
}

// isRedirect reports a redirect status that carries a Location.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// read classifies, caps and decodes the final response's body; it closes
// the body.
func (l WebFetch) read(ctx context.Context, resp *http.Response, u *url.URL) (fetched, error) {
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	isHTML, ok := classifyContentType(ctype)
	if !ok {
		shown := ctype
		if shown == "" {
			shown = "unknown"
		}
		return fetched{}, fetchFail("unsupported content type %q", shown)
	}
	decode, err := decoderFor(ctype)
	if err != nil {
		return fetched{}, err
	}
	if resp.ContentLength > l.MaxResponseBytes {
		return fetched{}, fetchFail("response exceeds the maximum of %d bytes", l.MaxResponseBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, l.MaxResponseBytes+1))
	if err != nil {
		return fetched{}, err
	}
	if err := ctx.Err(); err != nil {
		return fetched{}, err
	}
	f := fetched{url: u.String(), status: resp.StatusCode, html: isHTML}
	if int64(len(body)) > l.MaxResponseBytes {
		body, f.truncated = body[:l.MaxResponseBytes], true
	}
	f.content = decode(body)
	if cut, ok := cutRunes(f.content, l.MaxBodyChars); ok {
		f.content, f.truncated = cut, true
	}
	return f, nil
}

// classifyContentType sorts a Content-Type into HTML, other text (ok and
// not HTML) or unsupported (not ok), as the reference does.
func classifyContentType(ctype string) (isHTML, ok bool) {
	mt, _, _ := strings.Cut(ctype, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return true, true
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return false, true
	}
	return false, false
}

// decoderFor returns the decoder of the charset a Content-Type declares:
// UTF-8 by default and for its labels, Latin-1 for the ISO-8859-1 and
// ASCII labels; any other charset fails the call rather than show
// mojibake. Invalid UTF-8 becomes U+FFFD.
func decoderFor(ctype string) (func([]byte) string, error) {
	cs := ""
	if _, params, err := mime.ParseMediaType(ctype); err == nil {
		cs = strings.ToLower(strings.TrimSpace(params["charset"]))
	} else if _, rest, ok := strings.Cut(ctype, "charset="); ok {
		cs, _, _ = strings.Cut(strings.ToLower(strings.Trim(rest, `" `)), ";")
	}
	switch cs {
	case "", "utf-8", "utf8", "unicode-1-1-utf-8":
		return func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }, nil
	case "iso-8859-1", "latin1", "l1", "iso8859-1", "iso_8859-1", "us-ascii", "ascii":
		return func(b []byte) string {
			r := make([]rune, len(b))
			for i, c := range b {
				r[i] = rune(c)
			}
			return string(r)
		}, nil
	}
	return nil, fetchFail("unsupported charset %q", cs)
}

// cutRunes cuts s to its first n runes; ok reports that it was longer.
func cutRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}

// render is the result text of f: "Fetched URL (HTTP status)", a blank
// line and the body (HTML as Markdown), with the truncation notice when
// anything was cut, all within MaxOutputChars characters.
func (l WebFetch) render(ctx context.Context, f fetched) string {
	src, cut := cutRunes(f.content, l.MaxOutputChars)
	body := src
	if f.html {
		body = htmlToMarkdown(ctx, src)
	}
	prefix := fmt.Sprintf("Fetched %s (HTTP %d)\n\n%s", f.url, f.status, body)
	n := utf8.RuneCountInString(prefix)
	truncated := f.truncated || cut || n > l.MaxOutputChars
	if !truncated {
		return prefix
	}
	if n+utf8.RuneCountInString(webFetchTruncated) <= l.MaxOutputChars {
		return prefix + webFetchTruncated
	}
	kept, _ := cutRunes(prefix, l.MaxOutputChars-utf8.RuneCountInString(webFetchTruncated))
	return kept + webFetchTruncated
}

// maxMarkdownDepth is the element nesting above which an HTML body is shown
// as it is instead of converted, as the reference does: real pages nest a
// few dozen levels, and conversion of pathologically deep (unclosed) markup
// costs far more than it is worth.
const maxMarkdownDepth = 512

// htmlToMarkdown converts an HTML body to Markdown the way the reference's
// turndown with GFM tables does, as far as the converter allows (see
// newMarkdownConverter). Markup nested beyond maxMarkdownDepth, and markup
// the converter fails on, is returned as it is: a degraded page beats an
// error for a body that was fetched.
func htmlToMarkdown(ctx context.Context, src string) string {
	if htmlDepthExceeds(src, maxMarkdownDepth) {
		return src
	}
	out, err := markdownConverter().ConvertString(src, converter.WithContext(ctx))
	if err != nil {
		return src
	}
	return out
}

// voidElements never take an end tag.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
}

// htmlDepthExceeds reports whether the lexical element stack of src grows
// beyond limit: start tags push (but void and self-closed ones), an end tag
// pops only the element on top, so malformed markup over-counts rather than
// hides its nesting. One pass of the tokenizer, no tree.
func htmlDepthExceeds(src string, limit int) bool {
	z := html.NewTokenizer(strings.NewReader(src))
	var open []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			return false
		case html.StartTagToken:
			name, _ := z.TagName()
			if !voidElements[string(name)] {
				if open = append(open, string(name)); len(open) > limit {
					return true
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if n := len(open); n > 0 && open[n-1] == string(name) {
				open = open[:n-1]
			}
		}
	}
}

// markdownConverter is the shared converter; it is safe for concurrent use.
var markdownConverter = sync.OnceValue(newMarkdownConverter)

// newMarkdownConverter configures html-to-markdown after the reference's
// turndown: ATX headings, "_" emphasis and "**" strong, "-" bullets,
// fenced code, "~~" strikethrough; script, style and noscript dropped, but
// the text of <head> (the page's <title>) kept, as turndown keeps it; and
// lists and tables rendered by turndown's rules (renderTurndownList,
// renderGFMTable) rather than the converter's own.
func newMarkdownConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithHeadingStyle(commonmark.HeadingStyleATX),
			commonmark.WithEmDelimiter("_"),
			commonmark.WithStrongDelimiter("**"),
			commonmark.WithBulletListMarker("-"),
			commonmark.WithCodeBlockFence("```"),
			commonmark.WithListEndComment(false),
		),
		strikethrough.NewStrikethroughPlugin(),
		table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal), table.WithNewlineBehavior(table.NewlineBehaviorPreserve)),
	))
	conv.Register.TagType("head", converter.TagTypeBlock, converter.PriorityEarly)
	conv.Register.RendererFor("ul", converter.TagTypeBlock, renderTurndownList, converter.PriorityEarly)
	conv.Register.RendererFor("ol", converter.TagTypeBlock, renderTurndownList, converter.PriorityEarly)
	conv.Register.RendererFor("table", converter.TagTypeBlock, renderGFMTable, converter.PriorityEarly)
	return conv
}

// elementChildren returns n's child elements, optionally only those named.
func elementChildren(n *html.Node, names ...string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (len(names) == 0 || slices.Contains(names, c.Data)) {
			out = append(out, c)
		}
	}
	return out
}

// attr returns n's attribute key, "" when absent.
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// renderTurndownList renders a <ul> or <ol> as turndown does: items
// prefixed "-   " or "N.  " (N from the start attribute on), their further
// lines indented by the prefix's width, a list nested last in an item
// attached to it by one newline, any other list set off by blank lines.
func renderTurndownList(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	start := 1
	if n.Data == "ol" {
		if s, err := strconv.Atoi(strings.TrimSpace(attr(n, "start"))); err == nil {
			start = s
		}
	}
	var items strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || c.Data != "li" {
			var buf bytes.Buffer
			ctx.RenderNodes(ctx, &buf, c)
			items.Write(buf.Bytes())
			continue
		}
		prefix := "-   "
		if n.Data == "ol" {
			prefix = strconv.Itoa(start+slices.Index(elementChildren(n), c)) + ".  "
		}
		var buf bytes.Buffer
		ctx.RenderChildNodes(ctx, &buf, c)
		content := strings.TrimLeft(buf.String(), "\n")
		if trimmed := strings.TrimRight(content, "\n"); trimmed != content {
			content = trimmed + "\n"
		}
		content = strings.ReplaceAll(content, "\n", "\n"+strings.Repeat(" ", len(prefix)))
		items.WriteString(prefix + content)
		if c.NextSibling != nil && !strings.HasSuffix(content, "\n") {
			items.WriteString("\n")
		}
	}
	if p := n.Parent; p != nil && p.Data == "li" {
		if kids := elementChildren(p); kids[len(kids)-1] == n {
			w.WriteString("\n" + items.String())
			return converter.RenderSuccess
		}
	}
	w.WriteString("\n\n" + items.String() + "\n\n")
	return converter.RenderSuccess
}

// renderGFMTable renders a table as the reference's turndown GFM rules do:
// every row "| a | b |" with each cell trimmed, its newlines as <br>, its
// pipes escaped and padded to three characters; a first row (or a <thead>
// row) of <th> cells followed by the "| --- |" separator, with alignment
// colons from align or text-align; a table without one given an empty
// heading row. A table holding another table is left to the converter.
func renderGFMTable(ctx converter.Context, w converter.Writer, n *html.Node) converter.RenderStatus {
	var rows []*html.Node
	inThead := map[*html.Node]bool{}
	for _, c := range elementChildren(n) {
		switch c.Data {
		case "tr":
			rows = append(rows, c)
		case "thead", "tbody", "tfoot":
			for _, r := range elementChildren(c, "tr") {
				rows = append(rows, r)
				inThead[r] = c.Data == "thead"
			}
		}
	}
	nested := false
	var find func(*html.Node)
	find = func(m *html.Node) {
		for c := m.FirstChild; c != nil && !nested; c = c.NextSibling {
			nested = nested || (c.Type == html.ElementNode && c.Data == "table")
			find(c)
		}
	}
	find(n)
	if nested || len(rows) == 0 {
		return converter.RenderTryNext
	}
	var lines []string
	cols, headed := 0, false
	for i, r := range rows {
		cells := elementChildren(r, "th", "td")
		if len(cells) == 0 {
			continue
		}
		cols = max(cols, len(cells))
		var line strings.Builder
		heading := i == 0 || inThead[r]
		for j, cell := range cells {
			var buf bytes.Buffer
			ctx.RenderChildNodes(ctx, &buf, cell)
			line.WriteString(gfmCell(ctx, buf.Bytes(), j))
			heading = heading && cell.Data == "th"
		}
		lines = append(lines, line.String())
		if heading && !headed && len(lines) == 1 {
			headed = true
			var sep strings.Builder
			for j, cell := range cells {
				sep.WriteString(gfmCell(ctx, []byte(gfmBorder(cell)), j))
			}
			lines = append(lines, sep.String())
		}
	}
	if len(lines) == 0 {
		return converter.RenderTryNext
	}
	if !headed {
		lines = append([]string{"|" + strings.Repeat("     |", cols), "|" + strings.Repeat(" --- |", cols)}, lines...)
	}
	w.WriteString("\n\n" + strings.Join(lines, "\n") + "\n\n")
	return converter.RenderSuccess
}

// gfmCell renders one table cell's Markdown content; i is its column.
func gfmCell(ctx converter.Context, content []byte, i int) string {
	s := strings.TrimSpace(string(content))
	s = strings.ReplaceAll(s, string(marker.MarkerEscaping)+"|", "|")
	s = string(ctx.UnEscapeContent([]byte(s)))
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n\r", "<br>"), "\n", "<br>")
	s = pipeRun().ReplaceAllString(s, `\|`)
	if n := utf8.RuneCountInString(s); n < 3 {
		s += strings.Repeat(" ", 3-n)
	}
	if i == 0 {
		return "| " + s + " |"
	}
	return " " + s + " |"
}

// pipeRun is a run of pipes in a table cell, escaped as one.
var pipeRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\|+`) })

// gfmBorder is the separator of a heading cell's column.
func gfmBorder(cell *html.Node) string {
	align := strings.ToLower(strings.TrimSpace(attr(cell, "align")))
	if align == "" {
		for _, decl := range strings.Split(attr(cell, "style"), ";") {
			if k, v, ok := strings.Cut(decl, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "text-align") {
				align = strings.ToLower(strings.TrimSpace(v))
			}
		}
	}
	switch align {
	case "left":
		return ":---"
	case "right":
		return "---:"
	case "center":
		return ":---:"
	}
	return "---"
}
