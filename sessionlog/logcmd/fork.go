package logcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/reel-agent/reel/sessionlog"
	"github.com/reel-agent/reel/sessionlog/jsonl"
)

// ForkCommand is `reel log fork LOG --at SEQ`: a new session whose log is
// LOG's prefix up to the last turn that ended at or before SEQ, then
// session/end-seed. It loads like any other session, and both go on
// independently.
func ForkCommand() Command {
	return Command{Name: "fork", Synopsis: "LOG --at SEQ --id ID", Summary: "start a new session from a log's turns up to seq SEQ", Run: fork}
}

func fork(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reel log fork", flag.ContinueOnError)
	fs.SetOutput(stderr)
	at := fs.Int("at", -1, "fork after the last turn that ended at or before this seq")
	id := fs.String("id", "", "the new session's id (its log is ID.jsonl beside LOG)")
	// LOG first, then the flags.
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fs.Usage()
		if len(args) > 0 {
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: reel log fork needs LOG", ErrUsage)
	}
	in := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *at < 0 || *id == "" || fs.NArg() != 0 {
		return fmt.Errorf("%w: reel log fork LOG --at SEQ --id ID", ErrUsage)
	}
	if filepath.Base(*id) != *id || *id == "." || *id == ".." {
		return fmt.Errorf("%w: id %q is not a file name", ErrUsage, *id)
	}
	d, _, err := jsonl.ReadValid(in)
	if err != nil {
		return err
	}
	end := -1
	for i, e := range d.Events {
		if i > *at {
			break
		}
		if e.Type == sessionlog.TypeTurnEnd {
			end = i
		}
	}
	if end < 0 {
		return errors.New("reel log fork: no turn ended at or before seq " + fmt.Sprint(*at))
	}
	seed := sessionlog.ForkSeed(d.Events, end)
	h := sessionlog.NewHeader(*id, time.Now().UnixMilli(), d.Header.Cwd)
	out := filepath.Join(filepath.Dir(in), *id+".jsonl")
	if err := checkOut(out); err != nil {
		return err
	}
	if err := writeFile(out, h, seed); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "forked %d events (turns up to seq %d) into %s\n", end+1, end, out)
	return err
}
