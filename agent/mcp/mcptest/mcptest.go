package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The modes of the server.
const (
	// ModeTools serves the ordinary test tools (see [New]).
	ModeTools = "tools"
	// ModeHostile serves tools whose names no model API accepts as they
	// are: "../../x", a 300-character name, a unicode name, and "a.b"
	// next to "a_b".
	ModeHostile = "hostile"
	// ModeExitOnInit reads the first request, writes a line to stderr and
	// exits with status 3 without answering.
	ModeExitOnInit = "exit-on-init"
	// ModeHang reads its input and never answers.
	ModeHang = "hang"
	// ModeFlood writes FloodBytes to stderr before serving ModeTools.
	ModeFlood = "flood"
	// ModeStubborn serves ModeTools but ignores SIGTERM and does not exit
	// when its input ends: only SIGKILL ends it.
	ModeStubborn = "stubborn"
	// ModeRecord serves one tool, record, that appends the argument bytes
	// it received, as they came over the wire, to the file RecordFile in
	// the server's working directory (one call a line) and returns them.
	ModeRecord = "record"
	// ModeNested serves ModeTools' tools with "b__" before each name
	// (b__echo, b__touch, …): a server called "a" then offers
	// mcp__a__b__touch, the name a server called "a__b" gives its touch.
	ModeNested = "nested"
)

// RecordFile is the file ModeRecord's tool appends the arguments of each
// call to, in the server's working directory.
const RecordFile = "mcp-received"

// Modes lists every mode.
var Modes = []string{ModeTools, ModeHostile, ModeExitOnInit, ModeHang, ModeFlood, ModeStubborn, ModeRecord, ModeNested}

// FloodBytes is how much ModeFlood writes to stderr: 4 MiB in lines of 1 KiB.
const FloodBytes = 4 << 20

// State is what an in-process server lets a test observe.
type State struct {
	// Cancelled counts calls of slow that ended because the client
	// cancelled them.
	Cancelled atomic.Int64
	// Started counts calls of slow that began.
	Started atomic.Int64
}

// PNG is the 2×2 image the image and mixed tools return: red at (0,0),
// blue at (1,1), the rest transparent. It is a literal, not encoded when
// the package loads: every reel process links this package (reel
// mcp-standin), and encoding cost each start a compressor's allocations.
var PNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x06, 0x00, 0x00, 0x00, 0x72, 0xb6, 0x0d,
	0x24, 0x00, 0x00, 0x00, 0x16, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x62, 0xfa, 0xcf, 0xc0, 0xf0,
	0x9f, 0x01, 0x01, 0xfe, 0xff, 0x07, 0x04, 0x00, 0x00, 0xff, 0xff, 0x22, 0x14, 0x03, 0xff, 0xf5,
	0xa6, 0x97, 0x21, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// HostileNames are the tool names ModeHostile offers.
var HostileNames = []string{"../../x", strings.Repeat("a", 300), "héllo✓wörld", "a.b", "a_b"}

