package standin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// Main implements `reel standin --script FILE [--listen ADDR]`: it serves
// the script until ctx ends, printing the bound address (host:port) on
// stdout once it is listening. Point an agent at http://ADDR/v1.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reel standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "stand-in script (JSON, see package standin)")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *script == "" || fs.NArg() > 0 {
		return errors.New("usage: reel standin --script FILE [--listen 127.0.0.1:0]")
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
