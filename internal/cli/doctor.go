package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/config"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/backends"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// Doctor check statuses.
const (
	doctorOK   = "ok"
	doctorWarn = "warn"
	doctorFail = "fail"
)

// doctorCheck is one line of `fullsend doctor` (and one object of --json).
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctorProbeTimeout bounds the sandbox probe (provision, one command,
// teardown).
const doctorProbeTimeout = 60 * time.Second

func newDoctorCmd(env *Env) *cobra.Command {
	var asJSON bool
	var claudeBinary string
	cmd := &cobra.Command{
		Use:   "doctor [--json] [--claude-binary PATH]",
		Short: "Check what this machine can enforce and what fullsend needs",
		Long: `doctor checks, and prints as ok, warn or fail with the fix:

  user namespaces  the local sandbox provisions and runs a command
  seccomp          the sandbox's seccomp filter and no_new_privs are in force
  landlock         the kernel's Landlock ABI (defence in depth)
  cgroups          memory, pids and cpu limits enforced by a writable cgroup
                   (v2 delegated, or v1 as root) or only by rlimits
  docker           the Docker/Podman engine answers (the docker backend)
  claude           the Claude Code CLI the claude runtime would use
                   (--claude-binary, runtimes.claude.binary, else claude on
                   PATH) answers --version, and is the version CI tests
  config           config.yaml of the fullsend dir loads and is valid
  cache            every cache entry re-hashes to its name (corrupt entries
                   are removed, as by 'fullsend cache verify')
  forge tokens     the token_env variable of each forge is set (values are
                   never printed)

A check that concerns the configured sandbox backend fails; the same check
for a backend not in use only warns. Exit status 0 unless a check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if claudeBinary != "" {
				if err := config.CheckClaudeBinary(claudeBinary); err != nil {
					return usageError{fmt.Errorf("--claude-binary: %w", err)}
				}
			}
			checks := runDoctor(cmd.Context(), env, claudeBinary)
			failed := 0
			for _, c := range checks {
				if c.Status == doctorFail {
					failed++
				}
			}
			if asJSON {
				if err := writeJSON(env.Stdout, struct {
					OK     bool          `json:"ok"`
					Checks []doctorCheck `json:"checks"`
				}{failed == 0, checks}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				for _, c := range checks {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, oneLine(c.Detail))
					if c.Fix != "" && c.Status != doctorOK {
						fmt.Fprintf(tw, "\t\tfix: %s\n", oneLine(c.Fix))
					}
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if failed > 0 {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("doctor: %d check(s) failed", failed)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&claudeBinary, "claude-binary", "", "check this Claude Code CLI (a `PATH` or a command on $PATH) instead of config runtimes.claude.binary or claude")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object {\"ok\", \"checks\": [{name, status, detail, fix}]}")
	return cmd
}

// runDoctor runs every check. Probes are the sandbox packages' own (the
// local backend provisioning a session, its Capabilities, guest.LandlockABI,
// the docker backend's engine ping), never re-implementations.
func runDoctor(ctx context.Context, env *Env, claudeBinary string) []doctorCheck {
	cfg, cfgErr := env.LoadConfig()
	backend := "local"
	if cfg != nil && cfg.Sandbox.Backend != "" {
		backend = cfg.Sandbox.Backend
	}
	// severity: fail for what the configured backend needs, warn otherwise.
	severity := func(b string) string {
		if b == backend {
			return doctorFail
		}
		return doctorWarn
	}
	var checks []doctorCheck
	checks = append(checks, doctorLocal(ctx, severity("local"))...)
	checks = append(checks, doctorDocker(cfg, severity("docker")))
	checks = append(checks, doctorRuntimes(ctx, env, cfg, claudeBinary)...)
	checks = append(checks, doctorConfig(env, cfg, cfgErr))
	checks = append(checks, doctorCache(env))
	checks = append(checks, doctorForges(env, cfg)...)
	return checks
}

// doctorLocal provisions a local sandbox session and reads the status of a
// process inside it: user namespaces (the session exists), seccomp and
// no_new_privs (as the kernel reports them for that process); then
// Landlock and cgroups as the backend advertises them.
func doctorLocal(ctx context.Context, sev string) []doctorCheck {
	if err := sandbox.NeedsLinux("local sandbox", hostOS); err != nil {
		return []doctorCheck{{Name: "user namespaces", Status: sev, Detail: err.Error(),
			Fix: "run agents on a Linux machine (or in a Linux VM)"}}
	}
	userns := doctorCheck{Name: "user namespaces"}
	sc := doctorCheck{Name: "seccomp"}
	status, err := probeSandbox(ctx)
	if err != nil {
		userns.Status, userns.Detail = sev, err.Error()
		userns.Fix = "enable unprivileged user namespaces (the sysctl named above), or set sandbox.backend: docker in config.yaml"
		sc.Status, sc.Detail = doctorWarn, "not checked: no local sandbox"
	} else {
		userns.Status, userns.Detail = doctorOK, "the local sandbox provisions (user, mount, pid, ipc, uts, net namespaces)"
		seccompMode, nnp := procStatus(status, "Seccomp"), procStatus(status, "NoNewPrivs")
		if seccompMode == "2" && nnp == "1" {
			sc.Status, sc.Detail = doctorOK, "filter mode and no_new_privs in force inside the sandbox"
		} else {
			sc.Status = sev
			sc.Detail = fmt.Sprintf("inside the sandbox Seccomp: %q, NoNewPrivs: %q (want 2 and 1)", seccompMode, nnp)
			sc.Fix = "use a kernel built with CONFIG_SECCOMP_FILTER"
		}
	}
	ll := doctorCheck{Name: "landlock"}
	if abi := guest.LandlockABI(); abi > 0 {
		ll.Status, ll.Detail = doctorOK, fmt.Sprintf("ABI version %d", abi)
	} else {
		ll.Status, ll.Detail = doctorWarn, "not available in this kernel: the sandbox runs without this defence-in-depth layer"
		ll.Fix = "Linux 5.13 or later with landlock in the lsm= boot parameter (or CONFIG_LSM)"
	}
	cg := doctorCheck{Name: "cgroups"}
	if b, err := backends.Open(backends.Local, sandbox.Options{}); err != nil {
		cg.Status, cg.Detail = doctorWarn, err.Error()
	} else {
		caps := b.Capabilities()
		var weak []string
		for _, n := range caps.Notes {
			if strings.HasPrefix(n, "pids:") || strings.HasPrefix(n, "memory:") || strings.HasPrefix(n, "cpu:") {
				weak = append(weak, n)
			}
		}
		version := "cgroup v1"
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			version = "cgroup v2"
		}
		if len(weak) == 0 {
			cg.Status, cg.Detail = doctorOK, version+": memory, pids and cpu limits enforced by a writable cgroup"
		} else {
			cg.Status = doctorWarn
			cg.Detail = version + " not writable by fullsend; " + strings.Join(weak, "; ")
			cg.Fix = "run fullsend in a delegated cgroup v2 subtree (e.g. systemd-run --user --scope -p Delegate=yes fullsend …), or as root with cgroup v1 controllers mounted"
		}
	}
	return []doctorCheck{userns, sc, ll, cg}
}

// probeSandbox provisions a local session and returns the
// /proc/self/status of a command run inside it.
func probeSandbox(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, doctorProbeTimeout)
	defer cancel()
	b, err := backends.Open("local", sandbox.Options{})
	if err != nil {
		return "", err
	}
	s, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		return "", err
	}
	defer s.Terminate(context.WithoutCancel(ctx))
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"cat", "/proc/self/status"}})
	if err != nil {
		return "", fmt.Errorf("local sandbox: running a command: %w", err)
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("local sandbox: cat /proc/self/status exited %d: %s", res.ExitCode, oneLine(string(res.Stderr)))
	}
	return string(res.Stdout), nil
}

// procStatus returns the value of a /proc/PID/status field.
func procStatus(status, key string) string {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func doctorDocker(cfg *config.Config, sev string) doctorCheck {
	c := doctorCheck{Name: "docker"}
	o := sandbox.Options{}
	if cfg != nil {
		o.DockerHost = cfg.Sandbox.Docker.Host
	}
	b, err := backends.Open("docker", o)
	if err != nil {
		c.Status, c.Detail = sev, err.Error()
		c.Fix = "start Docker or Podman, or point sandbox.docker.host (or DOCKER_HOST) at its socket; only needed for --sandbox docker"
		return c
	}
	c.Status, c.Detail = doctorOK, "engine reachable ("+b.Capabilities().Isolation+")"
	return c
}

// doctorRuntimes are the runtimes' checks of what they need on this host
// (runtime.HostChecker: the claude runtime's CLI and its version), in
// name order; cli is --claude-binary.
func doctorRuntimes(ctx context.Context, env *Env, cfg *config.Config, cli string) []doctorCheck {
	var out []doctorCheck
	for _, n := range builtin.Names() {
		rt, _ := builtin.Get(n)
		hc, ok := rt.(runtime.HostChecker)
		if !ok {
			continue
		}
		c := hc.CheckHost(ctx, runtime.HostCheckInput{Org: cfg, CLI: cli, Getenv: env.Getenv})
		out = append(out, doctorCheck{Name: c.Name, Status: c.Status, Detail: c.Detail, Fix: c.Fix})
	}
	return out
}

func doctorConfig(env *Env, cfg *config.Config, err error) doctorCheck {
	c := doctorCheck{Name: "config"}
	if err == nil {
		err = runpkg.CheckHarnessRuntime(nil, cfg) // config.yaml runtime: alone
	}
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = doctorFail, err.Error(), "correct the file and line named above"
	case cfg.Path == "":
		c.Status, c.Detail = doctorOK, fmt.Sprintf("no %s in %s: built-in defaults", config.FileName, displayPath(env.FullsendDir))
		c.Fix = "fullsend init writes one with every setting commented"
	default:
		c.Status, c.Detail = doctorOK, displayPath(cfg.Path)+" is valid"
	}
	return c
}

func doctorCache(env *Env) doctorCheck {
	c := doctorCheck{Name: "cache"}
	s, dir, err := cacheOpen(env)
	switch {
	case err != nil:
		c.Status, c.Detail = doctorFail, err.Error()
		c.Fix = "remove or repair the cache directory (or point FULLSEND_CACHE_DIR elsewhere)"
		return c
	case s == nil:
		c.Status, c.Detail = doctorOK, fmt.Sprintf("%s: empty", displayPath(dir))
		return c
	}
	entries, err := s.List()
	if err != nil {
		c.Status, c.Detail = doctorFail, err.Error()
		return c
	}
	problems, err := s.Verify()
	if err != nil {
		c.Status, c.Detail = doctorFail, err.Error()
		return c
	}
	if len(problems) > 0 {
		c.Status = doctorWarn
		c.Detail = fmt.Sprintf("%s: %d problem(s) among %d entries (corrupt entries removed; they are fetched again): %s", displayPath(dir), len(problems), len(entries), oneLine(problems[0].Error()))
		c.Fix = "nothing, unless it recurs: then check the disk, and what else writes to " + dir
		return c
	}
	c.Status, c.Detail = doctorOK, fmt.Sprintf("%s: %d entries, all intact", displayPath(dir), len(entries))
	return c
}

func doctorForges(env *Env, cfg *config.Config) []doctorCheck {
	if cfg == nil {
		cfg = config.Default()
	}
	var out []doctorCheck
	for _, f := range cfg.Forges {
		c := doctorCheck{Name: "forge " + f.Host}
		switch {
		case f.TokenEnv == "":
			c.Status, c.Detail = doctorWarn, "no token_env configured: anonymous API access (low rate limits, public repositories only)"
			c.Fix = "set forges[].token_env in config.yaml to the variable holding a read-only token"
		case strings.TrimSpace(env.Getenv(f.TokenEnv)) == "":
			c.Status, c.Detail = doctorWarn, f.TokenEnv+" is not set: anonymous API access (low rate limits, public repositories only)"
			c.Fix = "export " + f.TokenEnv + " with a read-only token"
		default:
			c.Status, c.Detail = doctorOK, f.TokenEnv+" is set"
		}
		out = append(out, c)
	}
	return out
}
