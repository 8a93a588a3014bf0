package claude

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

var _ runtime.HostChecker = (*Runtime)(nil)

// CheckHost implements runtime.HostChecker: it locates the Claude Code
// CLI as the runtime does (the CLI named, else config.yaml
// runtimes.claude.binary, else claude on PATH; Locate), runs its
// --version and compares the answer with TestedVersion. A missing or
// other CLI is a warning: only the claude runtime needs it.
func (r *Runtime) CheckHost(ctx context.Context, in runtime.HostCheckInput) runtime.HostCheck {
	c := runtime.HostCheck{Name: "claude"}
	binary, from := in.CLI, "--claude-binary"
	if binary == "" && in.Org != nil && in.Org.Runtimes.Claude.Binary != "" {
		binary, from = in.Org.Runtimes.Claude.Binary, "config.yaml runtimes.claude.binary"
	}
	if binary == "" {
		from = "PATH"
	}
	inst, err := Locate(binary, in.Getenv)
	if err != nil {
		c.Status, c.Detail = "warn", fmt.Sprintf("%v (from %s): the claude runtime cannot run", err, from)
		c.Fix = fmt.Sprintf("install Claude Code %s (npm install -g @anthropic-ai/claude-code@%s) or name it in config.yaml runtimes.claude.binary or --claude-binary; or use runtime: native or script", TestedVersion, TestedVersion)
		return c
	}
	vctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	name, args := inst.Host, []string{"--version"}
	if inst.Node != "" {
		name, args = inst.Node, []string{inst.Host, "--version"}
	}
	cmd := exec.CommandContext(vctx, name, args...)
	cmd.Env = []string{"PATH=" + in.Getenv("PATH"), "HOME=" + in.Getenv("HOME")}
	out, err := cmd.Output()
	version := ParseVersion(string(out))
	switch {
	case err != nil || version == "":
		why := "printed no version"
		if err != nil {
			why = err.Error()
		}
		c.Status, c.Detail = "warn", fmt.Sprintf("%s (from %s): `claude --version` failed: %s", inst.Host, from, why)
		c.Fix = fmt.Sprintf("reinstall Claude Code %s (npm install -g @anthropic-ai/claude-code@%s)", TestedVersion, TestedVersion)
	case version != TestedVersion:
		c.Status, c.Detail = "warn", fmt.Sprintf("%s (from %s): Claude Code %s, but CI tests %s; other versions may change flags or output", inst.Host, from, version, TestedVersion)
		c.Fix = fmt.Sprintf("npm install -g @anthropic-ai/claude-code@%s (or point runtimes.claude.binary at that version)", TestedVersion)
	default:
		c.Status, c.Detail = "ok", fmt.Sprintf("%s (from %s): Claude Code %s, the version CI tests", inst.Host, from, version)
	}
	return c
}
