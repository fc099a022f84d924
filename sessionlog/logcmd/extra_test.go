package logcmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestExtraCommands: a Command passed to Run is listed in the usage,
// dispatched with its arguments, answers its own help, and never shadows
// a built-in command.
func TestExtraCommands(t *testing.T) {
	var got []string
	extra := Command{Name: "diff", Synopsis: "A B", Summary: "compare two runs",
		Run: func(_ context.Context, args []string, stdout, _ io.Writer) error {
			if len(args) == 1 && args[0] == "-h" {
				fmt.Fprint(stdout, "usage: reel log diff A B\n")
				return flag.ErrHelp
			}
			got = args
			if len(args) != 2 {
				return ErrUsage
			}
			return nil
		}}
	shadow := Command{Name: "show", Run: func(context.Context, []string, io.Writer, io.Writer) error {
		return errors.New("the extra show ran")
	}}
	cases := []struct {
		name   string
		args   []string
		err    error
		stdout string
	}{
		{"dispatched", []string{"diff", "a", "b"}, nil, ""},
		{"its usage error", []string{"diff", "a"}, ErrUsage, ""},
		{"its help", []string{"diff", "-h"}, nil, "usage: reel log diff A B"},
		{"help diff", []string{"help", "diff"}, nil, "usage: reel log diff A B"},
		{"listed", []string{"-h"}, nil, "  diff A B                             compare two runs\n"},
		{"built-in wins", []string{"show", "-h"}, nil, "usage: reel log show"},
		{"still unknown", []string{"nope"}, ErrUsage, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Run(context.Background(), c.args, &out, &errOut, extra, shadow)
			if (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
				t.Fatalf("Run(%q) = %v, want %v", c.args, err, c.err)
			}
			if !strings.Contains(out.String(), c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, out.String())
			}
		})
	}
	if strings.Join(got, " ") != "a" {
		t.Errorf("the last arguments the extra saw: %q", got)
	}
}
