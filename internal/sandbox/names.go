package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// The names of the sandbox backends fullsend ships. This is the one list:
// config.yaml's sandbox.backend, the --sandbox and --backend flags and the
// plan's default check names against it, and package backends opens exactly
// these (its tests hold it to that).
const (
	BackendLocal      = "local"
	BackendDocker     = "docker"
	BackendKubernetes = "kubernetes"

	// DefaultBackend is used when neither flag nor config names one.
	DefaultBackend = BackendLocal
)

// backendNames is in documentation order: the default first.
var backendNames = []string{BackendLocal, BackendDocker, BackendKubernetes}

// BackendNames returns the backend names, the default first.
func BackendNames() []string { return slices.Clone(backendNames) }

// IsBackend reports whether name is one of BackendNames.
func IsBackend(name string) bool { return slices.Contains(backendNames, name) }

// BackendChoices lists the names for a message, "local, docker or
// kubernetes" with conj "or".
func BackendChoices(conj string) string {
	n := len(backendNames)
	return fmt.Sprintf("%s %s %s", strings.Join(backendNames[:n-1], ", "), conj, backendNames[n-1])
}
