package standin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// help is what `reel standin -h` prints around the flags.
const (
	helpSummary = `usage: reel standin --script FILE [--listen ADDR]

Serves a scripted stand-in model: a local HTTP server speaking the
OpenAI-compatible streaming chat-completions dialect (DeepSeek flavour), so
reel, or any OpenAI-compatible client, can run live with no API key and no
network. Each request is answered with the script's next response (text,
reasoning, tool calls, usage, an HTTP error, a broken or hanging stream);
requests beyond the script get HTTP 500. Once listening it prints the bound
address (host:port) on stdout; point a client at http://ADDR/v1. It logs
each request to stderr and runs until interrupted. The script format
(standin.json) is described in docs/scenarios.md.

flags:
`
	helpTrailer = `
environment:
  none: the stand-in reads no variables and needs no key. A client pointed at
  it may still want one (e.g. DEEPSEEK_API_KEY); any value will do.

example:
  reel standin --script fixtures/text-turn/standin.json --listen 127.0.0.1:8089
  # then, in another shell (the stand-in ignores the key, any value will do):
  DEEPSEEK_API_KEY=unused reel acp --base-url http://127.0.0.1:8089/v1 --model standin

See docs/scenarios.md ("standin.json") for the script format.
`
)

// Main implements `reel standin --script FILE [--listen ADDR]`: it serves
// the script until ctx ends, printing the bound address (host:port) on
// stdout once it is listening. Point an agent at http://ADDR/v1. On -h or
// --help it prints its help to stdout and returns flag.ErrHelp.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reel standin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	script := fs.String("script", "", "stand-in script `FILE` (JSON; format in docs/scenarios.md)")
	listen := fs.String("listen", "127.0.0.1:0", "address `ADDR` to listen on (port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, helpSummary)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fmt.Fprint(stdout, helpTrailer)
			return flag.ErrHelp
		}
		return fmt.Errorf("standin: %w (run `reel standin -h` for the flags)", err)
	}
	if *script == "" || fs.NArg() > 0 {
		return errors.New("usage: reel standin --script FILE [--listen 127.0.0.1:0] (run `reel standin -h` for help)")
	}
	s, err := LoadScript(*script)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	err = New(s, log).ListenAndServe(ctx, *listen, func(addr string) { fmt.Fprintln(stdout, addr) })
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
