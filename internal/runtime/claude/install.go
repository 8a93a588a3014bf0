package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Where the runner makes the host's Claude Code CLI visible in a sandbox
// that shares no files with the host but what it binds (the local
// backend). The files are bound read-only.
const (
	InstallDir = "/opt/fullsend/claude"
	// SandboxBinary is the CLI itself (a native build), bound from the
	// real file behind the configured path's symlinks, on the agent's PATH.
	SandboxBinary = "/usr/local/bin/claude"
	// SandboxPackage and SandboxNode hold a Node.js install: the npm
	// package directory of a script CLI and the node that runs it.
	SandboxPackage = InstallDir + "/package"
	SandboxNode    = InstallDir + "/bin/node"
)

// DefaultBinary is the command looked up on the runner's PATH when no
// binary is configured.
const DefaultBinary = "claude"

// npmPackage is the npm package of Claude Code; its platform packages
// (optionalDependencies) are npmPackage + "-linux-x64" and so on.
const npmPackage = "@anthropic-ai/claude-code"

// Install is how a host's Claude Code CLI is made visible in the sandbox:
// read-only mounts and the command that runs it there (RunInput.Options
// OptBinary and OptNode).
type Install struct {
	Configured string          `json:"configured"`     // as configured ("claude" = looked up on PATH)
	Host       string          `json:"host"`           // the real file: a native executable or a node script
	Node       string          `json:"node,omitempty"` // host node running a script install
	Mounts     []sandbox.Mount `json:"mounts"`
	Binary     string          `json:"binary"`                // OptBinary: the sandbox path to run
	NodeBinary string          `json:"node_binary,omitempty"` // OptNode
	Note       string          `json:"note,omitempty"`
}

// Options returns the runtime options running this install.
func (in *Install) Options() map[string]string {
	o := map[string]string{OptBinary: in.Binary}
	if in.NodeBinary != "" {
		o[OptNode] = in.NodeBinary
	}
	return o
}

// ErrNotFound marks a CLI that cannot be found or used on the host.
//
//lint:ignore ST1005 the message starts with the product's name
var ErrNotFound = errors.New("Claude Code CLI not found")

// Locate finds the host's Claude Code CLI: binary is an absolute path, or
// a command name looked up on the runner's PATH (getenv("PATH")); ""
// means DefaultBinary. Symlinks are followed to the real file:
//
//   - a native executable (the native installer's, or npm's platform
//     package, which npm's postinstall copies over bin/claude.exe) is
//     bound at SandboxBinary;
//   - npm's placeholder (an install whose postinstall did not run) is
//     replaced by the native executable of the matching platform package
//     installed beside it, when there is one;
//   - a node script (older npm installs: cli.js with a node shebang) has
//     its package directory bound at SandboxPackage and the node of its
//     shebang at SandboxNode.
//
// Anything else is an error wrapping ErrNotFound that says where it looked.
func Locate(binary string, getenv func(string) string) (*Install, error) {
	if binary == "" {
		binary = DefaultBinary
	}
	in := &Install{Configured: binary}
	p := binary
	if !filepath.IsAbs(p) {
		found, dirs := lookPath(p, getenv("PATH"))
		if found == "" {
			return nil, fmt.Errorf("%w: looked for %q in PATH (%s); install it (npm install -g %s) or name it in config.yaml runtimes.claude.binary or --claude-binary", ErrNotFound, p, strings.Join(dirs, ":"), npmPackage)
		}
		p = found
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, p, err)
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s (real file %s) is not a regular file", ErrNotFound, p, real)
	}
	head, err := readHead(real)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, real, err)
	}
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return in.native(real), nil
	case isPlaceholder(head):
		if nat := platformBinary(real); nat != "" {
			in.native(nat)
			in.Note = fmt.Sprintf("%s is npm's placeholder (the package's postinstall did not run); using the platform build %s", real, nat)
			return in, nil
		}
		return nil, fmt.Errorf("%w: %s is npm's placeholder for the native CLI and no %s-%s package is installed beside it: run the package's postinstall (node install.cjs) or install without --omit=optional", ErrNotFound, real, npmPackage, platform())
	case bytes.HasPrefix(head, []byte("#!")) && bytes.Contains(firstLine(head), []byte("node")):
		return in.script(real, string(firstLine(head)), getenv)
	}
	return nil, fmt.Errorf("%w: %s (real file of %s) is neither an executable nor a node script; name the CLI itself, not a wrapper", ErrNotFound, real, p)
}

