package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Limits are the resource limits of a run: sandbox.limits in config.yaml
// (the org defaults, applied to every run and every backend) and a
// harness's resources: block (which may only lower them). A zero field is
// "not set". It is the sandbox contract's type, not a copy of it: the
// fields, their defaults (sandbox.Default*) and the combining rules
// (Lower, Min) are defined once, in package sandbox. Config files never set
// WallTime (a harness's timeout: does).
type Limits = sandbox.Limits

// MaxOutputFiles bounds output_files itself.
const MaxOutputFiles = 1 << 22

// DefaultLimits returns the built-in sandbox.limits: every field (except
// WallTime) at its sandbox default.
func DefaultLimits() Limits { return sandbox.Limits{}.Resolved() }

// LimitKeys are the keys of sandbox.limits and of a harness resources:
// block, in documentation order.
var LimitKeys = []string{"memory", "pids", "cpus", "tmp_size", "workspace_size", "output_size", "output_files", "snapshot_size"}

// ParseLimit decodes the value n of limit key into l. field names the key in
// messages (e.g. "sandbox.limits.memory"). Every limit must be positive;
// sizes accept the units of ParseSize.
func ParseLimit(file, field, key string, n *yaml.Node, l *Limits) error {
	size := func(dst *int64) error {
		s, err := yamlx.String(file, field, n)
		if err != nil {
			return err
		}
		v, err := ParseSize(s)
		if err != nil {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "%v", err)
		}
		if v <= 0 {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "must be positive")
		}
		*dst = v
		return nil
	}
	switch key {
	case "memory":
		return size(&l.MemoryBytes)
	case "tmp_size":
		return size(&l.TmpBytes)
	case "workspace_size":
		return size(&l.WorkspaceBytes)
	case "output_size":
		return size(&l.OutputBytes)
	case "snapshot_size":
		return size(&l.SnapshotBytes)
	case "pids":
		v, err := yamlx.Int(file, field, n)
		if err != nil {
			return err
		}
		if v <= 0 || v > 1<<22 {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "must be a positive number of tasks")
		}
		l.Pids = int(v)
	case "output_files":
		v, err := yamlx.Int(file, field, n)
		if err != nil {
			return err
		}
		if v <= 0 || v > MaxOutputFiles {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "must be a positive number of files (at most %d)", MaxOutputFiles)
		}
		l.OutputFiles = int(v)
	case "cpus":
		v, err := yamlx.Float(file, field, n)
		if err != nil {
			return err
		}
		if !(v > 0 && v <= 1024) {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "must be a positive number of cores")
		}
		l.CPUs = v
	default:
		return yamlx.Errorf(file, n, field, yamlx.ErrUnknownField, "")
	}
	return nil
}

// ParseLimits decodes the mapping n (sandbox.limits, or a harness's
// resources: block at field) into l, key by key with ParseLimit; an
// unknown key is an error listing LimitKeys. each, when set, is called
// after every key.
func ParseLimits(file, field string, n *yaml.Node, l *Limits, each func(key string, v *yaml.Node)) error {
	pairs, err := yamlx.Pairs(file, field, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		kf := yamlx.Join(field, kv[0].Value)
		if err := ParseLimit(file, kf, kv[0].Value, kv[1], l); err != nil {
			if errors.Is(err, yamlx.ErrUnknownField) {
				return yamlx.Errorf(file, kv[0], kf, yamlx.ErrUnknownField, "(known: %s)", strings.Join(LimitKeys, ", "))
			}
			return err
		}
		if each != nil {
			each(kv[0].Value, kv[1])
		}
	}
	return nil
}

// LimitValue returns the limit of key in l as written in config files
// ("4GiB", "1024", "2").
func LimitValue(l Limits, key string) string {
	switch key {
	case "memory":
		return FormatSize(l.MemoryBytes)
	case "pids":
		return fmt.Sprint(l.Pids)
	case "cpus":
		return fmt.Sprint(l.CPUs)
	case "tmp_size":
		return FormatSize(l.TmpBytes)
	case "workspace_size":
		return FormatSize(l.WorkspaceBytes)
	case "output_size":
		return FormatSize(l.OutputBytes)
	case "output_files":
		return fmt.Sprint(l.OutputFiles)
	case "snapshot_size":
		return FormatSize(l.SnapshotBytes)
	}
	return ""
}

// Exceeds returns the first key (in LimitKeys order) whose value h sets
// above org, or "".
func Exceeds(org, h Limits) string {
	switch {
	case h.MemoryBytes > org.MemoryBytes:
		return "memory"
	case h.Pids > org.Pids:
		return "pids"
	case h.CPUs > org.CPUs:
		return "cpus"
	case h.TmpBytes > org.TmpBytes:
		return "tmp_size"
	case h.WorkspaceBytes > org.WorkspaceBytes:
		return "workspace_size"
	case h.OutputBytes > org.OutputBytes:
		return "output_size"
	case h.OutputFiles > org.OutputFiles:
		return "output_files"
	case h.SnapshotBytes > org.SnapshotBytes:
		return "snapshot_size"
	}
	return ""
}
