package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reel-agent/reel/agent/tools"
)

func ExampleSet() {
	ctx := context.Background()
	set := tools.Default(tools.Options{})
	fmt.Println(set.Names())

	dir, err := os.MkdirTemp("", "reel-tools-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	env := &tools.Env{Cwd: dir, SpillDir: filepath.Join(dir, ".spill")}

	// Announce the call, then run it.
	args := json.RawMessage(`{"file_path":"notes/hello.txt","content":"hello\nworld\n"}`)
	title, kind, _ := tools.Describe("write", args)
	fmt.Println(title, kind)
	res, err := set.Run(ctx, env, "write", args)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Diff.OldText == nil, res.Diff.NewText == "hello\nworld\n")

	res, _ = set.Run(ctx, env, "read", json.RawMessage(`{"file_path":"notes/hello.txt","offset":2}`))
	fmt.Println(res.Text)

	_, err = set.Lookup("browse")
	fmt.Println(errors.Is(err, tools.ErrUnknownTool))
	// Output:
	// [bash read read_image write edit glob grep job_kill job_list job_output todo_write]
	// Write notes/hello.txt edit
	// false true true
	//      2	world
	// true
}
