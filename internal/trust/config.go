package trust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// ErrRepoLayer marks a repository layer that sets what only the org layer
// may set; its message names the way out.
var ErrRepoLayer = errors.New("a repository layer (a fullsend dir inside the target repository's work tree, which a pull request controls) may not widen what the host trusts; set it in the org fullsend dir (--fullsend-dir outside the work tree, or --trusted-ref REF to read it from git), or pass --trust-worktree if you own this repository")

// ErrRepoWidens marks a value of a repository layer above the org's.
var ErrRepoWidens = errors.New("a repository layer may only narrow, lower or tighten the org's value (widen it in the org fullsend dir, or pass --trust-worktree if you own this repository)")

// presentKey is a key written in a config file: its dotted path, the row
// governing it and its key node.
type presentKey struct {
	path string
	row  Key
	node *yaml.Node
	val  *yaml.Node
}

// configKeys lists the keys of a config file's mapping that the layer
// table governs, descending into mappings until a row matches.
func configKeys(prefix string, n *yaml.Node, out *[]presentKey) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := yamlx.Join(prefix, k.Value)
		if v.Kind == yaml.MappingNode && hasRowsBelow(p) {
			configKeys(p, v, out)
			continue
		}
		row, ok := configKey(p)
		if !ok {
			// No row governs it (a key of features outside the runner, an
			// unknown or a future key): org only, failing closed.
			row = Key{Key: p, Policy: Refused}
		}
		*out = append(*out, presentKey{p, row, k, v})
	}
}

// hasRowsBelow reports whether a row of ConfigKeys names a key below p.
func hasRowsBelow(p string) bool {
	return slices.ContainsFunc(ConfigKeys, func(k Key) bool { return strings.HasPrefix(k.Key, p+".") })
}

// ApplyRepoConfig reads the repository layer's config.yaml in dir and
// returns org with it applied under the layer table: a refused key or a
// value that widens the org's is an error naming file, line and key. A
// missing file yields org unchanged. notices are the config parser's.
func ApplyRepoConfig(org *config.Config, dir string) (*config.Config, []string, error) {
	if org == nil {
		org = config.Default()
	}
	p := filepath.Join(dir, config.FileName)
	data, err := yamlx.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return org, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", p, err)
	}
	return applyRepoConfig(org, p, data)
}

func applyRepoConfig(org *config.Config, p string, data []byte) (*config.Config, []string, error) {
	root, err := yamlx.Parse(p, data)
	if err != nil {
		return nil, nil, err
	}
	var keys []presentKey
	if root != nil && root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		configKeys("", root.Content[0], &keys)
	} else {
		configKeys("", root, &keys)
	}
	for _, k := range keys {
		if k.row.Policy == Refused {
			return nil, nil, yamlx.Wrap(p, k.node, k.path, ErrRepoLayer)
		}
	}
	rc, notices, err := config.Parse(p, data)
	if err != nil {
		return nil, nil, err
	}
	eff := *org
	for _, k := range keys {
		if err := applyKey(&eff, org, rc, p, k); err != nil {
			return nil, nil, err
		}
	}
	return &eff, notices, nil
}

// applyKey applies one key of the repository layer's config rc to eff.
func applyKey(eff, org, rc *config.Config, file string, k presentKey) error {
	widens := func(format string, args ...any) error {
		return yamlx.Errorf(file, k.node, k.path, ErrRepoWidens, format, args...)
	}
	rr, orr := &rc.Security.RemoteResources, &org.Security.RemoteResources
	switch k.path {
	case "version":
	case "runtime":
		eff.Runtime = rc.Runtime
	case "agents":
		eff.Agents = append(slices.Clone(org.Agents), rc.Agents...)
	case "allowed_remote_resources":
		if err := ref.CheckSubset(rc.AllowedRemoteResources, org.AllowedRemoteResources); err != nil {
			return widens("%v (the org's: %s)", err, orList(org.AllowedRemoteResources))
		}
		eff.AllowedRemoteResources = rc.AllowedRemoteResources
	case "sandbox.limits":
		l := org.Sandbox.Limits
		if err := config.ParseLimits(file, k.path, k.val, &l, nil); err != nil {
			return err
		}
		if key := config.Exceeds(org.Sandbox.Limits, l); key != "" {
			n := k.node
			if kv, err := yamlx.Pairs(file, k.path, k.val); err == nil {
				for _, e := range kv {
					if e[0].Value == key {
						n = e[0]
					}
				}
			}
			return yamlx.Errorf(file, n, k.path+"."+key, ErrRepoWidens, "%s raises the org's %s", config.LimitValue(l, key), config.LimitValue(org.Sandbox.Limits, key))
		}
		eff.Sandbox.Limits = l
	case "security.fail_mode":
		if rc.Security.FailMode == config.FailOpen && org.Security.FailMode != config.FailOpen {
			return widens("open, but the org's is %s", org.Security.FailMode)
		}
		eff.Security.FailMode = rc.Security.FailMode
	case "security.remote_resources.allowed_domains":
		allowed := org.EffectiveAllowedDomains()
		for _, d := range rr.AllowedDomains {
			if !domainCovered(d, allowed) {
				return widens("%s is not among the org's allowed domains (%s)", d, orList(allowed))
			}
		}
		eff.Security.RemoteResources.AllowedDomains = rr.AllowedDomains
	case "security.remote_resources.timeout":
		if rr.Timeout > orr.Timeout {
			return widens("%s raises the org's %s", rr.Timeout, orr.Timeout)
		}
		eff.Security.RemoteResources.Timeout = rr.Timeout
	case "security.remote_resources.max_size_bytes":
		if rr.MaxSizeBytes > orr.MaxSizeBytes {
			return widens("%d raises the org's %d", rr.MaxSizeBytes, orr.MaxSizeBytes)
		}
		eff.Security.RemoteResources.MaxSizeBytes = rr.MaxSizeBytes
	case "security.remote_resources.max_depth":
		if rr.MaxDepth > orr.MaxDepth {
			return widens("%d raises the org's %d", rr.MaxDepth, orr.MaxDepth)
		}
		eff.Security.RemoteResources.MaxDepth = rr.MaxDepth
	case "security.remote_resources.max_resources":
		if rr.MaxResources > orr.MaxResources {
			return widens("%d raises the org's %d", rr.MaxResources, orr.MaxResources)
		}
		eff.Security.RemoteResources.MaxResources = rr.MaxResources
	case "runtimes.claude.max_turns":
		o, r := org.Runtimes.Claude.MaxTurns, rc.Runtimes.Claude.MaxTurns
		if o > 0 && r > o {
			return widens("%d raises the org's %d", r, o)
		}
		eff.Runtimes.Claude.MaxTurns = r
	default:
		// A row of the table with no rule here: fail closed.
		return yamlx.Wrap(file, k.node, k.path, ErrRepoLayer)
	}
	return nil
}

// domainCovered reports whether host d is one of the org's allowed
// domains or matched by one of its *.suffix entries.
func domainCovered(d string, allowed []string) bool {
	for _, a := range allowed {
		if d == a {
			return true
		}
		if s, ok := strings.CutPrefix(a, "*."); ok && strings.HasSuffix(d, "."+s) {
			return true
		}
	}
	return false
}

func orList(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
