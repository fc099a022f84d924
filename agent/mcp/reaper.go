package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// reaperScript waits for the end of its fd 3 (a pipe whose write end only
// reel holds) and then kills its whole process group. read and kill are
// bash builtins: it needs no PATH and no environment.
const reaperScript = `read -r _ <&3; kill -KILL 0`

// startReaper starts the guard of a stdio server's process group pgid: a
// bash in that group, waiting for the end of a pipe of which reel keeps
// the write end, returned. When reel dies, however it dies, the kernel
// closes that end and the guard kills the group: the server (which its
// parent-death signal also ends) and every process the server started in
// its group, which nothing else would end. As a member the guard keeps
// the group's id from being reused while it waits, and the group signals
// of process.stop end it with the rest.
func startReaper(pgid int) (live *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: making the reaper's pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c", reaperScript)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("mcp: starting the reaper of process group %d: %w", pgid, err)
	}
	go func() { _ = cmd.Wait() }()
	return w, nil
}
