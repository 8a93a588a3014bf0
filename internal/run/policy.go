package run

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// policyFile is the part of an OpenShell sandbox policy the runner maps
// onto a sandbox.Spec. Other keys (landlock, process, …) are accepted and
// not interpreted: the backends apply their own hardening.
type policyFile struct {
	FilesystemPolicy struct {
		IncludeWorkdir bool     `yaml:"include_workdir"`
		ReadOnly       []string `yaml:"read_only"`
		ReadWrite      []string `yaml:"read_write"`
	} `yaml:"filesystem_policy"`
	NetworkPolicies map[string]struct {
		Name      string     `yaml:"name"`
		Endpoints []endpoint `yaml:"endpoints"`
	} `yaml:"network_policies"`
}

// profileFile is an OpenShell network profile.
type profileFile struct {
	ID        string     `yaml:"id"`
	Endpoints []endpoint `yaml:"endpoints"`
}

type endpoint struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
}

// readYAML decodes a bounded YAML file leniently (unknown keys ignored: the
// policy and profile formats belong to OpenShell).
func readYAML(file string, out any) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := limit.ReadAll(f, yamlx.MaxFileSize)
	if err != nil {
		return err
	}
	if err := yaml.Load(data, out); err != nil {
		return err
	}
	return nil
}

// backendProvided are sandbox paths the local backend always provides
// itself (minimal root): a policy entry at or below one of them needs no
// mount. /etc is a curated read-only subset of the host's (no shadow, no
// keys), /tmp and /var/tmp are private tmpfs, /dev and /proc are the
// sandbox's own.
var backendProvided = []string{"/sandbox", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/sys", "/tmp", "/var/tmp", "/run"}

func provided(p string) bool {
	if p == "/" {
		return true
	}
	for _, b := range backendProvided {
		if p == b || strings.HasPrefix(p, b+"/") {
			return true
		}
	}
	return false
}

// mapFilesystem checks filesystem_policy against what the local backend
// provides (see doc.go, "Policy mapping"). It never produces host mounts: a
// policy's paths are the sandbox's, not the host's. Image-based backends get
// no mounts either: the image provides the root file system.
func mapFilesystem(pol *policyFile, backend string) ([]sandbox.Mount, []string) {
	var notes []string
	if backend != "local" {
		if len(pol.FilesystemPolicy.ReadOnly)+len(pol.FilesystemPolicy.ReadWrite) > 0 {
			notes = append(notes, fmt.Sprintf("filesystem_policy: not bound from the host on the %s backend (the image provides the file system)", backend))
		}
		return nil, notes
	}
	mode := map[string]bool{} // path -> read-only
	var order []string
	add := func(p string, ro bool) {
		if p == "" || !strings.HasPrefix(p, "/") {
			notes = append(notes, fmt.Sprintf("filesystem_policy: %q skipped (not an absolute path)", p))
			return
		}
		c := path.Clean(p)
		if prev, ok := mode[c]; ok {
			if prev != ro {
				mode[c] = true
				notes = append(notes, fmt.Sprintf("filesystem_policy: %s listed read-only and read-write; mounted read-only", c))
			}
			return
		}
		mode[c] = ro
		order = append(order, c)
	}
	for _, p := range pol.FilesystemPolicy.ReadOnly {
		add(p, true)
	}
	for _, p := range pol.FilesystemPolicy.ReadWrite {
		add(p, false)
	}
	// Policy paths name the sandbox's file system (OpenShell: the image's),
	// never the host's: binding them from the host would let a policy — which
	// may be a remote, merely pinned resource — expose host files such as
	// ~/.ssh to the agent. Paths the backend does not provide are skipped.
	var mounts []sandbox.Mount
	for _, p := range order {
		if provided(p) {
			continue
		}
		notes = append(notes, fmt.Sprintf("filesystem_policy: %s skipped (not provided by the local sandbox; policy paths are never bound from the host)", p))
	}
	return mounts, notes
}

// allowEntries turns endpoints into sandbox allowlist entries host[:port],
// checked with sandbox.ParseAllow; src names the file for errors.
func allowEntries(src string, eps []endpoint) ([]string, error) {
	var out []string
	for i, e := range eps {
		h := strings.TrimSpace(e.Host)
		if h == "" {
			return nil, fmt.Errorf("%s: endpoints[%d]: no host", src, i)
		}
		entry := h
		if e.Port != 0 {
			if strings.Contains(h, ":") {
				h = "[" + h + "]"
			}
			entry = h + ":" + strconv.Itoa(e.Port)
		}
		if _, err := sandbox.ParseAllow(entry); err != nil {
			return nil, fmt.Errorf("%s: endpoints[%d]: %w", src, i, err)
		}
		out = append(out, entry)
	}
	return out, nil
}

func sortedUnique(l []string) []string {
	sort.Strings(l)
	var out []string
	for _, s := range l {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
