//go:build !unix

package run

import "os/exec"

// ownGroup does nothing here: there are no Unix process groups.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills cmd alone (its children are not reached).
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
