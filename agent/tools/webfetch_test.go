package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// webFetchArgs is the JSON arguments of a web_fetch call of u.
func webFetchArgs(t testing.TB, u string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]string{"url": u})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fetchEnv is an Env for web_fetch, which needs none of it.
func fetchEnv(t *testing.T) *Env { return &Env{Cwd: t.TempDir()} }

// strictServer is a test server whose handler first checks that the
// request carries what web_fetch sends and nothing it must not.
func strictServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		for _, h := range []string{"Cookie", "Authorization", "Proxy-Authorization"} {
			if v := r.Header.Get(h); v != "" {
				t.Errorf("request to %s carries %s: %q", r.URL, h, v)
			}
		}
		if got := r.Header.Get("User-Agent"); got != DefaultWebFetchUserAgent {
			t.Errorf("User-Agent %q, want %q", got, DefaultWebFetchUserAgent)
		}
		if got := r.Header.Get("Accept"); got != webFetchAccept {
			t.Errorf("Accept %q, want %q", got, webFetchAccept)
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestWebFetchMenuPage fetches a page with the structures of the
// reference's recorded menu page (written differently: numeric entities, a
// full head, line breaks) and compares the result with the recorded text,
// the fixture server's URL swapped for the test server's.
func TestWebFetchMenuPage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("testdata", "webfetch", "menu.html"))
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(filepath.Join("testdata", "webfetch", "menu.recorded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := strictServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/menu.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	res, err := WebFetch{Transport: srv.Client().Transport}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, srv.URL+"/menu.html"))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Kind != KindFetch || res.Title != srv.URL+"/menu.html" || res.Locations != nil {
		t.Fatalf("result %+v", res)
	}
	want := strings.Replace(string(recorded), "http://127.0.0.1:43117", srv.URL, 1)
	if res.Text != want {
		t.Errorf("text differs from the recording\n got: %q\nwant: %q", res.Text, want)
	}
	// The parts that matter, one by one, so a difference reads well.
	for _, part := range []string{
		"Fetched " + srv.URL + "/menu.html (HTTP 200)\n\n",
		"Menu\n\n# Café menu\n\n",
		"Prices include **service & _tax_** — updated daily.",
		"\n\n-   Espresso\n-   Flat white\n\n",
		"| Drink | Price |\n| --- | --- |\n| Espresso | €2  |\n| Flat white | €3  |",
		"See [today’s specials](https://fixture.invalid/specials).",
	} {
		if !strings.Contains(res.Text, part) {
			t.Errorf("text lacks %q", part)
		}
	}
	for _, gone := range []string{"font-family", "track()", "Enable scripts"} {
		if strings.Contains(res.Text, gone) {
			t.Errorf("text keeps %q of a script, style or noscript", gone)
		}
	}
	meta, ok := WebFetchMetaOf(res)
	if !ok || meta != (WebFetchMeta{URL: srv.URL + "/menu.html", StatusCode: 200}) {
		t.Errorf("meta %+v %v", meta, ok)
	}
}

