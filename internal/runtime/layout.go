package runtime

import (
	"context"
	"fmt"
	"path"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// UploadConfig lays out the agent configuration under configDir in the
// sandbox, the part of Bootstrap every runtime shares:
//
//	<configDir>/agents/<AgentName>.md   from AgentFile
//	<configDir>/skills/<Skill.Name>/    from Skill.HostDir (personal level)
//	<configDir>/plugins/<Plugin.Name>/  from Plugin.HostDir
//
// Names must pass CheckName and be unique per kind. It stops at the first
// failure; files uploaded before it remain.
func UploadConfig(ctx context.Context, s sandbox.Session, configDir string, in BootstrapInput) error {
	if err := CheckName("agent", in.AgentName); err != nil {
		return err
	}
	if in.AgentFile == "" {
		return fmt.Errorf("agent %q: no agent definition file", in.AgentName)
	}
	dirs := in.configDirs()
	seen := map[string]bool{}
	for _, d := range dirs {
		if err := CheckName(d.kind, d.name); err != nil {
			return err
		}
		key := d.kind + "/" + d.name // names are single path elements
		if seen[key] {
			return fmt.Errorf("%s %q: listed twice", d.kind, d.name)
		}
		seen[key] = true
	}
	dst := path.Join(configDir, "agents", in.AgentName+".md")
	if err := s.Upload(ctx, in.AgentFile, dst); err != nil {
		return fmt.Errorf("uploading agent definition to %s: %w", dst, err)
	}
	for _, d := range dirs {
		dst := path.Join(configDir, d.kind+"s", d.name)
		if err := s.Upload(ctx, d.hostDir, dst); err != nil {
			return fmt.Errorf("uploading %s %q to %s: %w", d.kind, d.name, dst, err)
		}
	}
	return nil
}

// configDirEntry is one skill or plugin directory UploadConfig uploads, to
// <configDir>/<kind>s/<name>.
type configDirEntry struct{ kind, name, hostDir string }

// configDirs lists the skills, then the plugins, of in.
func (in BootstrapInput) configDirs() []configDirEntry {
	var out []configDirEntry
	for _, sk := range in.Skills {
		out = append(out, configDirEntry{"skill", sk.Name, sk.HostDir})
	}
	for _, p := range in.Plugins {
		out = append(out, configDirEntry{"plugin", p.Name, p.HostDir})
	}
	return out
}

// RemoveFile deletes a sandbox file if it exists (rm -f), used by
// CleanupIteration implementations.
func RemoveFile(ctx context.Context, s sandbox.Session, p string) error {
	if p == "" {
		return nil
	}
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"rm", "-f", "--", p}})
	if err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("removing %s: rm exited %d: %s", p, res.ExitCode, firstLine(res.Stderr))
	}
	return nil
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}

// WriteFile writes data to a sandbox file through the session (parents
// created, file replaced), so it works for every backend.
func WriteFile(ctx context.Context, s sandbox.Session, p string, data []byte) error {
	res, err := s.Exec(ctx, sandbox.ExecRequest{
		Args:  []string{"sh", "-c", `mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`, "sh", p},
		Stdin: data,
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("writing %s: exit status %d: %s", p, res.ExitCode, firstLine(res.Stderr))
	}
	return nil
}

// ReadFile reads a sandbox file; ok is false when it does not exist or
// cannot be read.
func ReadFile(ctx context.Context, s sandbox.Session, p string) (data []byte, ok bool, err error) {
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"cat", "--", p}})
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return nil, false, nil
	}
	return res.Stdout, true, nil
}
