package standin

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestMainHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), []string{arg}, &stdout, &stderr)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Main(%s) = %v, want flag.ErrHelp (the command exits 0)", arg, err)
		}
		for _, want := range []string{"usage: reel standin --script FILE", "Serves a scripted stand-in model", "-script FILE", "-listen ADDR", "environment:", "example:", "docs/scenarios.md"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("Main(%s) stdout lacks %q:\n%s", arg, want, stdout.String())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("Main(%s) wrote help to stderr: %q", arg, stderr.String())
		}
	}
}

func TestMainUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "standin: flag provided but not defined: -nope (run `reel standin -h` for the flags)"},
		{nil, "usage: reel standin --script FILE"},
		{[]string{"--script", "x.json", "stray"}, "usage: reel standin --script FILE"},
		{[]string{"--script", "/nonexistent/standin.json"}, "/nonexistent/standin.json"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), c.args, &stdout, &stderr)
		if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Main(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("Main(%q) printed %q on stdout", c.args, stdout.String())
		}
	}
}
