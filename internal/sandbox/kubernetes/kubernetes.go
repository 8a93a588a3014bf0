package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// Name is the backend's registered name.
const Name = "kubernetes"

var digestRef = lazyre.New(`^[a-zA-Z0-9][a-zA-Z0-9._/:-]*@sha256:[0-9a-f]{64}$`)

// NetworkCaveat is what the Pod's network isolation depends on.
const NetworkCaveat = "egress is enforced only where the cluster's CNI enforces NetworkPolicy (the run's policy denies all but the egress gateway); elsewhere the Pod reaches whatever the cluster network routes to"

// ReadyTimeout bounds how long Provision waits for the Pod to run.
const ReadyTimeout = 5 * time.Minute

// Backend runs each session as one Pod.
type Backend struct {
	cfg    Config
	key    []byte
	client Client
	exec   Executor
	now    func() time.Time
	poll   time.Duration
}

// New connects to the cluster of the current kubeconfig ($KUBECONFIG or
// ~/.kube/config), else the in-cluster service account.
func New(o sandbox.Options) (*Backend, error) {
	c, err := LoadCluster()
	if err != nil {
		return nil, fmt.Errorf("kubernetes sandbox: %w: %v", sandbox.ErrUnavailable, err)
	}
	cs, err := NewClient(c)
	if err != nil {
		return nil, fmt.Errorf("kubernetes sandbox: %w: %v", sandbox.ErrUnavailable, err)
	}
	return NewWithClient(o, cs, NewExecutor(c))
}

// NewWithClient builds the backend on a given clientset and executor
// (tests adapt client-go's fake clientset).
func NewWithClient(o sandbox.Options, cs Client, ex Executor) (*Backend, error) {
	c := Config{Namespace: o.Namespace, RuntimeClass: o.RuntimeClass, Image: o.Image, EgressGateway: o.EgressGateway}
	if c.Namespace == "" {
		return nil, errors.New("kubernetes sandbox: no namespace (config.yaml sandbox.kubernetes.namespace)")
	}
	if c.EgressGateway != "" {
		if _, _, _, err := gatewayTarget(c.EgressGateway, c.Namespace); err != nil {
			return nil, err
		}
		if len(o.SigningKey) < gateway.MinKeyBytes {
			return nil, errors.New("kubernetes sandbox: egress gateway configured but no signing key (the variable config.yaml sandbox.kubernetes.signing_key_env names; fullsend egress-gateway keygen)")
		}
	}
	return &Backend{cfg: c, key: append([]byte(nil), o.SigningKey...), client: cs, exec: ex, now: time.Now, poll: time.Second}, nil
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return Name }

// Capabilities implements sandbox.Backend.
func (b *Backend) Capabilities() sandbox.Capabilities {
	iso := "kubernetes pod"
	if b.cfg.RuntimeClass != "" {
		iso += " (runtimeClass " + b.cfg.RuntimeClass + ")"
	}
	lim := func(lv sandbox.Enforcement, how string) sandbox.LimitEnforcement {
		return sandbox.LimitEnforcement{Level: lv, How: how}
	}
	return sandbox.Capabilities{
		Isolation:        iso,
		NetworkAllowlist: b.cfg.EgressGateway != "",
		MemoryLimit:      true, CPULimit: true,
		Seccomp:       true,
		NetworkCaveat: NetworkCaveat,
		Limits: sandbox.LimitSupport{
			Memory:    lim(sandbox.Enforced, "container memory limit; an exec's OOM kill is read from the Pod's memory cgroup (oom_kill)"),
			Pids:      lim(sandbox.NotEnforced, "no per-Pod field: only the node's kubelet podPidsLimit, if the cluster sets one"),
			CPU:       lim(sandbox.Enforced, fmt.Sprintf("container cpu limit (CFS quota); the request is at most %dm", CPURequestMilli)),
			Tmp:       lim(sandbox.Enforced, "memory-backed emptyDir sizeLimit (tmpfs size)"),
			Workspace: lim(sandbox.Weaker, "one file: RLIMIT_FSIZE; in all: emptyDir sizeLimit and ephemeral-storage limit, the kubelet evicts the Pod when its periodic check finds more"),
			Output:    lim(sandbox.Enforced, "runner side: exec output capped and downloads staged and refused past it"),
		},
		Notes: []string{
			"seccomp: the container runtime's RuntimeDefault profile plus fullsend's own filter (socket families, denied system calls, no setsid), stacked on every command by the image's fullsend binary",
			"landlock: not applied",
			"network: " + NetworkCaveat + "; per-binary rules are not enforced",
			"exec end and timeout: every process the command started (its session) is killed from a second exec",
			"pid 1 of the Pod handles no signal: commands cannot end the Pod",
		},
	}
}

