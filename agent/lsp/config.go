package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultMaxLocations     = 100
	DefaultMaxResultChars   = 16000
	DefaultTimeout          = 60 * time.Second
	DefaultMaxMessageBytes  = 8 << 20
	DefaultMaxDocumentBytes = 4 << 20
	// stopWait bounds a server's graceful shutdown (shutdown, exit)
	// before its process tree is killed.
	stopWait = 2 * time.Second
)

// Server is one configured language server.
type Server struct {
	// Name names the server in results and errors ("typescript").
	Name string `json:"name"`
	// Command is the executable, looked up in PATH unless it holds a
	// slash (then relative to the session's cwd); Args its arguments.
	// It is run without a shell, under the session's sandbox mode.
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Extensions maps each lower-case file extension the server handles
	// (".ts") to its LSP language id ("typescript").
	Extensions map[string]string `json:"extensions"`
	// InitializationOptions are sent with initialize (nil: null).
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty"`
	// Install tells the user how to install the server, for the error of
	// a server that is not installed.
	Install string `json:"install,omitempty"`
}

// Config configures the lsp tool. The zero value of a bound means its
// default.
type Config struct {
	// Servers are the language servers, by the extensions they handle;
	// nil means DefaultServers.
	Servers []Server
	// MaxLocations caps the locations a result lists; MaxResultChars its
	// whole text (UTF-16 code units, the reference's unit).
	MaxLocations, MaxResultChars int
	// Timeout bounds one call: starting the server when it is not
	// running, opening the file and the request.
	Timeout time.Duration
	// MaxMessageBytes caps one message from a server; a larger one ends
	// the server. MaxDocumentBytes caps the file sent to it.
	MaxMessageBytes, MaxDocumentBytes int
}

// DefaultServers are typescript-language-server (TypeScript and
// JavaScript) and gopls (Go).
func DefaultServers() []Server {
	return []Server{
		{
			Name: "typescript", Command: "typescript-language-server", Args: []string{"--stdio"},
			Extensions: map[string]string{
				".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
				".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
			},
			Install: "npm install -g typescript-language-server typescript@5",
		},
		{
			Name: "go", Command: "gopls", Extensions: map[string]string{".go": "go"},
			Install: "go install golang.org/x/tools/gopls@latest",
		},
	}
}

// ParseServer parses one server given as JSON (the Server fields; the
// --lsp-server flag), strictly: unknown members are refused.
func ParseServer(spec string) (Server, error) {
	var s Server
	dec := json.NewDecoder(bytes.NewReader([]byte(spec)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Server{}, fmt.Errorf("lsp: server %s: %w", spec, err)
	}
	if dec.More() {
		return Server{}, fmt.Errorf("lsp: server %s: text after the object", spec)
	}
	return s, s.check()
}

// check validates a server's configuration.
func (s *Server) check() error {
	if s.Name == "" || s.Command == "" || len(s.Extensions) == 0 {
		return fmt.Errorf("lsp: server %q needs a name, a command and extensions", s.Name)
	}
	for ext, lang := range s.Extensions {
		if !strings.HasPrefix(ext, ".") || len(ext) < 2 || strings.ContainsAny(ext[1:], "./") || ext != strings.ToLower(ext) || lang == "" {
			return fmt.Errorf("lsp: server %q: extension %q (want a lower-case \".ext\" and a language id)", s.Name, ext)
		}
	}
	return nil
}

// resolved is c with every default filled in and its servers checked.
func (c Config) resolved() (Config, error) {
	if c.Servers == nil {
		c.Servers = DefaultServers()
	}
	seen := map[string]string{}
	for i := range c.Servers {
		s := &c.Servers[i]
		if err := s.check(); err != nil {
			return c, err
		}
		for ext := range s.Extensions {
			if other, ok := seen[ext]; ok {
				return c, fmt.Errorf("lsp: extension %q is handled by both %q and %q", ext, other, s.Name)
			}
			seen[ext] = s.Name
		}
	}
	orDefault(&c.MaxLocations, DefaultMaxLocations)
	orDefault(&c.MaxResultChars, DefaultMaxResultChars)
	orDefault(&c.Timeout, DefaultTimeout)
	orDefault(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	orDefault(&c.MaxDocumentBytes, DefaultMaxDocumentBytes)
	return c, nil
}

// orDefault sets *v to def when it is unset (zero or negative).
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Check reports a configuration the tool would refuse (at start-up, so a
// mistake fails loud rather than at the first call).
func (c Config) Check() error {
	_, err := c.resolved()
	return err
}

// serverFor returns the server handling the file p, by its final
// extension (lower-cased), and the file's language id.
func (c *Config) serverFor(p string) (*Server, string, bool) {
	ext := strings.ToLower(filepath.Ext(p))
	for i := range c.Servers {
		if lang, ok := c.Servers[i].Extensions[ext]; ok {
			return &c.Servers[i], lang, true
		}
	}
	return nil, "", false
}

// extensions lists every configured extension, sorted.
func (c *Config) extensions() []string {
	var out []string
	for _, s := range c.Servers {
		for ext := range s.Extensions {
			out = append(out, ext)
		}
	}
	slices.Sort(out)
	return out
}
