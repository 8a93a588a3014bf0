package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes"
)

func newSandboxCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Try sandbox policies by hand",
	}
	cmd.AddCommand(newSandboxExecCmd(env))
	return cmd
}

type sandboxExecFlags struct {
	backend, net, image string
	ro, rw              []string
	timeout             time.Duration
	memory              string
	pids                int
	cpus                float64
	env                 []string
	cwd                 string
	dryRun              bool
}

func newSandboxExecCmd(env *Env) *cobra.Command {
	var f sandboxExecFlags
	cmd := &cobra.Command{
		Use:   "exec [flags] -- CMD [ARG...]",
		Short: "Run one command in a fresh sandbox and exit with its status",
		Long: `Provision a sandbox with the given mounts, network policy and limits, run
CMD in it with this process's stdin/stdout/stderr, then tear the sandbox down.

  --ro SRC:DST / --rw SRC:DST   bind a host path read-only / read-write
  --net none                    no network (default)
  --net HOST[:PORT],...         egress only to these hosts through the
                                allowlisting proxy ("*.example.com" = subdomains)

The exit status is the command's (128+N when killed by signal N, 124 on
timeout). The sandbox always has /sandbox (read-write, temporary) and the
fullsend binary at /usr/local/bin/fullsend.

With --backend kubernetes --dry-run nothing runs: the NetworkPolicy and the
Pod the run would create are printed as YAML (the gateway token as TOKEN),
for review or GitOps; no cluster is contacted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSandboxExec(cmd.Context(), env, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", "", "sandbox `BACKEND`: "+sandbox.BackendChoices("or")+" (default: config sandbox.backend, else local)")
	fl.StringArrayVar(&f.ro, "ro", nil, "read-only mount `SRC:DST` (repeatable)")
	fl.StringArrayVar(&f.rw, "rw", nil, "read-write mount `SRC:DST` (repeatable)")
	fl.StringVar(&f.net, "net", "none", "network: none, or comma-separated `HOST[:PORT]` allowlist")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-time limit (e.g. 30s; 0 = none)")
	fl.StringVar(&f.memory, "memory", "", "memory limit `N` in bytes, or with K/M/G suffix")
	fl.IntVar(&f.pids, "pids", 0, "process (task) limit")
	fl.Float64Var(&f.cpus, "cpus", 0, "CPU limit in cores")
	fl.StringArrayVar(&f.env, "env", nil, "environment `KEY=VALUE` (repeatable)")
	fl.StringVar(&f.cwd, "cwd", "", "working `DIR` inside the sandbox (default /sandbox)")
	fl.StringVar(&f.image, "image", "", "image for image-based backends (name@sha256:...)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "kubernetes backend: print the NetworkPolicy and Pod as YAML instead of running")
	return cmd
}

// parseSize accepts 123, 64K, 512M, 2G (powers of 1024).
func parseSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

func parseMount(v string, ro bool) (sandbox.Mount, error) {
	src, dst, ok := strings.Cut(v, ":")
	if !ok || src == "" || dst == "" {
		return sandbox.Mount{}, fmt.Errorf("mount %q: want SRC:DST", v)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return sandbox.Mount{}, err
	}
	return sandbox.Mount{Source: abs, Target: dst, ReadOnly: ro}, nil
}

func buildSandboxSpec(f sandboxExecFlags, stderr *os.File) (sandbox.Spec, error) {
	var spec sandbox.Spec
	for _, v := range f.ro {
		m, err := parseMount(v, true)
		if err != nil {
			return spec, err
		}
		spec.Mounts = append(spec.Mounts, m)
	}
	for _, v := range f.rw {
		m, err := parseMount(v, false)
		if err != nil {
			return spec, err
		}
		spec.Mounts = append(spec.Mounts, m)
	}
	if f.net != "" && f.net != "none" {
		for _, h := range strings.Split(f.net, ",") {
			if h = strings.TrimSpace(h); h != "" {
				spec.Network.Allow = append(spec.Network.Allow, h)
			}
		}
	}
	mem, err := parseSize(f.memory)
	if err != nil {
		return spec, fmt.Errorf("--memory: %w", err)
	}
	spec.Limits = sandbox.Limits{WallTime: f.timeout, MemoryBytes: mem, Pids: f.pids, CPUs: f.cpus}
	if len(f.env) > 0 {
		spec.Env = map[string]string{}
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return spec, fmt.Errorf("--env %q: want KEY=VALUE", kv)
			}
			spec.Env[k] = v
		}
	}
	spec.WorkDir = f.cwd
	spec.Image = f.image
	return sandbox.Check(spec)
}

func runSandboxExec(ctx context.Context, env *Env, f sandboxExecFlags, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	spec, err := buildSandboxSpec(f, nil)
	if err != nil {
		return usageError{err}
	}
	opts := sandbox.Options{}
	backend := f.backend
	var k8s config.Kubernetes
	if cfg, err := env.LoadConfig(); err == nil && cfg != nil {
		if backend == "" {
			backend = cfg.Sandbox.Backend
		}
		opts.AllowedPrivateNetworks = cfg.Security.RemoteResources.AllowedPrivateNetworks
		opts.DockerHost, opts.OCIRuntime, opts.Image = cfg.Sandbox.Docker.Host, cfg.Sandbox.Docker.OCIRuntime, cfg.Sandbox.Docker.Image
		k8s = cfg.Sandbox.Kubernetes
	}
	if backend == "" {
		backend = sandbox.DefaultBackend
	}
	if f.dryRun {
		if backend != kubernetes.Name {
			return usageError{fmt.Errorf("--dry-run: only the kubernetes backend has one (backend %q)", backend)}
		}
		return sandboxDryRun(env, k8s, spec)
	}
	if err := thisSystemNeedsLinux("sandbox exec"); err != nil {
		return err
	}
	if backend == kubernetes.Name {
		if err := kubernetesOptions(env, k8s, &opts); err != nil {
			return err
		}
	}
	spec.Network.Log = env.Stderr
	b, err := backends.Open(backend, opts)
	if err != nil {
		return err
	}
	s, err := b.Provision(ctx, spec)
	if err != nil {
		return err
	}
	defer s.Terminate(context.Background())
	req := sandbox.ExecRequest{Args: args, Stdout: env.Stdout, Stderr: env.Stderr}
	if env.Stdin != nil && !env.IsTerminal(env.Stdin) {
		req.StdinReader = env.Stdin
	}
	res, err := s.Exec(ctx, req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &ExitError{Code: 130, Err: err}
		}
		return err
	}
	if res.TimedOut {
		return &ExitError{Code: 124, Err: fmt.Errorf("sandbox exec: %s: timed out after %v", args[0], f.timeout)}
	}
	if res.OOMKilled {
		// As a run reports it: the limit, not its symptom (exit 137).
		code := res.ExitCode
		if code == 0 {
			code = 137
		}
		return &ExitError{Code: code, Err: fmt.Errorf("sandbox exec: %s: memory limit %s exceeded (OOM kill)", args[0], config.FormatSize(spec.Limits.MemoryBytes))}
	}
	if res.ExitCode != 0 {
		return &ExitError{Code: res.ExitCode}
	}
	return nil
}