func newID() string {
	var b [5]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// DryRun renders the objects of a run of s without a cluster; the proxy
// credentials hold the placeholder TOKEN.
func DryRun(c Config, s sandbox.Spec, now time.Time) (*Objects, error) {
	s, err := sandbox.Check(s)
	if err != nil {
		return nil, err
	}
	pu := ""
	if !s.Network.None() && c.EgressGateway != "" {
		if pu, err = gateway.ProxyURL(c.EgressGateway, "TOKEN"); err != nil {
			return nil, err
		}
	}
	return Render(c, s, "dry-run", now, pu)
}

// Provision implements sandbox.Backend: it removes leftovers of earlier
// runs past their deadline, creates the NetworkPolicy, then the Pod, and
// waits until the Pod runs.
func (b *Backend) Provision(ctx context.Context, s sandbox.Spec) (sandbox.Session, error) {
	s, err := sandbox.Check(s)
	if err != nil {
		return nil, err
	}
	if err := b.Cleanup(ctx); err != nil {
		return nil, err
	}
	id := newID()
	now := b.now()
	pu := ""
	if !s.Network.None() {
		if b.cfg.EgressGateway == "" {
			return nil, errors.New("kubernetes sandbox: the spec allows egress but no gateway is configured (config.yaml sandbox.kubernetes.egress_gateway)")
		}
		// The run's secrets travel sealed in the token, under a key the
		// Pod never sees: the gateway opens them and swaps placeholders.
		var sealed []byte
		if s.Network.Secrets != nil {
			if sealed, err = s.Network.Secrets.Seal(gateway.SealKey(b.key)); err != nil {
				return nil, fmt.Errorf("kubernetes sandbox: %w", err)
			}
		}
		tok, err := gateway.MintWithSecrets(b.key, id, s.Network.Allow, sealed, now, Deadline(s))
		if err != nil {
			return nil, fmt.Errorf("kubernetes sandbox: %w", err)
		}
		if pu, err = gateway.ProxyURL(b.cfg.EgressGateway, tok); err != nil {
			return nil, err
		}
	}
	objs, err := Render(b.cfg, s, id, now, pu)
	if err != nil {
		return nil, err
	}
	ss := &session{b: b, id: id, name: objs.Pod.Name, spec: s, limits: s.Limits.Resolved()}
	if err := b.client.CreateNetworkPolicy(ctx, objs.NetworkPolicy); err != nil {
		return nil, fmt.Errorf("kubernetes sandbox %s: create NetworkPolicy %s/%s: %w", id, b.cfg.Namespace, objs.NetworkPolicy.Name, err)
	}
	if err := b.client.CreatePod(ctx, objs.Pod); err != nil {
		err = fmt.Errorf("kubernetes sandbox %s: create Pod %s/%s: %w", id, b.cfg.Namespace, objs.Pod.Name, err)
		return nil, errors.Join(err, ss.Terminate(context.WithoutCancel(ctx)))
	}
	if err := b.waitRunning(ctx, objs.Pod.Name); err != nil {
		return nil, errors.Join(fmt.Errorf("kubernetes sandbox %s: %w", id, err), ss.Terminate(context.WithoutCancel(ctx)))
	}
	if err := ss.probe(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("kubernetes sandbox %s: %w", id, err), ss.Terminate(context.WithoutCancel(ctx)))
	}
	return ss, nil
}

// probe checks, in one exec, that the image's fullsend binary plays the
// confine role every command runs under, and reads the Pod's OOM kill
// counter (the baseline of ExecResult.OOMKilled).
func (s *session) probe(ctx context.Context) error {
	var out, errOut bytes.Buffer
	script := "(\n" + oomCount + "\n); exec env " + guest.EnvRole + `=confine "$0" "" 0`
	err := s.b.exec(ctx, s.b.cfg.Namespace, s.name, []string{"/bin/sh", "-c", script, sandbox.BinaryPath}, nil, &out, &errOut)
	if err != nil {
		msg := strings.TrimSpace(errOut.String())
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Errorf("Pod %s/%s: %s does not run in the image (it must hold a static fullsend binary there; see docs/kubernetes.md): %w %s", s.b.cfg.Namespace, s.name, sandbox.BinaryPath, err, msg)
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64); err == nil && n > 0 {
		s.oom.Store(n)
	}
	return nil
}

