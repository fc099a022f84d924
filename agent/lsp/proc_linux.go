package lsp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the server's process (the sandbox supervisor, or bash
// exec'ing the server) in a process group of its own, which killGroup
// ends, as the bash tool does. It sets no parent-death signal: when reel
// dies the supervisor must live on long enough to kill the server's
// whole tree (it sees reel's liveness pipe close); a parent-death
// SIGKILL would end it first and leave the server's children behind.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// killGroup sends SIGKILL to the process group of cmd's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