func (in *Install) native(real string) *Install {
	in.Host = real
	in.Mounts = []sandbox.Mount{{Source: real, Target: SandboxBinary, ReadOnly: true}}
	in.Binary = SandboxBinary
	return in
}

// script sets up a node-script install: the package directory holding
// script (the nearest parent with a package.json) and node.
func (in *Install) script(real, shebang string, getenv func(string) string) (*Install, error) {
	pkg := ""
	for d := filepath.Dir(real); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "package.json")); err == nil {
			pkg = d
			break
		}
	}
	if pkg == "" {
		return nil, fmt.Errorf("%w: %s is a node script outside an npm package (no package.json above it)", ErrNotFound, real)
	}
	rel, err := filepath.Rel(pkg, real)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	node := ""
	f := strings.Fields(strings.TrimPrefix(shebang, "#!"))
	switch {
	case len(f) >= 2 && filepath.Base(f[0]) == "env":
		node = f[len(f)-1]
	case len(f) >= 1:
		node = f[0]
	}
	if !filepath.IsAbs(node) {
		found, dirs := lookPath(node, getenv("PATH"))
		if found == "" {
			return nil, fmt.Errorf("%w: %s runs with %q, not found in PATH (%s)", ErrNotFound, real, node, strings.Join(dirs, ":"))
		}
		node = found
	}
	nodeReal, err := filepath.EvalSymlinks(node)
	if err != nil {
		return nil, fmt.Errorf("%w: node %s: %v", ErrNotFound, node, err)
	}
	in.Host, in.Node = real, nodeReal
	in.Mounts = []sandbox.Mount{
		{Source: pkg, Target: SandboxPackage, ReadOnly: true},
		{Source: nodeReal, Target: SandboxNode, ReadOnly: true},
	}
	in.Binary = SandboxPackage + "/" + filepath.ToSlash(rel)
	in.NodeBinary = SandboxNode
	return in, nil
}

func readHead(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 1024)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// isPlaceholder recognises the stub npm installs as bin/claude.exe until
// the package's postinstall replaces it with the native executable.
func isPlaceholder(head []byte) bool {
	return bytes.Contains(head, []byte("claude native binary not installed"))
}

// platform is this machine's platform package suffix ("linux-x64").
func platform() string {
	arch := goruntime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return goruntime.GOOS + "-" + arch
}

// platformBinary finds the native executable of the platform package
// installed next to the npm package holding the placeholder real
// (…/node_modules/@anthropic-ai/claude-code/bin/claude.exe).
func platformBinary(real string) string {
	pkg := filepath.Dir(filepath.Dir(real))
	var manifest struct {
		Name string `json:"name"`
	}
	if b, err := os.ReadFile(filepath.Join(pkg, "package.json")); err != nil || json.Unmarshal(b, &manifest) != nil || manifest.Name != npmPackage {
		return ""
	}
	for _, suffix := range []string{platform(), platform() + "-musl"} {
		for _, dir := range []string{filepath.Join(filepath.Dir(pkg), "claude-code-"+suffix), filepath.Join(pkg, "node_modules", npmPackage+"-"+suffix)} {
			cand := filepath.Join(dir, "claude")
			if head, err := readHead(cand); err == nil && bytes.HasPrefix(head, []byte("\x7fELF")) {
				if r, err := filepath.EvalSymlinks(cand); err == nil {
					return r
				}
			}
		}
	}
	return ""
}

// lookPath finds an executable regular file name in the PATH list path,
// returning it and the directories searched.
func lookPath(name, path string) (string, []string) {
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry depends on the working directory
		}
		dirs = append(dirs, d)
		p := filepath.Join(d, name)
		st, err := os.Stat(p)
		if err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, dirs
		}
	}
	return "", dirs
}