// fatalWaiting are container waiting reasons that will not resolve.
var fatalWaiting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

func (b *Backend) waitRunning(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	for {
		p, err := b.client.GetPod(ctx, b.cfg.Namespace, name)
		if err != nil {
			return fmt.Errorf("Pod %s/%s: %w", b.cfg.Namespace, name, err)
		}
		switch p.Status.Phase {
		case PodFailed, PodSucceeded:
			return fmt.Errorf("Pod %s/%s: %s before it ran: %s %s", b.cfg.Namespace, name, p.Status.Phase, p.Status.Reason, p.Status.Message)
		case PodRunning:
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == ContainerName && cs.Ready {
					return nil
				}
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && fatalWaiting[w.Reason] {
				return fmt.Errorf("Pod %s/%s: container %s: %s: %s", b.cfg.Namespace, name, cs.Name, w.Reason, w.Message)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Pod %s/%s: not running after %s (phase %q)", b.cfg.Namespace, name, ReadyTimeout, p.Status.Phase)
		case <-time.After(b.poll):
		}
	}
}

// Cleanup deletes the Pods and NetworkPolicies of this backend's runs in
// the namespace whose deadline has passed (runs whose runner died before
// tearing them down). Objects without a readable deadline are left alone.
func (b *Backend) Cleanup(ctx context.Context) error {
	sel := LabelManagedBy + "=" + ManagedBy + "," + LabelRun
	now := b.now()
	expired := func(m ObjectMeta) bool {
		d, err := time.Parse(time.RFC3339, m.Annotations[AnnotationDeadline])
		return err == nil && now.After(d)
	}
	ns := b.cfg.Namespace
	pods, err := b.client.ListPods(ctx, ns, sel)
	if err != nil {
		return fmt.Errorf("kubernetes sandbox: list Pods in %s: %w", ns, err)
	}
	var errs []error
	for _, p := range pods {
		if expired(p.ObjectMeta) {
			if err := b.client.DeletePod(ctx, ns, p.Name); err != nil && !IsNotFound(err) {
				errs = append(errs, fmt.Errorf("kubernetes sandbox: delete leftover Pod %s/%s: %w", ns, p.Name, err))
			}
		}
	}
	nps, err := b.client.ListNetworkPolicies(ctx, ns, sel)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("kubernetes sandbox: list NetworkPolicies in %s: %w", ns, err))...)
	}
	for _, p := range nps {
		if expired(p.ObjectMeta) {
			if err := b.client.DeleteNetworkPolicy(ctx, ns, p.Name); err != nil && !IsNotFound(err) {
				errs = append(errs, fmt.Errorf("kubernetes sandbox: delete leftover NetworkPolicy %s/%s: %w", ns, p.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

type session struct {
	b      *Backend
	id     string
	name   string
	spec   sandbox.Spec
	limits sandbox.Limits

	oom atomic.Int64 // the Pod's OOM kill count last read

	mu       sync.Mutex
	dead     bool
	termOnce sync.Once
	termErr  error
}

func (s *session) ID() string { return s.id }

// Terminate deletes the Pod (no grace period) and the NetworkPolicy, the
// Pod first so it never runs without its policy.
func (s *session) Terminate(ctx context.Context) error {
	s.termOnce.Do(func() {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		ns := s.b.cfg.Namespace
		var errs []error
		if err := s.b.client.DeletePod(ctx, ns, s.name); err != nil && !IsNotFound(err) {
			errs = append(errs, fmt.Errorf("kubernetes sandbox %s: delete Pod %s/%s: %w", s.id, ns, s.name, err))
		}
		if err := s.b.client.DeleteNetworkPolicy(ctx, ns, s.name); err != nil && !IsNotFound(err) {
			errs = append(errs, fmt.Errorf("kubernetes sandbox %s: delete NetworkPolicy %s/%s: %w", s.id, ns, s.name, err))
		}
		s.termErr = errors.Join(errs...)
	})
	return s.termErr
}
