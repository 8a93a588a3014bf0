package config

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Limits are the resource limits of a run: sandbox.limits in config.yaml
// (the org defaults, applied to every run and every backend) and a
// harness's resources: block (which may only lower them). A zero field is
// "not set".
type Limits struct {
	MemoryBytes    int64   `json:"memory_bytes"`    // memory: the whole session
	Pids           int64   `json:"pids"`            // pids: tasks (processes and threads) of the agent
	CPUs           float64 `json:"cpus"`            // cpus: CPU bandwidth in cores
	TmpBytes       int64   `json:"tmp_bytes"`       // tmp_size: size= of the sandbox's /tmp tmpfs
	WorkspaceBytes int64   `json:"workspace_bytes"` // workspace_size: bytes the sandbox may write under /sandbox
	OutputBytes    int64   `json:"output_bytes"`    // output_size: bytes downloaded from /sandbox/output, and captured stdout/stderr
	OutputFiles    int64   `json:"output_files"`    // output_files: files and directories downloaded from /sandbox/output
	SnapshotBytes  int64   `json:"snapshot_bytes"`  // snapshot_size: file content one workspace snapshot may keep
}

// Default limits (sandbox.limits when config.yaml sets none).
const (
	DefaultMemoryBytes    = 4 << 30
	DefaultPids           = 1024
	DefaultCPUs           = 2.0
	DefaultTmpBytes       = 1 << 30
	DefaultWorkspaceBytes = 10 << 30
	DefaultOutputBytes    = 64 << 20
	DefaultOutputFiles    = 10000
	DefaultSnapshotBytes  = 1 << 30
	// MaxOutputFiles bounds output_files itself.
	MaxOutputFiles = 1 << 22
)

// DefaultLimits returns the built-in sandbox.limits.
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes: DefaultMemoryBytes, Pids: DefaultPids, CPUs: DefaultCPUs,
		TmpBytes: DefaultTmpBytes, WorkspaceBytes: DefaultWorkspaceBytes, OutputBytes: DefaultOutputBytes,
		OutputFiles: DefaultOutputFiles, SnapshotBytes: DefaultSnapshotBytes,
	}
}

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
		l.Pids = v
	case "output_files":
		v, err := yamlx.Int(file, field, n)
		if err != nil {
			return err
		}
		if v <= 0 || v > MaxOutputFiles {
			return yamlx.Errorf(file, n, field, yamlx.ErrValue, "must be a positive number of files (at most %d)", MaxOutputFiles)
		}
		l.OutputFiles = v
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

// Value returns the limit of key as written in config files ("4GiB",
// "1024", "2").
func (l Limits) Value(key string) string {
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

// Exceeds reports, for each key set in h, whether it is above l. It returns
// the first key (in LimitKeys order) whose value h raises, or "".
func (l Limits) Exceeds(h Limits) string {
	switch {
	case h.MemoryBytes > l.MemoryBytes:
		return "memory"
	case h.Pids > l.Pids:
		return "pids"
	case h.CPUs > l.CPUs:
		return "cpus"
	case h.TmpBytes > l.TmpBytes:
		return "tmp_size"
	case h.WorkspaceBytes > l.WorkspaceBytes:
		return "workspace_size"
	case h.OutputBytes > l.OutputBytes:
		return "output_size"
	case h.OutputFiles > l.OutputFiles:
		return "output_files"
	case h.SnapshotBytes > l.SnapshotBytes:
		return "snapshot_size"
	}
	return ""
}

// Lower returns l with every limit set in h (non-zero) and lower than l's
// replaced by h's.
func (l Limits) Lower(h Limits) Limits {
	lower := func(a, b int64) int64 {
		if b > 0 && b < a {
			return b
		}
		return a
	}
	l.MemoryBytes = lower(l.MemoryBytes, h.MemoryBytes)
	l.Pids = lower(l.Pids, h.Pids)
	if h.CPUs > 0 && h.CPUs < l.CPUs {
		l.CPUs = h.CPUs
	}
	l.TmpBytes = lower(l.TmpBytes, h.TmpBytes)
	l.WorkspaceBytes = lower(l.WorkspaceBytes, h.WorkspaceBytes)
	l.OutputBytes = lower(l.OutputBytes, h.OutputBytes)
	l.OutputFiles = lower(l.OutputFiles, h.OutputFiles)
	l.SnapshotBytes = lower(l.SnapshotBytes, h.SnapshotBytes)
	return l
}

// Min returns the limits of a and b combined, each the lower of the set
// values (zero = not set). It composes resources: blocks of a base chain.
func Min(a, b Limits) Limits {
	pick := func(x, y int64) int64 {
		switch {
		case x == 0:
			return y
		case y == 0 || x < y:
			return x
		}
		return y
	}
	out := Limits{
		MemoryBytes: pick(a.MemoryBytes, b.MemoryBytes), Pids: pick(a.Pids, b.Pids),
		TmpBytes: pick(a.TmpBytes, b.TmpBytes), WorkspaceBytes: pick(a.WorkspaceBytes, b.WorkspaceBytes),
		OutputBytes: pick(a.OutputBytes, b.OutputBytes), OutputFiles: pick(a.OutputFiles, b.OutputFiles), SnapshotBytes: pick(a.SnapshotBytes, b.SnapshotBytes), CPUs: a.CPUs,
	}
	if out.CPUs == 0 || (b.CPUs > 0 && b.CPUs < out.CPUs) {
		out.CPUs = b.CPUs
	}
	return out
}
