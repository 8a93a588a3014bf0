//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/client"

	// Link every package fullsend links, so the re-executed sandbox init pays
	// the same package-initialisation cost as the real binary.
	_ "github.com/fullsend-ai/fullsend/internal/cli"

	"github.com/fullsend-ai/fullsend/internal/reexec"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

type stats struct {
	median, p90 time.Duration
	note        string
}

func summarize(d []time.Duration) stats {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return stats{median: d[len(d)/2], p90: d[len(d)*9/10]}
}

func (s stats) String() string {
	if s.note != "" {
		return s.note
	}
	return fmt.Sprintf("%7.2f ms (p90 %6.2f)", float64(s.median.Microseconds())/1000, float64(s.p90.Microseconds())/1000)
}

func measure(n int, f func() error) stats { return measureAfter(n, 0, f) }

// measureAfter times f n times after a warm-up, sleeping idle (untimed)
// before each run.
func measureAfter(n int, idle time.Duration, f func() error) stats {
	var d []time.Duration
	if err := f(); err != nil { // warm-up
		return stats{note: "error: " + oneLine(err.Error())}
	}
	for i := 0; i < n; i++ {
		time.Sleep(idle)
		t := time.Now()
		if err := f(); err != nil {
			return stats{note: "error: " + oneLine(err.Error())}
		}
		d = append(d, time.Since(t))
	}
	return summarize(d)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return s
}

// pause is the idle time before each timed exec in a live session (flag
// -pause): an agent's model thinks between two tool calls.
var pause time.Duration

func backendRows(b sandbox.Backend, n int) (full, execLive stats) {
	ctx := context.Background()
	full = measure(n, func() error {
		s, err := b.Provision(ctx, sandbox.Spec{})
		if err != nil {
			return err
		}
		r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}})
		if err == nil && r.ExitCode != 0 {
			err = fmt.Errorf("true: exit %d: %s", r.ExitCode, r.Stderr)
		}
		if terr := s.Terminate(ctx); err == nil {
			err = terr
		}
		return err
	})
	s, err := b.Provision(ctx, sandbox.Spec{})
	if err != nil {
		return full, stats{note: "error: " + oneLine(err.Error())}
	}
	defer s.Terminate(ctx)
	execLive = measureAfter(n, pause, func() error {
		r, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}})
		if err == nil && r.ExitCode != 0 {
			err = fmt.Errorf("true: exit %d", r.ExitCode)
		}
		return err
	})
	return full, execLive
}

func bwrapRow(n int) stats {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return stats{note: "not installed (apt-get install bubblewrap)"}
	}
	dir, _ := os.MkdirTemp("", "bwrap-bench-")
	defer os.RemoveAll(dir)
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr"}
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		if t, err := os.Readlink("/" + l); err == nil {
			args = append(args, "--symlink", t, "/"+l)
		} else if _, err := os.Stat("/" + l); err == nil {
			args = append(args, "--ro-bind", "/"+l, "/"+l)
		}
	}
	args = append(args, "--ro-bind", "/etc/alternatives", "/etc/alternatives", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", dir, "/sandbox", "--chdir", "/sandbox", "true")
	return measure(n, func() error {
		out, err := exec.Command(bw, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
}

func main() {
	// The local and docker sessions run this binary as their roles.
	reexec.Main()
	n := flag.Int("n", 50, "runs per measurement")
	flag.DurationVar(&pause, "pause", 0, "idle time before each timed exec in a live session (a model's think time; 0 = back to back)")
	image := flag.String("image", "", "docker image (digest or id); default: fullsend-sandboxtest-busybox:latest's id")
	flag.Parse()

	fmt.Printf("sandbox benchmark: %d runs each, median (p90); %s\n\n", *n, time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("%-34s %-28s %-28s\n", "backend", "provision+exec true+terminate", "exec true in live session")

	lb, err := local.New(sandbox.Options{})
	if err != nil {
		fmt.Printf("%-34s %s\n", "local", err)
	} else {
		full, live := backendRows(lb, *n)
		fmt.Printf("%-34s %-28s %-28s\n", "local (fullsend)", full, live)
	}
	fmt.Printf("%-34s %-28s %-28s\n", "bwrap --unshare-all (bubblewrap)", bwrapRow(*n), "n/a (no live session)")

	if _, err := docker.New(sandbox.Options{}); err != nil {
		fmt.Printf("%-34s %s\n", "docker", oneLine(err.Error()))
		return
	}
	img := *image
	if img == "" {
		if cli, err := client.New(client.FromEnv); err == nil {
			if in, err := cli.ImageInspect(context.Background(), "fullsend-sandboxtest-busybox:latest"); err == nil {
				img = in.ID
			}
		}
	}
	if img == "" {
		fmt.Printf("%-34s %s\n", "docker", "no image: pass -image or run the docker conformance tests once")
		return
	}
	db, err := docker.New(sandbox.Options{Image: img})
	if err != nil {
		fmt.Printf("%-34s %s\n", "docker", oneLine(err.Error()))
		return
	}
	full, live := backendRows(db, *n)
	fmt.Printf("%-34s %-28s %-28s\n", "docker (runc, busybox image)", full, live)
}