// TestWebFetchMarkdown holds the conversion to turndown's output on the
// structures web pages use.
func TestWebFetchMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, html, want string }{
		{"nested list", `<ul><li>One<ul><li>One a</li><li>One b</li></ul></li><li>Two</li></ul>`,
			"-   One\n    -   One a\n    -   One b\n-   Two"},
		{"ordered list", `<ol start="3"><li>c</li><li>d</li></ol>`, "3.  c\n4.  d"},
		{"emphasis", `<p><b>bold</b>, <i>it</i>, <del>gone</del>, <code>x := 1</code></p>`, "**bold**, _it_, ~~gone~~, `x := 1`"},
		{"headings", `<h2>Two</h2><h3>Three</h3>`, "## Two\n\n### Three"},
		{"aligned table", `<table><tr><th align="right">n</th><th style="text-align: center">name</th></tr><tr><td>1</td><td>a|b</td></tr></table>`,
			"| n   | name |\n| ---: | :---: |\n| 1   | a\\|b |"},
		{"headless table", `<table><tr><td>a</td><td>b</td></tr></table>`, "|     |     |\n| --- | --- |\n| a   | b   |"},
		{"code block", "<pre><code>line 1\nline 2</code></pre>", "```\nline 1\nline 2\n```"},
		{"link and title", `<html><head><title>T</title></head><body><a href="/rel">rel</a></body></html>`, "T\n\n[rel](/rel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := htmlToMarkdown(context.Background(), tc.html); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	deep := strings.Repeat("<div>", maxMarkdownDepth+1) + "x"
	if got := htmlToMarkdown(context.Background(), deep); got != deep {
		t.Errorf("markup nested beyond %d levels was converted: %.60q", maxMarkdownDepth, got)
	}
	if got := htmlToMarkdown(context.Background(), strings.Repeat("<p>x</p>", 600)); strings.Contains(got, "<p>") {
		t.Errorf("600 sibling paragraphs were not converted: %.60q", got)
	}
}

// TestWebFetchResponses covers what each kind of response becomes.
func TestWebFetchResponses(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "plain <b>text</b> & more\n")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		fmt.Fprint(w, `{"a": [1, 2], "b": "<c>"}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", `text/plain; charset="ISO-8859-1"`)
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/sjis", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=shift_jis")
		fmt.Fprint(w, "x")
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffing
		w.Write([]byte("what am I"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>Not here</h1>")
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "boom")
	})
	srv := strictServer(t, mux.ServeHTTP)
	for _, tc := range []struct {
		path    string
		isError bool
		want    string
	}{
		{"/text", false, "Fetched %s/text (HTTP 200)\n\nplain <b>text</b> & more\n"},
		{"/json", false, "Fetched %s/json (HTTP 200)\n\n{\"a\": [1, 2], \"b\": \"<c>\"}"},
		{"/latin1", false, "Fetched %s/latin1 (HTTP 200)\n\ncafé"},
		{"/sjis", true, `Error: unsupported charset "shift_jis"`},
		{"/png", true, `Error: unsupported content type "image/png"`},
		{"/untyped", true, `Error: unsupported content type "unknown"`},
		{"/missing", false, "Fetched %s/missing (HTTP 404)\n\n# Not here"},
		{"/broken", false, "Fetched %s/broken (HTTP 500)\n\nboom"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res, err := WebFetch{Transport: srv.Client().Transport}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, srv.URL+tc.path))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, srv.URL)
			}
			if res.Text != want || res.IsError != tc.isError {
				t.Errorf("got %q (isError %v), want %q (isError %v)", res.Text, res.IsError, want, tc.isError)
			}
			if _, ok := WebFetchMetaOf(res); ok == tc.isError {
				t.Errorf("WebFetchMetaOf ok = %v for isError %v", ok, tc.isError)
			}
		})
	}
}

// TestWebFetchRedirects follows same-origin redirects within the limit and
// refuses the rest; cookies set on the way are never sent back.
func TestWebFetchRedirects(t *testing.T) {
	var other *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
		if n == 0 {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-creds", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://user:pw@"+r.Host+"/hop/0")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/no-location", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusSeeOther)
	})
	srv := strictServer(t, mux.ServeHTTP)
	var otherHits atomic.Int32
	other = httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	otherURL, _ := url.Parse(other.URL)

	for _, tc := range []struct {
		name, path string
		max        int
		isError    bool
		want       string
	}{
		{"within the limit", "/hop/5", 0, false, "Fetched %s/hop/0 (HTTP 200)\n\narrived"},
		{"over the limit", "/hop/6", 0, true, "Error: exceeded the maximum of 5 redirects"},
		{"over a smaller limit", "/hop/2", 1, true, "Error: exceeded the maximum of 1 redirects"},
		{"none followed", "/hop/1", -1, true, "Error: exceeded the maximum of 0 redirects"},
		{"to file:", "/to-file", 0, true, `Error: unsupported URL scheme "file:" (only http and https are allowed)`},
		{"to credentials", "/to-creds", 0, true, "Error: credentials in URLs are not allowed"},
		{"cross-origin", "/to-other", 0, true, "Error: cross-origin redirect to http://" + otherURL.Host + " is not followed automatically; retry against that URL directly"},
		{"without Location", "/no-location", 0, true, "Error: redirect response (HTTP 303) without a Location header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := WebFetch{Transport: srv.Client().Transport, MaxRedirects: tc.max}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, srv.URL+tc.path))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, srv.URL)
			}
			if res.Text != want || res.IsError != tc.isError {
				t.Errorf("got %q (isError %v), want %q", res.Text, res.IsError, want)
			}
		})
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
}

// TestWebFetchBodyCap refuses a declared length over the cap and cuts a
// body that grows past it, or past the character caps, with the notice.
func TestWebFetchBodyCap(t *testing.T) {
	body := strings.Repeat("0123456789", 300) // 3000 bytes
	srv := strictServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/declared" {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		} else {
			w.(http.Flusher).Flush() // chunked: no length declared
		}
		fmt.Fprint(w, body)
	})
	run := func(t *testing.T, wf WebFetch, path string) Result {
		t.Helper()
		wf.Transport = srv.Client().Transport
		res, err := wf.Run(context.Background(), fetchEnv(t), webFetchArgs(t, srv.URL+path))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Run("declared", func(t *testing.T) {
		res := run(t, WebFetch{MaxResponseBytes: 1000}, "/declared")
		if want := "Error: response exceeds the maximum of 1000 bytes"; !res.IsError || res.Text != want {
			t.Errorf("got %q, want %q", res.Text, want)
		}
	})
	t.Run("streamed", func(t *testing.T) {
		res := run(t, WebFetch{MaxResponseBytes: 1000}, "/streamed")
		want := "Fetched " + srv.URL + "/streamed (HTTP 200)\n\n" + body[:1000] + webFetchTruncated
		if res.IsError || res.Text != want {
			t.Errorf("got %q", res.Text)
		}
		if meta, ok := WebFetchMetaOf(res); !ok || !meta.Truncated || meta.StatusCode != 200 {
			t.Errorf("meta %+v %v", meta, ok)
		}
	})
	t.Run("exactly at the cap", func(t *testing.T) {
		res := run(t, WebFetch{MaxResponseBytes: int64(len(body))}, "/streamed")
		if res.IsError || strings.HasSuffix(res.Text, webFetchTruncated) {
			t.Errorf("a body of exactly the cap was cut: %q", res.Text[len(res.Text)-90:])
		}
	})
	t.Run("characters", func(t *testing.T) {
		res := run(t, WebFetch{MaxBodyChars: 10}, "/streamed")
		if want := "Fetched " + srv.URL + "/streamed (HTTP 200)\n\n0123456789" + webFetchTruncated; res.Text != want {
			t.Errorf("got %q", res.Text)
		}
	})
	t.Run("output", func(t *testing.T) {
		res := run(t, WebFetch{MaxOutputChars: 1500}, "/declared")
		if n := utf8.RuneCountInString(res.Text); n != 1500 || !strings.HasSuffix(res.Text, webFetchTruncated) {
			t.Errorf("%d characters, ending %q", n, res.Text[len(res.Text)-40:])
		}
	})
}

// TestWebFetchTimeoutAndCancel: a slow server runs into the tool's
// timeout (an error result), a cancelled call returns a Go error.
func TestWebFetchTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := strictServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/slow-body" {
			w.Write([]byte("start"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	for _, path := range []string{"/slow-head", "/slow-body"} {
		t.Run("timeout"+path, func(t *testing.T) {
			start := time.Now()
			res, err := WebFetch{Transport: srv.Client().Transport, Timeout: 200 * time.Millisecond}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, srv.URL+path))
			if err != nil {
				t.Fatal(err)
			}
			if want := "Error: web fetch timed out after 200ms"; !res.IsError || res.Text != want {
				t.Errorf("got %q, want %q", res.Text, want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
		t.Run("cancel"+path, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			res, err := WebFetch{Transport: srv.Client().Transport}.Run(ctx, fetchEnv(t), webFetchArgs(t, srv.URL+path))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, result %+v; want context.Canceled", err, res)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (WebFetch{Transport: srv.Client().Transport}).Run(ctx, fetchEnv(t), webFetchArgs(t, srv.URL+"/x")); !errors.Is(err, context.Canceled) {
		t.Errorf("already cancelled: err %v", err)
	}
}

// TestWebFetchRefusals: what is refused before any request is made.
func TestWebFetchRefusals(t *testing.T) {
	var hits atomic.Int32
	srv := strictServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	long := srv.URL + "/" + strings.Repeat("a", DefaultWebFetchMaxURLLength)
	for _, tc := range []struct {
		name, url string
		off       bool
		want      string
	}{
		{"file", "file:///etc/passwd", false, `Error: unsupported URL scheme "file:" (only http and https are allowed)`},
		{"ftp", "ftp://example.com/x", false, `Error: unsupported URL scheme "ftp:" (only http and https are allowed)`},
		{"data", "data:text/plain,hi", false, `Error: unsupported URL scheme "data:" (only http and https are allowed)`},
		{"javascript", "javascript:alert(1)", false, `Error: unsupported URL scheme "javascript:" (only http and https are allowed)`},
		{"gopher", "gopher://example.com/1", false, `Error: unsupported URL scheme "gopher:" (only http and https are allowed)`},
		{"upper-case scheme", "FILE:///etc/passwd", false, `Error: unsupported URL scheme "file:" (only http and https are allowed)`},
		{"no scheme", "example.com/page", false, "Error: invalid URL: example.com/page"},
		{"no host", "http:///path", false, "Error: invalid URL: http:///path"},
		{"opaque", "http:example.com", false, "Error: invalid URL: http:example.com"},
		{"unparseable", "http://[::1", false, "Error: invalid URL: http://[::1"},
		{"credentials", strings.Replace(srv.URL, "http://", "http://user:pw@", 1), false, "Error: credentials in URLs are not allowed"},
		{"user only", strings.Replace(srv.URL, "http://", "http://user@", 1), false, "Error: credentials in URLs are not allowed"},
		{"too long", long, false, "Error: URL exceeds the maximum length of 2048"},
		{"blank", "  ", false, "Error: url must be a non-empty string"},
		{"network off", srv.URL + "/page", true, "Error: web_fetch is unavailable: reel was started with --network off, so this session has no network access. Nothing was fetched."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := WebFetch{Transport: srv.Client().Transport, NetworkOff: tc.off}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, tc.url))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text != tc.want || res.Kind != KindFetch {
				t.Errorf("got %+v, want error %q", res, tc.want)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("refused calls made %d requests", n)
	}
}

// TestWebFetchDefaults fetches through the default transport, and checks
// the normalized URL the header shows.
func TestWebFetchDefaults(t *testing.T) {
	srv := strictServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, r.URL.Path)
	})
	u := strings.Replace(srv.URL, "http://", "HTTP://", 1) + "#frag"
	res, err := WebFetch{}.Run(context.Background(), fetchEnv(t), webFetchArgs(t, u))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Fetched " + srv.URL + "/ (HTTP 200)\n\n/"; res.Text != want {
		t.Errorf("got %q, want %q", res.Text, want)
	}
	if res.Title != u {
		t.Errorf("title %q, want the URL as given", res.Title)
	}
}

// TestWebFetchArgs holds the argument parse and the description.
func TestWebFetchArgs(t *testing.T) {
	for _, tc := range []struct{ raw, wantErr string }{
		{`{"url":"http://x/"}`, ""},
		{`{"url":"http://x/","extra":null}`, ""},
		{`{}`, `tools: web_fetch: argument "url": missing (required)`},
		{`{"url":1}`, `tools: web_fetch: argument "url": want a string, got a number`},
		{`{"URL":"http://x/"}`, `tools: web_fetch: argument "URL": unknown argument; names are case-sensitive (did you mean "url"?)`},
		{`{"url":"http://x/","prompt":"summarize"}`, `tools: web_fetch: argument "prompt": unknown argument (want one of "url")`},
		{`{"url":"a","url":"b"}`, `tools: web_fetch: argument "url": given more than once`},
		{`[1]`, `tools: web_fetch: arguments: want a JSON object`},
	} {
		_, err := ParseWebFetchArgs(json.RawMessage(tc.raw))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.raw, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrInvalidArgs)):
			t.Errorf("%s: err %v, want %q", tc.raw, err, tc.wantErr)
		}
	}
	if title, kind, locs := describeWebFetch(json.RawMessage(`{"url":"https://go.dev/doc"}`)); title != "https://go.dev/doc" || kind != KindFetch || locs != nil {
		t.Errorf("describe: %q %q %v", title, kind, locs)
	}
	if title, kind, _ := describeWebFetch(json.RawMessage(`{"url":7}`)); title != "web_fetch" || kind != KindFetch {
		t.Errorf("describe of bad arguments: %q %q", title, kind)
	}
	if _, err := NewSet(WebFetch{}); err != nil {
		t.Errorf("NewSet: %v", err)
	}
	want := `{"name":"web_fetch","description":"Fetch the content of a specific HTTP(S) URL and return it decoded to text.","parameters":{"type":"object","properties":{"url":{"type":"string","description":"The HTTP(S) URL to fetch."}},"required":["url"]}}`
	if got, _ := json.Marshal(WebFetch{}.Schema()); string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

// FuzzWebFetchURL: parsing the url argument never panics, accepts only
// absolute http and https URLs without credentials, and what it accepts
// it accepts again, unchanged, in its normalized form.
func FuzzWebFetchURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:43117/menu.html", "https://Example.COM:443", "file:///etc/passwd", "javascript:alert(1)", "http://u:p@h/", "//h/p", "http://[::1]:80/a?b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := webFetchArgs(t, s)
		a, err := ParseWebFetchArgs(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if utf8.ValidString(s) && a.URL != s {
			t.Fatalf("parsed %q from %q", a.URL, s)
		}
		_, _, _ = describeWebFetch(raw)
		u, err := parseFetchURL(a.URL, DefaultWebFetchMaxURLLength)
		if err != nil {
			var fe *webFetchError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: error %T", s, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("%q accepted with scheme %q", s, u.Scheme)
		}
		if u.User != nil || u.Host == "" || u.Opaque != "" {
			t.Fatalf("%q accepted as %#v", s, u)
		}
		norm := u.String()
		again, err := parseFetchURL(norm, len(norm))
		if err != nil || again.String() != norm {
			t.Fatalf("%q normalized to %q, which parses to %v, %v", s, norm, again, err)
		}
	})
}

// TestWebFetchBlockedAddresses: without a test transport, web_fetch does
// not connect to link-local, multicast or unspecified addresses, cloud
// metadata services in or outside link-local, by any spelling or IPv6
// embedding of their address or by name, while loopback stays reachable.
func TestWebFetchBlockedAddresses(t *testing.T) {
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://224.0.0.1/", "http://0.0.0.0:9/", "http://[::]:9/", "http://[fd00:ec2::254]/",
		"http://100.100.100.200/", "http://168.63.129.16/", "http://[64:ff9b::a9fe:a9fe]/", "http://[::169.254.169.254]/", "http://[2002:a9fe:a9fe::1]/",
		"http://2852039166/", "http://0xA9FEA9FE/", "http://0251.0376.0251.0376/", "http://169.254.169.254./", "http://metadata.google.internal./", "http://0/"} {
		res, err := WebFetch{}.Run(context.Background(), &Env{Cwd: t.TempDir()}, json.RawMessage(`{"url":"`+u+`"}`))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if !res.IsError || !strings.Contains(res.Text, "which web_fetch does not connect to") {
			t.Errorf("%s: %+v", u, res)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "local") }))
	defer srv.Close()
	res, err := WebFetch{}.Run(context.Background(), &Env{Cwd: t.TempDir()}, json.RawMessage(`{"url":"`+srv.URL+`/"}`))
	if err != nil || res.IsError || !strings.HasSuffix(res.Text, "local") {
		t.Errorf("loopback: %+v %v", res, err)
	}
}
