package mcp

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport names how reel reaches an MCP server.
type Transport string

// The transports, named as ACP's McpServer variants are.
const (
	// TransportStdio runs the server as a child process and speaks
	// newline-delimited JSON-RPC over its stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP is the streamable HTTP transport.
	TransportHTTP Transport = "http"
	// TransportSSE is the older HTTP+SSE transport (protocol 2024-11-05).
	TransportSSE Transport = "sse"
)

// EnvVar is one environment variable set for a stdio server.
type EnvVar struct {
	// Name is the variable's name.
	Name string
	// Value is its value.
	Value string
}

// Header is one HTTP header sent with every request to an HTTP or SSE
// server.
type Header struct {
	// Name is the header's field name.
	Name string
	// Value is its value.
	Value string
}

// ServerConfig is one MCP server to connect, as ACP's session/new and
// session/load describe it (type McpServer). Which fields apply depends on
// Transport; the others must be empty.
type ServerConfig struct {
	// Name identifies the server; it is unique within one Connect and
	// becomes the middle part of its tools' names (mcp__NAME__TOOL).
	Name string
	// Transport is how the server is reached.
	Transport Transport

	// Command is the executable of a stdio server: a path, or a name
	// looked up in reel's PATH. A relative path is relative to
	// Options.Dir.
	Command string
	// Args are the command's arguments.
	Args []string
	// Env is added to the server's environment (see Options.Environ);
	// a later entry wins over an earlier one and over the base.
	Env []EnvVar

	// URL is the endpoint of an HTTP or SSE server (http or https).
	URL string
	// Headers are sent with every request to an HTTP or SSE server. Their
	// values are never logged.
	Headers []Header
}

// Options configure [Connect]. The zero value is usable.
type Options struct {
	// Logger receives the servers' stderr lines and what the client
	// notices (a server that exits, a renamed or skipped tool). nil
	// discards. Header values and environment values are never logged.
	Logger *slog.Logger
	// ConnectTimeout bounds each server's start, initialization and tool
	// listing; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// ShutdownGrace is how long Close waits for a stdio server to exit
	// after its stdin is closed, and again after SIGTERM, before it kills
	// the server's process group; 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Dir is the working directory of stdio servers (the session's cwd);
	// empty means reel's own.
	Dir string
	// Environ is the base environment of stdio servers, "NAME=value"
	// entries; nil means os.Environ(). The engine passes its environment
	// without the model keys, as it does for tools.
	Environ []string
	// Roots are absolute directories offered to servers that ask for the
	// client's roots (typically the session's cwd); none by default.
	Roots []string
	// HTTPClient is the base client of HTTP and SSE servers (its
	// Transport is wrapped to add each server's headers); nil means a
	// client with http.DefaultTransport. Its Timeout, if any, applies to
	// every request, including long-lived streams.
	HTTPClient *http.Client
	// ClientVersion is the version reel announces in initialize; empty
	// means "dev".
	ClientVersion string
	// MaxArgBytes caps the arguments of one call; 0 means
	// DefaultMaxArgBytes.
	MaxArgBytes int
	// MaxResultBytes caps the text a call returns to the model when the
	// call's tools.Env sets no MaxInlineBytes; 0 means
	// tools.DefaultMaxInlineBytes.
	MaxResultBytes int
	// Transport, when not nil, reaches every server instead of its
	// configured transport: no process is started and no URL is
	// dialled, and everything else (the configuration check, initialize,
	// the tool listing, naming, calls, rendering) is as for a live server.
	// A replay serves its recorded servers this way (package mcpreplay).
	// A server whose transport fails to connect fails at StageStart.
	Transport func(cfg ServerConfig) sdk.Transport
}

// Defaults and bounds.
const (
	// DefaultConnectTimeout is the default of Options.ConnectTimeout.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultShutdownGrace is the default of Options.ShutdownGrace.
	DefaultShutdownGrace = 2 * time.Second
	// DefaultMaxArgBytes is the default of Options.MaxArgBytes: 1 MiB.
	DefaultMaxArgBytes = 1 << 20
	// MaxArgDepth is how deeply the objects and arrays of one call's
	// arguments may nest (the top object is level 1); deeper arguments
	// are refused before anything is asked or sent.
	MaxArgDepth = 64
	// MaxStderrBytes is how much of a stdio server's stderr is kept and
	// forwarded to the logger; the rest is read, counted and dropped.
	MaxStderrBytes = 64 << 10
	// MaxStderrLineBytes cuts a longer stderr line into several records.
	MaxStderrLineBytes = 4 << 10
	// MaxTools is the most tools one server may contribute; further tools
	// are skipped.
	MaxTools = 512
	// MaxSchemaBytes is the largest input schema accepted; a tool with a
	// larger one is skipped.
	MaxSchemaBytes = 64 << 10
	// MaxDescriptionBytes cuts longer tool descriptions.
	MaxDescriptionBytes = 8 << 10
	// MaxInstructionsBytes cuts longer server instructions.
	MaxInstructionsBytes = 8 << 10
	// ProtocolVersion is the MCP protocol version reel asks for in
	// initialize; servers may negotiate an older one the SDK supports.
	ProtocolVersion = "2025-11-25"
)

// validate checks one configuration on its own.
func (c *ServerConfig) validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("%w: the server has no name", ErrInvalidConfig)
	}
	if strings.Contains(c.Name, "__") {
		// mcp__SERVER__TOOL would not say where the server's name ends:
		// "a__b"'s tool "c" and "a"'s tool "b__c" would share a name.
		return fmt.Errorf("%w: the server name %q contains \"__\", which separates server and tool in MCP tool names (mcp__SERVER__TOOL); rename the server", ErrInvalidConfig, c.Name)
	}
	switch c.Transport {
	case TransportStdio:
		if c.Command == "" {
			return fmt.Errorf("%w: a stdio server needs a command", ErrInvalidConfig)
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return fmt.Errorf("%w: a stdio server takes no url or headers", ErrInvalidConfig)
		}
		for _, e := range c.Env {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.ContainsRune(e.Value, 0) {
				return fmt.Errorf("%w: environment variable %q is not a valid name=value pair", ErrInvalidConfig, e.Name)
			}
		}
	case TransportHTTP, TransportSSE:
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
			return fmt.Errorf("%w: an %s server takes no command, args or env", ErrInvalidConfig, c.Transport)
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: url %q is not an http or https URL", ErrInvalidConfig, redactURL(c.URL))
		}
		for _, h := range c.Headers {
			if !validHeaderName(h.Name) || strings.ContainsAny(h.Value, "\r\n\x00") {
				return fmt.Errorf("%w: header %q is not a valid HTTP header", ErrInvalidConfig, h.Name)
			}
		}
	case "":
		return fmt.Errorf("%w: the server has no transport", ErrInvalidConfig)
	default:
		return fmt.Errorf("%w: transport %q is not supported (stdio, http, sse)", ErrInvalidConfig, c.Transport)
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// redactURL is s with any password replaced, for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
