#!/bin/bash
# Starts the one-node cluster (idempotent: what already runs is kept).
# Everything runs in the network namespace $K8S_NETNS (loopback and a veth
# holding the node IP, no route out); the node's daemons also share one
# private mount namespace, owned by a holder process. The API server is
# bridged to the host's 127.0.0.1:$K8S_HOST_PORT by two socat processes over
# a unix socket. Every process started here is recorded in $PIDS for
# down.sh. Usage: up.sh [control-plane|all]
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
. "$D/env.sh"
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
  [ -x "$BIN/$b" ] || { echo "up.sh: $BIN/$b missing: run $D/build.sh" >&2; exit 1; }
done
"$D/certs.sh"
[ -f "$K8S_DIR/images/pause.tar" ] || "$D/images.sh" pause >/dev/null
[ -f "$ETC/kubelet.yaml" ] || "$D/configs.sh"
mkdir -p "$RUN" "$DATA" "$LOGS" "$PIDS"
t0=$(date +%s%N)
say() { echo "up.sh: $(( ($(date +%s%N) - t0) / 1000000 )) ms: $*"; }
alive() { [ -f "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }

if ! ip netns list | grep -qw "$K8S_NETNS"; then
  [ -d /run/netns ] || touch "$RUN/netns-dir-created"
  ip netns add "$K8S_NETNS"
  ip -n "$K8S_NETNS" link set lo up
  ip -n "$K8S_NETNS" link add fsk0 type veth peer name fsk1
  ip -n "$K8S_NETNS" addr add "$K8S_NODE_IP/32" dev fsk0
  ip -n "$K8S_NETNS" link set fsk0 up
  ip -n "$K8S_NETNS" link set fsk1 up
fi
# The Pods' cgroup v1 subtree, in every mounted hierarchy.
for h in /sys/fs/cgroup/*/; do
  [ -e "${h}cgroup.procs" ] && mkdir -p "${h%/}$K8S_CGROUP"
done
if [ -e /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
  cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset$K8S_CGROUP/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset$K8S_CGROUP/cpuset.mems"
fi
if ! alive holder; then
  setsid nsenter --net="/run/netns/$K8S_NETNS" unshare --mount --propagation private -- sh -c "
    for f in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
      mount --bind $ETC/sysctl/\$(basename \$f) /proc/sys/\$f
    done
    exec sleep infinity" </dev/null >"$LOGS/holder.log" 2>&1 &
  echo $! > "$PIDS/holder.pid"
  sleep 0.5
fi
HOLDER=$(cat "$PIDS/holder.pid")
inside() { nsenter -t "$HOLDER" -m -n -- "$@"; }
start() { # start NAME CMD...
  local n=$1; shift
  alive "$n" && return 0
  setsid nsenter -t "$HOLDER" -m -n -- "$@" </dev/null >"$LOGS/$n.log" 2>&1 &
  echo $! > "$PIDS/$n.pid"
}
wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 n=$(( $2 * 5 )); shift 2
  while [ $n -gt 0 ]; do "$@" >/dev/null 2>&1 && { say "$what ready"; return 0; }; sleep 0.2; n=$((n - 1)); done
  echo "up.sh: timed out waiting for $what (logs: $LOGS)" >&2; return 1
}
ADMIN=(--cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")

start etcd etcd --name fullsend-k8s --data-dir "$DATA/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster fullsend-k8s=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 \
  --quota-backend-bytes 2147483648
wait_for etcd 30 inside curl -fsS http://127.0.0.1:2381/health
# PodSecurity is on by default (a namespace label selects the level); the
# runs' namespace enforces "restricted" (deploy/kubernetes/namespaces.yaml).
start kube-apiserver kube-apiserver \
  --advertise-address="$K8S_NODE_IP" --bind-address=127.0.0.1 --secure-port="$K8S_API_PORT" \
  --etcd-servers=http://127.0.0.1:2379 --service-cluster-ip-range="$K8S_SVC_CIDR" \
  --client-ca-file="$PKI/ca.crt" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction,PodSecurity \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --allow-privileged=false --profiling=false
wait_for kube-apiserver 180 inside curl -fsS "${ADMIN[@]}" "https://127.0.0.1:$K8S_API_PORT/readyz"
alive bridge-ns || rm -f "$RUN/apiserver.sock"
start bridge-ns socat "UNIX-LISTEN:$RUN/apiserver.sock,fork,mode=600" "TCP:127.0.0.1:$K8S_API_PORT"
if ! alive bridge-host; then
  setsid socat "TCP-LISTEN:$K8S_HOST_PORT,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$RUN/apiserver.sock" </dev/null >"$LOGS/bridge-host.log" 2>&1 &
  echo $! > "$PIDS/bridge-host.pid"
fi
wait_for host-bridge 10 curl -fsS "${ADMIN[@]}" "https://127.0.0.1:$K8S_HOST_PORT/version"
start kube-controller-manager kube-controller-manager \
  --kubeconfig="$ETC/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$ETC/controller-manager.kubeconfig" --authorization-kubeconfig="$ETC/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --cluster-name=fullsend-k8s \
  --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" --use-service-account-credentials=true \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --service-cluster-ip-range="$K8S_SVC_CIDR" --allocate-node-cidrs=false --profiling=false
start kube-scheduler kube-scheduler \
  --kubeconfig="$ETC/scheduler.kubeconfig" \
  --authentication-kubeconfig="$ETC/scheduler.kubeconfig" --authorization-kubeconfig="$ETC/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --profiling=false
wait_for kube-controller-manager 120 inside curl -fsSk https://127.0.0.1:10257/healthz
wait_for kube-scheduler 120 inside curl -fsSk https://127.0.0.1:10259/healthz
[ "${1:-all}" = control-plane ] && exit 0

start containerd containerd --config "$ETC/containerd.toml"
wait_for containerd 30 inside ctr -a "$RUN/containerd/containerd.sock" version
"$D/images.sh" import
start kubelet kubelet --config="$ETC/kubelet.yaml" --kubeconfig="$ETC/kubelet.kubeconfig" \
  --hostname-override="$K8S_NODE" --node-ip="$K8S_NODE_IP" --root-dir="$DATA/kubelet" --cert-dir="$DATA/kubelet/pki" --v=1
start kube-proxy kube-proxy --config="$ETC/kube-proxy.yaml" --v=1
wait_for node-Ready 180 sh -c "KUBECONFIG=$K8S_DIR/kubeconfig kubectl get node $K8S_NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
say "cluster up"
