//go:build !linux

package lsp

import "os/exec"

// ownGroup does nothing where process groups are not set up.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
