package lsp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the server's process (the sandbox supervisor, or bash
// exec'ing the server) in a process group of its own, which killGroup
// ends, and has the kernel kill it should reel die without stopping it.
// Under the supervisor the server is in a session of its own, which the
// supervisor kills when reel dies or the process is signalled.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killGroup sends SIGKILL to the process group of cmd's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
