package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// EnvRunsDir names the runs directory outright (no per-workspace
// subdirectory), overriding both defaults.
const EnvRunsDir = "FULLSEND_RUNS_DIR"

// ErrNoStateDir is returned when neither XDG_STATE_HOME nor HOME says
// where the user's state directory is.
var ErrNoStateDir = errors.New("no state directory: neither XDG_STATE_HOME nor HOME is set to an absolute path")

// StateDir is fullsend's directory in the user's state directory:
// $XDG_STATE_HOME/fullsend, else $HOME/.local/state/fullsend. A relative
// XDG_STATE_HOME is ignored, as the XDG specification says.
func StateDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "fullsend"), nil
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "fullsend"), nil
	}
	return "", ErrNoStateDir
}

// WorkspaceRunsDir is where runs started from workspace (an absolute
// path) live by default: <state dir>/runs/<base>-<hash>, <base> being the
// workspace's last element (letters, digits, '.', '_', '-' kept) and
// <hash> the first 16 hex digits of the sha256 of its path.
func WorkspaceRunsDir(getenv func(string) string, workspace string) (string, error) {
	state, err := StateDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "runs", workspaceKey(workspace)), nil
}

func workspaceKey(workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, filepath.Base(filepath.Clean(workspace)))
	if len(base) > 40 {
		base = base[:40]
	}
	if base == "" || base == "_" {
		base = "root"
	}
	return base + "-" + hex.EncodeToString(sum[:8])
}

// RunsDir resolves where runs live: FULLSEND_RUNS_DIR when set (made
// absolute), else <workspace>/.fullsend/runs when the workspace was named
// explicitly (--workspace), else WorkspaceRunsDir of the workspace.
func RunsDir(getenv func(string) string, workspace string, explicit bool) (string, error) {
	if d := getenv(EnvRunsDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("%s %q: %w", EnvRunsDir, d, err)
		}
		return abs, nil
	}
	if explicit {
		return filepath.Join(workspace, ".fullsend", "runs"), nil
	}
	d, err := WorkspaceRunsDir(getenv, workspace)
	if err != nil {
		return "", fmt.Errorf("%w (set one, or name the runs directory with %s or --workspace)", err, EnvRunsDir)
	}
	return d, nil
}
