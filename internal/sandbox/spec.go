package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/netguard"
)

// ErrInvalidSpec is wrapped by every validation error.
var ErrInvalidSpec = errors.New("invalid sandbox spec")

func specErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, a...))
}

// reserved targets cannot be mount targets: the backend owns them.
var reservedTargets = []string{"/", "/proc", "/dev", "/sys", BinaryPath, Root}

// CheckPath validates a sandbox path: absolute, clean, no "..", no NUL.
func CheckPath(p string) error {
	if p == "" || !strings.HasPrefix(p, "/") {
		return specErr("sandbox path %q: must be absolute", p)
	}
	if strings.ContainsRune(p, 0) {
		return specErr("sandbox path %q: contains NUL", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return specErr("sandbox path %q: must not contain \"..\"", p)
		}
	}
	return nil
}

// CleanTarget validates a mount target and returns its clean form.
func CleanTarget(t string) (string, error) {
	if err := CheckPath(t); err != nil {
		return "", err
	}
	c := path.Clean(t)
	for _, r := range reservedTargets {
		if c == r {
			return "", specErr("mount target %q: reserved", t)
		}
	}
	for _, r := range []string{"/proc/", "/dev/", "/sys/"} {
		if strings.HasPrefix(c, r) {
			return "", specErr("mount target %q: inside reserved %s", t, strings.TrimSuffix(r, "/"))
		}
	}
	return c, nil
}

// Check validates a spec and returns a normalised copy (clean targets, mounts
// sorted parent-first, WorkDir defaulted).
func Check(s Spec) (Spec, error) {
	out := s
	out.Mounts = nil
	seen := map[string]bool{}
	for _, m := range s.Mounts {
		if m.Source == "" || !filepath.IsAbs(m.Source) {
			return Spec{}, specErr("mount source %q: must be an absolute host path", m.Source)
		}
		t, err := CleanTarget(m.Target)
		if err != nil {
			return Spec{}, err
		}
		if seen[t] {
			return Spec{}, specErr("mount target %q: duplicate", t)
		}
		seen[t] = true
		out.Mounts = append(out.Mounts, Mount{Source: filepath.Clean(m.Source), Target: t, ReadOnly: m.ReadOnly})
	}
	// Parents first so nested mounts land on top of their parent.
	sort.SliceStable(out.Mounts, func(i, j int) bool {
		return strings.Count(out.Mounts[i].Target, "/") < strings.Count(out.Mounts[j].Target, "/")
	})
	if err := CheckNetwork(s.Network); err != nil {
		return Spec{}, err
	}
	for k, v := range s.Env {
		if err := CheckEnvName(k); err != nil {
			return Spec{}, err
		}
		if strings.ContainsRune(v, 0) {
			return Spec{}, specErr("env %s: value contains NUL", k)
		}
	}
	if out.WorkDir == "" {
		out.WorkDir = Root
	} else if err := CheckPath(out.WorkDir); err != nil {
		return Spec{}, err
	}
	if l := s.Limits; l.MemoryBytes < 0 || l.Pids < 0 || l.CPUs < 0 || l.WallTime < 0 ||
		l.TmpBytes < 0 || l.WorkspaceBytes < 0 || l.OutputBytes < 0 || l.OutputFiles < 0 || l.SnapshotBytes < 0 {
		return Spec{}, specErr("limits: negative value")
	}
	return out, nil
}

// CheckEnvName accepts POSIX-ish variable names.
func CheckEnvName(k string) error {
	if k == "" {
		return specErr("env: empty name")
	}
	for i, r := range k {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return specErr("env %q: invalid name", k)
		}
	}
	return nil
}

// AllowEntry is one parsed Network.Allow entry; its Admits is the one
// allow-entry rule.
type AllowEntry = netguard.AllowEntry

// ParseAllow parses a "host[:port]" allowlist entry. IPv6 literals use
// brackets ("[::1]:8080").
func ParseAllow(e string) (AllowEntry, error) {
	host, port := e, 0
	if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
				h, p = strings.Trim(e, "[]"), ""
			} else {
				return AllowEntry{}, specErr("network allow %q: %v", e, err)
			}
		}
		host = h
		if p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return AllowEntry{}, specErr("network allow %q: bad port", e)
			}
			port = n
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if _, err := netip.ParseAddr(host); err != nil {
		if err := netguard.CheckHostPattern(host); err != nil {
			return AllowEntry{}, specErr("network allow %q: %v", e, err)
		}
	}
	return AllowEntry{Host: host, Port: port}, nil
}

// CheckNetwork validates a network policy.
func CheckNetwork(n Network) error {
	for _, a := range n.Allow {
		if _, err := ParseAllow(a); err != nil {
			return err
		}
	}
	for _, s := range n.Services {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return specErr("network service %q: must be IP:PORT", s)
		}
		if !ap.Addr().IsLoopback() {
			return specErr("network service %q: must be a loopback address", s)
		}
	}
	return nil
}

// MergeEnv returns base overridden by over as a sorted KEY=VALUE list.
func MergeEnv(base, over map[string]string) []string {
	m := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ProxyEnv returns the environment pointing tools at an HTTP proxy on
// 127.0.0.1:port (both cases: curl ignores upper-case HTTP_PROXY).
func ProxyEnv(port int) map[string]string {
	u := "http://127.0.0.1:" + strconv.Itoa(port)
	return map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "http_proxy": u, "https_proxy": u,
		"ALL_PROXY": u, "all_proxy": u,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
	}
}