// New returns a server in mode (ModeTools, ModeHostile, ModeFlood,
// ModeStubborn, ModeRecord or ModeNested; the other modes only exist over stdio, see
// [Main]).
//
// ModeTools offers: echo {text} (the text back), add {a, b} (the sum as
// text and as structured content), slow {} (blocks until the call is
// cancelled, counted in st.Cancelled, or 60 s pass), fail {message} (an
// isError result), protoerr {} (a JSON-RPC error), image {} (a text and the
// PNG), mixed {} (every content kind and structured content), big {bytes}
// (that many bytes of text), stats {} ("started=N cancelled=N"), pid {}
// (the server's process id), roots {} (the client's roots, NAME=URI per
// line), spawn {} (starts "sleep 600" in the server's
// process group with the server's stderr, returns its pid).
func New(mode string, st *State) *sdk.Server {
	if st == nil {
		st = new(State)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "reel-testserver", Version: "1.0.0"}, &sdk.ServerOptions{
		Logger:       slog.New(slog.DiscardHandler),
		Instructions: "Test server (" + mode + ").",
	})
	if mode == ModeHostile {
		for _, n := range HostileNames {
			s.AddTool(&sdk.Tool{Name: n, Description: "hostile name " + strconv.Quote(n), InputSchema: objectSchema(nil)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return text("called " + n), nil
				})
		}
		return s
	}
	if mode == ModeRecord {
		s.AddTool(&sdk.Tool{Name: "record", Description: "Record the arguments as received.", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				f, err := os.OpenFile(RecordFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				if err != nil {
					return nil, err
				}
				_, werr := f.Write(append(append([]byte(nil), r.Params.Arguments...), '\n'))
				if err := errors.Join(werr, f.Close()); err != nil {
					return nil, err
				}
				return text(string(r.Params.Arguments)), nil
			})
		return s
	}
	prefix := ""
	if mode == ModeNested {
		prefix = "b__"
	}
	add := func(name, desc string, props map[string]any, h sdk.ToolHandler) {
		s.AddTool(&sdk.Tool{Name: prefix + name, Description: desc, InputSchema: objectSchema(props)}, h)
	}
	str := map[string]any{"type": "string"}
	num := map[string]any{"type": "number"}
	add("echo", "Echo the text back.", map[string]any{"text": str}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(r.Params.Arguments, &a); err != nil {
			return nil, err
		}
		return text(a.Text), nil
	})
	add("add", "Add two numbers.", map[string]any{"a": num, "b": num}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ A, B float64 }
		if err := json.Unmarshal(r.Params.Arguments, &a); err != nil {
			return nil, err
		}
		sum := a.A + a.B
		res := text(strconv.FormatFloat(sum, 'g', -1, 64))
		res.StructuredContent = map[string]any{"sum": sum}
		return res, nil
	})
	add("slow", "Block until cancelled.", nil, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		st.Started.Add(1)
		select {
		case <-ctx.Done():
			st.Cancelled.Add(1)
			return nil, ctx.Err()
		case <-time.After(60 * time.Second):
			return text("slow finished without being cancelled"), nil
		}
	})
	add("fail", "Fail with the message.", map[string]any{"message": str}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Message string }
		_ = json.Unmarshal(r.Params.Arguments, &a)
		res := text(a.Message)
		res.IsError = true
		return res, nil
	})
	add("protoerr", "Answer with a JSON-RPC error.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New("protoerr always fails")
	})
	add("image", "Return an image.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "here is the image"},
			&sdk.ImageContent{MIMEType: "image/png", Data: PNG},
		}}, nil
	})
	add("mixed", "Return every kind of content.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		size := int64(2048)
		return &sdk.CallToolResult{
			Content: []sdk.Content{
				&sdk.TextContent{Text: "first"},
				&sdk.ImageContent{MIMEType: "image/png", Data: PNG},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF0000WAVEfmt ")},
				&sdk.ResourceLink{URI: "file:///docs/readme.md", Name: "readme", Title: "The readme", Description: "What to read first.", MIMEType: "text/markdown", Size: &size},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://notes.txt", MIMEType: "text/plain", Text: "embedded text"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://blob.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 3, 4}}},
			},
			StructuredContent: map[string]any{"answer": 42},
		}, nil
	})
	add("big", "Return that many bytes of text.", map[string]any{"bytes": num}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Bytes int }
		if err := json.Unmarshal(r.Params.Arguments, &a); err != nil {
			return nil, err
		}
		var b strings.Builder
		for i := 0; b.Len() < a.Bytes; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return text(b.String()[:a.Bytes]), nil
	})
	add("stats", "Report counters.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(fmt.Sprintf("started=%d cancelled=%d", st.Started.Load(), st.Cancelled.Load())), nil
	})
	add("pid", "Report the process id.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	add("getenv", "Report the value of an environment variable of the server.", map[string]any{"name": str}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Name string }
		if err := json.Unmarshal(r.Params.Arguments, &a); err != nil {
			return nil, err
		}
		v, ok := os.LookupEnv(a.Name)
		if !ok {
			return text(a.Name + " is not set"), nil
		}
		return text(a.Name + "=" + v), nil
	})
	add("touch", "Create an empty file of that name in the server's working directory.", map[string]any{"name": str}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var a struct{ Name string }
		if err := json.Unmarshal(r.Params.Arguments, &a); err != nil {
			return nil, err
		}
		if a.Name == "" || strings.ContainsAny(a.Name, `/\`) || a.Name == "." || a.Name == ".." {
			res := text("touch: a plain file name is needed")
			res.IsError = true
			return res, nil
		}
		if err := os.WriteFile(a.Name, nil, 0o644); err != nil {
			return nil, err
		}
		return text("created " + a.Name), nil
	})
	add("roots", "List the client's roots.", nil, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		//lint:ignore SA1019 roots are deprecated only from protocol 2026-07-28; the client asks for 2025-11-25.
		res, err := r.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, root := range res.Roots {
			uris = append(uris, root.Name+"="+root.URI)
		}
		return text(strings.Join(uris, "\n")), nil
	})
	add("spawn", "Start a child process that sleeps.", nil, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		cmd := exec.Command("sleep", "600")
		cmd.Stderr = os.Stderr // holds the stderr pipe open, as a careless server's child would
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { _ = cmd.Wait() }()
		return text(strconv.Itoa(cmd.Process.Pid)), nil
	})
	return s
}

// Main runs the server in mode over stdin and stdout and returns the exit
// status.
func Main(mode string) int {
	switch mode {
	case ModeExitOnInit:
		line, _ := readLine(os.Stdin)
		fmt.Fprintf(os.Stderr, "mcptest: dying during initialize (read %d bytes)\n", len(line))
		return 3
	case ModeHang:
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	case ModeFlood:
		line := strings.Repeat("x", 1023) + "\n"
		for i := 0; i < FloodBytes/len(line); i++ {
			if _, err := os.Stderr.WriteString(line); err != nil {
				return 1
			}
		}
	case ModeStubborn:
		signal.Ignore(syscall.SIGTERM)
	case ModeTools, ModeHostile, ModeRecord, ModeNested:
	default:
		fmt.Fprintf(os.Stderr, "mcptest: unknown mode %q (modes: %s)\n", mode, strings.Join(Modes, ", "))
		return 2
	}
	err := New(mode, nil).Run(context.Background(), &sdk.StdioTransport{})
	if mode == ModeStubborn {
		select {}
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, sdk.ErrConnectionClosed) {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		return 1
	}
	return 0
}

// readLine reads up to and including the first newline, one byte at a time
// so nothing after it is consumed.
func readLine(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for {
		n, err := r.Read(one)
		if n == 1 {
			b = append(b, one[0])
			if one[0] == '\n' {
				return string(b), nil
			}
		}
		if err != nil {
			return string(b), err
		}
	}
}

// objectSchema is an object schema with the given properties.
func objectSchema(props map[string]any) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	return map[string]any{"type": "object", "properties": props}
}

// text is a result of one text block.
func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// Handler serves the server of mode over streamable HTTP, or with sse over
// the older HTTP+SSE transport, one server for every client.
func Handler(mode string, sse bool) http.Handler {
	srv := New(mode, nil)
	get := func(*http.Request) *sdk.Server { return srv }
	if sse {
		return sdk.NewSSEHandler(get, nil)
	}
	return sdk.NewStreamableHTTPHandler(get, nil)
}

// Command is reel mcp-standin: "[--http ADDR [--sse]] [MODE]". Without
// --http it serves MODE (default tools) over stdin and stdout, as Main;
// with it, it listens on ADDR (host:port; port 0 picks one), says the URL
// on stderr and serves until ctx ends. It returns the exit status.
func Command(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("reel mcp-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("http", "", "serve over streamable HTTP on `ADDR` (host:port) instead of stdio")
	sse := fs.Bool("sse", false, "with --http: serve the older HTTP+SSE transport")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: reel mcp-standin [--http ADDR [--sse]] [MODE]\n\n"+
			"A stand-in MCP server with a few tools (echo, add, fail, …) to try reel's MCP support.\nModes: %s.\n\n", strings.Join(Modes, ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	mode := ModeTools
	switch fs.NArg() {
	case 0:
	case 1:
		mode = fs.Arg(0)
	default:
		fs.Usage()
		return 2
	}
	if *addr == "" {
		return Main(mode)
	}
	if mode != ModeTools && mode != ModeHostile {
		fmt.Fprintf(stderr, "mcptest: mode %q is for stdio only; over HTTP the modes are tools and hostile\n", mode)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "mcptest:", err)
		return 1
	}
	fmt.Fprintf(stderr, "reel mcp-standin: serving mode %s on http://%s/mcp\n", mode, ln.Addr())
	hs := &http.Server{Handler: Handler(mode, *sse), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "mcptest:", err)
		return 1
	}
	return 0
}
