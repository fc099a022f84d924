package acpcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/reel-agent/reel/agent"
	"github.com/reel-agent/reel/agent/llm"
	"github.com/reel-agent/reel/agent/tools"
)

// rewindUsage is `reel rewind -h`.
const rewindUsage = `usage: reel rewind [flags] SESSION N

Restores the workspace files of SESSION to its checkpoint before turn N and
takes turns N… off the conversation, as /rewind N does in an editor (the
session must have been run with reel acp --checkpoints). It runs as one
turn of the session, appended to its log.

`

// Rewind is `reel rewind`: it loads the session and runs /rewind N in it,
// printing what the command answers.
func Rewind(ctx context.Context, args []string, env IO) error {
	fs := flag.NewFlagSet("reel rewind", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), rewindUsage); fs.PrintDefaults() }
	stateDir := fs.String("state-dir", DefaultStateDir(env.Getenv), "directory of session logs")
	storeKind := fs.String("store", "jsonl", "session store: jsonl or sqlite")
	dry := fs.Bool("dry-run", false, "list the files a rewind would restore and change nothing")
	force := fs.Bool("force", false, "overwrite the files the user changed since the checkpoint")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("reel rewind: want SESSION and N")
	}
	n, err := strconv.Atoi(fs.Arg(1))
	if err != nil || n < 1 {
		return fmt.Errorf("reel rewind: %q is not a turn number", fs.Arg(1))
	}
	log, err := Logger(env.Stderr, "warn")
	if err != nil {
		return err
	}
	store, err := OpenStore(*stateDir, *storeKind, false, log)
	if err != nil {
		return err
	}
	defer store.Close()
	eng, err := agent.New(agent.Config{Store: store, Logger: log, Models: agent.SharedModels{Provider: noModel{}},
		Provider: "none", Model: "none", DisableTitleModel: true, DisableSkills: true,
		Instructions:  agent.InstructionConfig{Disabled: true},
		CheckpointDir: filepath.Join(filepath.Dir(*stateDir), "checkpoints")})
	if err != nil {
		return err
	}
	defer eng.Close()
	s, err := eng.LoadSession(ctx, fs.Arg(0), "")
	if err != nil {
		return err
	}
	cmd := "/rewind " + strconv.Itoa(n)
	if *dry {
		cmd += " dry-run"
	}
	if *force {
		cmd += " force"
	}
	out := &textOut{}
	if _, err := s.Prompt(ctx, []agent.Content{{Text: cmd}}, agent.Client{Updates: out}); err != nil {
		return err
	}
	_, err = fmt.Fprint(env.Stdout, out.text)
	return err
}

// textOut keeps a turn's agent text and drops the rest.
type textOut struct{ text string }

func (o *textOut) Text(_ context.Context, t string)            { o.text += t }
func (o *textOut) Thought(_ context.Context, t string)         { o.text += t }
func (*textOut) UserText(context.Context, string)              {}
func (*textOut) ToolStart(context.Context, agent.ToolCall)     {}
func (*textOut) ToolRunning(context.Context, string)           {}
func (*textOut) ToolProgress(context.Context, string, string)  {}
func (*textOut) ToolEnd(context.Context, string, tools.Result) {}
func (*textOut) Plan(context.Context, []tools.Todo)            {}
func (*textOut) Usage(context.Context, agent.ContextUsage)     {}
func (*textOut) Title(context.Context, agent.Title)            {}

// noModel is the model of `reel rewind`, which makes no model call.
type noModel struct{}

// Stream refuses every call.
func (noModel) Stream(context.Context, llm.Request) (llm.Stream, error) {
	return nil, errors.New("reel rewind calls no model")
}
