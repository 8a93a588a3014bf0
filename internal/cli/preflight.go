package cli

import (
	"errors"
	"fmt"
	"os"
)

// Checks `run` makes on its flags alone, before anything is resolved; the
// checks against the resolved harness and the plan live in package run
// (preflight.go).

// checkScriptFlag checks --script FILE before anything is resolved.
func checkScriptFlag(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--script %s: no such file", path)
	case err != nil:
		return fmt.Errorf("--script %s: %w", path, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("--script %s: not a regular file", path)
	}
	return nil
}
