package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

const (
	testImage = "ghcr.io/fullsend-ai/sandbox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testGW    = "http://fullsend-egress-gateway.fullsend-system.svc:3128"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func testOptions() sandbox.Options {
	return sandbox.Options{Namespace: "fullsend-runs", RuntimeClass: "gvisor", Image: testImage, EgressGateway: testGW, SigningKey: testKey}
}

// readyOnCreate makes every created Pod Running and Ready at once (no
// kubelet in a fake clientset), or waiting with reason when set.
func readyOnCreate(cs *fake.Clientset, reason string) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if reason != "" {
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
				Name: ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "pull access denied"}}}}}
		} else {
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: ContainerName, Ready: true}}}
		}
		return false, nil, nil
	})
}

func newTestBackend(t *testing.T, cs *fake.Clientset, now time.Time) *Backend {
	t.Helper()
	b, err := NewWithClient(testOptions(), fakeClient{cs}, func(_ context.Context, _, _ string, cmd []string, _ io.Reader, _, _ io.Writer) error {
		if isProbe(cmd) {
			return nil
		}
		return errors.New("no exec in this test")
	})
	if err != nil {
		t.Fatal(err)
	}
	b.now = func() time.Time { return now }
	b.poll = time.Millisecond
	return b
}

// isProbe reports whether cmd is Provision's probe of the image.
func isProbe(cmd []string) bool {
	return len(cmd) == 4 && cmd[0] == "/bin/sh" && cmd[3] == sandbox.BinaryPath && strings.Contains(cmd[2], "=confine")
}

func env(p *corev1.Pod, name string) string {
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestLifecycle(t *testing.T) {
	cs := fake.NewClientset()
	readyOnCreate(cs, "")
	now := time.Now()
	b := newTestBackend(t, cs, now)
	ctx := context.Background()
	s, err := b.Provision(ctx, sandbox.Spec{Network: sandbox.Network{Allow: []string{"github.com"}}, Limits: sandbox.Limits{WallTime: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	name := "fullsend-" + s.ID()
	pod, err := cs.CoreV1().Pods("fullsend-runs").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels[LabelRun] != s.ID() || pod.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("labels %v", pod.Labels)
	}
	if np, err := cs.NetworkingV1().NetworkPolicies("fullsend-runs").Get(ctx, name, metav1.GetOptions{}); err != nil || np.Spec.PodSelector.MatchLabels[LabelRun] != s.ID() {
		t.Fatalf("NetworkPolicy %v %v", np, err)
	}
	// The Pod's proxy credentials are a token for this run and its allowlist.
	pu := env(pod, "HTTPS_PROXY")
	tok, ok := strings.CutPrefix(pu, "http://run:")
	tok, _, _ = strings.Cut(tok, "@")
	if !ok || !strings.HasSuffix(pu, "@fullsend-egress-gateway.fullsend-system.svc:3128") {
		t.Fatalf("HTTPS_PROXY %q", pu)
	}
	c, err := gateway.Verify(testKey, tok, now.Add(time.Minute))
	if err != nil || c.Run != s.ID() || strings.Join(c.Allow, ",") != "github.com" {
		t.Fatalf("token %+v %v", c, err)
	}
	if _, err := gateway.Verify(testKey, tok, now.Add(time.Hour+ProvisionSlack+time.Second)); err == nil {
		t.Fatal("token outlives the Pod's deadline")
	}
	if *pod.Spec.ActiveDeadlineSeconds != int64((time.Hour+ProvisionSlack)/time.Second) {
		t.Errorf("activeDeadlineSeconds %d", *pod.Spec.ActiveDeadlineSeconds)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("fullsend-runs").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Pod after Terminate: %v", err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies("fullsend-runs").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("NetworkPolicy after Terminate: %v", err)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Errorf("second Terminate: %v", err)
	}
	if _, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Exec after Terminate: %v", err)
	}
}

func countObjects(t *testing.T, cs *fake.Clientset) (pods, nps int) {
	p, err := cs.CoreV1().Pods("fullsend-runs").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := cs.NetworkingV1().NetworkPolicies("fullsend-runs").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Items), len(n.Items)
}

// What a failed Provision may leave in the namespace.
const (
	leftAny     = iota // not checked (listing may be refused)
	leftNothing        // no Pod, no NetworkPolicy
	leftNoPod          // no Pod
)

func TestProvisionErrors(t *testing.T) {
	ctx := context.Background()
	refuse := func(verb, resource string, gr schema.GroupResource, why string) func(*fake.Clientset) {
		return func(cs *fake.Clientset) {
			cs.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(gr, "", errors.New(why))
			})
		}
	}
	for _, tc := range []struct {
		name    string
		setup   func(cs *fake.Clientset)
		timeout time.Duration // of the Provision call; 0 = none
		want    []string      // in the error
		left    int
		note    string // after the leftNothing complaint
	}{
		{name: "image pull", setup: func(cs *fake.Clientset) { readyOnCreate(cs, "ErrImagePull") },
			want: []string{"container sandbox: ErrImagePull: pull access denied"}, left: leftNothing},
		{name: "pod failed", setup: func(cs *fake.Clientset) {
			cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}
				return false, nil, nil
			})
		}, want: []string{"Failed before it ran: DeadlineExceeded"}, left: leftNothing},
		{name: "create refused", setup: refuse("create", "pods", corev1.Resource("pods"), "violates PodSecurity"),
			want: []string{"create Pod fullsend-runs/fullsend-", "violates PodSecurity"}, left: leftNothing,
			note: " (the policy must go with the failed Pod)"},
		{name: "policy refused", setup: refuse("create", "networkpolicies", networkingv1.Resource("networkpolicies"), "RBAC"),
			want: []string{"create NetworkPolicy"}, left: leftNoPod},
		{name: "list refused", setup: refuse("list", "pods", corev1.Resource("pods"), "RBAC"),
			want: []string{"list Pods in fullsend-runs"}},
		// Pods stay Pending.
		{name: "not ready in time", timeout: 50 * time.Millisecond, want: []string{"not running"}, left: leftNothing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.setup != nil {
				tc.setup(cs)
			}
			b := newTestBackend(t, cs, time.Now())
			cctx, cancel := ctx, context.CancelFunc(func() {})
			if tc.timeout > 0 {
				cctx, cancel = context.WithTimeout(ctx, tc.timeout)
			}
			defer cancel()
			_, err := b.Provision(cctx, sandbox.Spec{})
			if err == nil {
				t.Fatalf("Provision = %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("Provision = %v", err)
				}
			}
			if tc.left == leftAny {
				return
			}
			switch p, n := countObjects(t, cs); {
			case tc.left == leftNothing && p+n != 0:
				t.Errorf("left %d Pods, %d NetworkPolicies%s", p, n, tc.note)
			case tc.left == leftNoPod && p != 0:
				t.Error("a Pod was created without its NetworkPolicy")
			}
		})
	}
}

