//go:build !unix

package runtimetest

import "os/exec"

// ownGroup does nothing here: there are no Unix process groups.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills cmd alone (its children are not reached).
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
