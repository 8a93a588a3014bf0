// Package kubernetes is the sandbox backend on a Kubernetes cluster: one
// Pod per session in the configured namespace, commands through the
// pods/exec subresource.
//
// Connection: the current context of the kubeconfig ($KUBECONFIG, a list
// of files merged as kubectl merges them, else ~/.kube/config), else the
// in-cluster service account. The subset read (kubeconfig.go): server, CA
// (file or data), insecure-skip-tls-verify, tls-server-name, proxy-url;
// token, tokenFile (re-read at each request), client certificate and key,
// username and password, exec credential plugins (kept until their
// expiry); auth-provider entries are refused with a one-line error.
// Credentials are never sent to an http:// server. The runner needs only
// pods, pods/exec and networkpolicies in that one namespace
// (deploy/kubernetes/rbac.yaml).
//
// No client-go at run time: the two objects are small JSON structs of our
// own (api.go, only the fields set or read), the seven REST calls go
// through net/http (client.go), and exec speaks v5.channel.k8s.io over
// WebSocket (wsexec.go, gorilla/websocket; Kubernetes 1.30 or later, as
// v4 cannot signal the end of stdin). client-go, its clientcmd and the
// k8s.io/api types cost the binary 12.8 MB; this costs 0.4 MB. The tests
// still read every object back strictly with the k8s.io/api types and
// client-go's fake clientset.
//
// The Pod (Render; `fullsend sandbox exec --backend kubernetes --dry-run`
// prints it): image pinned by digest; runtimeClassName from config (e.g.
// gvisor); uid/gid 65532, runAsNonRoot, allowPrivilegeEscalation false,
// privileged false, all capabilities dropped, seccompProfile
// RuntimeDefault, read-only root file system; no service account token,
// no service links, no host namespaces, no hostPath; /sandbox and /tmp are
// emptyDirs with sizeLimit (/tmp memory-backed); Limits become resource
// limits (memory, cpu, ephemeral-storage) and requests (the same, but cpu
// at most CPURequestMilli: equal requests would reserve whole nodes); pid
// 1 (PID1) ignores the signals a shell catches, so no command can end the
// Pod from inside; activeDeadlineSeconds
// is the run's wall time plus ProvisionSlack (DefaultDeadline without one,
// at most MaxDeadline). Host mounts and runner host services cannot reach
// a Pod and are refused.
//
// Lifecycle: Provision first deletes this backend's leftovers in the
// namespace (objects labelled app.kubernetes.io/managed-by=fullsend whose
// fullsend.dev/deadline annotation has passed: runs whose runner died),
// creates the run's NetworkPolicy, then the Pod, and waits until it runs
// (an unpullable image or a Pod that fails ends the wait at once).
// Terminate deletes the Pod (no grace period) and the NetworkPolicy; a
// failed Provision does the same.
//
// Commands run as `/bin/sh -c WRAPPER` with the request's cwd and extra
// variables (so the image needs sh, env, mkdir and, for Upload and
// Download, tar), which becomes the image's fullsend binary in its confine
// role (package guest, as for docker): fullsend's seccomp filter stacked on
// RuntimeDefault (socket families, denied system calls, no setsid),
// RLIMIT_FSIZE, and a file naming the exec's session. Provision probes the
// binary. However an exec ends (by itself, its timeout, the output budget),
// a second exec kills every process left in its session
// (execops.KillSessionScript). A command killed by SIGKILL has the Pod's
// memory cgroup's oom_kill counter read, so an OOM kill is reported.
// Upload and Download are tar streams over exec written and read by
// package archive (regular files and directories only: symlinks and
// special files are skipped; a download is staged and refused past
// OutputBytes, leaving nothing). The exec dialer offers only HTTP/1.1 in
// ALPN (an API server picks h2 when offered, and a WebSocket upgrade needs
// HTTP/1.1) and sends each stdin message in one frame (the API server's
// golang.org/x/net/websocket takes each frame for a message).
//
// Network, and why a gateway: a NetworkPolicy cannot name hosts, so the
// per-run policy denies all ingress and allows egress only to cluster DNS
// (kube-system, k8s-app=kube-dns) and the egress gateway's Pods
// (`fullsend egress-gateway`, package gateway), or nothing at all when the
// spec has no network. The gateway is the local backend's proxy (package
// sandbox/egress) behind a token check: Provision mints a token carrying
// the run id, the spec's allowlist and the Pod's deadline, HMAC-SHA256
// signed with the key both share (a Secret), and puts it in the Pod's
// HTTP(S)_PROXY (http://run:TOKEN@gateway:3128). See package gateway for
// the token format and why HMAC. Enforcement needs a CNI that enforces
// NetworkPolicy (Calico, Cilium, …): with one that ignores it, the Pod
// can bypass the gateway; Capabilities.NetworkCaveat says so and every run
// prints it. The Pod spec, its environment (the token, the harness's env)
// and exec commands are visible to whoever may read Pods or the API
// server's audit log in the namespace: give the runs a namespace of their
// own.
//
// What gVisor adds: with runtime_class naming a gVisor RuntimeClass the
// agent's system calls reach gVisor's user-space kernel, not the node's,
// so a kernel exploit from inside the sandbox does not take the node. It
// does not change egress (the NetworkPolicy and the gateway do that).
//
// Capabilities are reported honestly: pids has no per-Pod field (only a
// node's podPidsLimit), workspace is an eviction by the kubelet's periodic
// check (weaker; one file is bounded by RLIMIT_FSIZE), Landlock is not
// applied, per-binary network rules are not enforced, host mounts and
// runner host services are not possible.
//
// Workspace snapshots (sandbox.Snapshotter) are not offered
// (Capabilities.Snapshot is false): the exec path could carry the same
// `tar -c`/`tar -x` streams as docker's, but the Pod's /sandbox lives in
// an emptyDir that ends with the Pod, so a durable snapshot would have to
// travel through the runner (bounded by snapshot_size) or go to a
// PersistentVolumeClaim or CSI VolumeSnapshot that outlives the Pod; none
// is built, and a resumed native run on this backend starts from a fresh
// workspace (it says so).
package kubernetes