func leftover(kind, name string, run string, deadline time.Time, managed bool) runtime.Object {
	m := metav1.ObjectMeta{Name: name, Namespace: "fullsend-runs", Labels: map[string]string{LabelRun: run},
		Annotations: map[string]string{AnnotationDeadline: deadline.UTC().Format(time.RFC3339)}}
	if managed {
		m.Labels[LabelManagedBy] = ManagedBy
	}
	if kind == "pod" {
		return &corev1.Pod{ObjectMeta: m}
	}
	return &networkingv1.NetworkPolicy{ObjectMeta: m}
}

func TestLeftoverCleanup(t *testing.T) {
	now := time.Now()
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	cs := fake.NewClientset(
		leftover("pod", "fullsend-old", "old", past, true),
		leftover("np", "fullsend-old", "old", past, true),
		leftover("np", "fullsend-orphan", "orphan", past, true),
		leftover("pod", "fullsend-live", "live", future, true),
		leftover("np", "fullsend-live", "live", future, true),
		leftover("pod", "someone-else", "x", past, false),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-deadline", Namespace: "fullsend-runs", Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRun: "y"}}},
	)
	readyOnCreate(cs, "")
	s, err := newTestBackend(t, cs, now).Provision(context.Background(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Terminate(context.Background())
	pods, _ := cs.CoreV1().Pods("fullsend-runs").List(context.Background(), metav1.ListOptions{})
	nps, _ := cs.NetworkingV1().NetworkPolicies("fullsend-runs").List(context.Background(), metav1.ListOptions{})
	var got []string
	for _, p := range pods.Items {
		got = append(got, "pod/"+p.Name)
	}
	for _, p := range nps.Items {
		got = append(got, "np/"+p.Name)
	}
	want := strings.Join(sortedPerKind([]string{"pod/fullsend-live", "pod/fullsend-" + s.ID(), "pod/no-deadline", "pod/someone-else", "np/fullsend-live", "np/fullsend-" + s.ID()}), ",")
	if g := strings.Join(sortedPerKind(got), ","); g != want {
		t.Fatalf("after cleanup: %s\nwant %s", g, want)
	}
}

func sortedPerKind(s []string) []string {
	var pods, nps []string
	for _, x := range s {
		if strings.HasPrefix(x, "pod/") {
			pods = append(pods, x)
		} else {
			nps = append(nps, x)
		}
	}
	sort.Strings(pods)
	sort.Strings(nps)
	return append(pods, nps...)
}

var goldenSpec = sandbox.Spec{
	Network: sandbox.Network{Allow: []string{"github.com", "*.githubusercontent.com"}},
	Limits:  sandbox.Limits{WallTime: 30 * time.Minute, MemoryBytes: 2 << 30, Pids: 512, CPUs: 1.5, TmpBytes: 256 << 20, WorkspaceBytes: 4 << 30},
	Env:     map[string]string{"GREETING_NAME": "world"},
	WorkDir: "/sandbox/workspace",
	Labels:  map[string]string{"fullsend.agent": "hello"},
}

var goldenTime = time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)

func TestRenderGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		spec sandbox.Spec
	}{
		{"objects.golden.yaml", goldenSpec},
		{"objects-nonet.golden.yaml", sandbox.Spec{}},
	} {
		objs, err := DryRun(Config{Namespace: "fullsend-runs", RuntimeClass: "gvisor", Image: testImage, EgressGateway: testGW}, c.spec, goldenTime)
		if err != nil {
			t.Fatal(err)
		}
		y, err := objs.YAML()
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join("testdata", c.file)
		if *update {
			if err := os.WriteFile(f, y, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(y, want) {
			t.Errorf("%s differs (go test -run TestRenderGolden -update); got:\n%s", f, y)
		}
	}
}
