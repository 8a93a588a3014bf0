#!/bin/bash
# Stops what up.sh started, by the pids it recorded, and removes what it
# made outside $K8S_DIR: the Pods' containers and shims, the cgroup
# subtree, the network namespace (with the iptables rules kube-proxy and
# the CNI wrote inside it) and /run/netns if up.sh created it. Safe to run
# twice, and after a killed test.
set -uo pipefail
. "$(dirname "$0")/env.sh"
stop() { # stop NAME: TERM, up to 10 s, then KILL
  local f="$PIDS/$1.pid" p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p"
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p"
  fi
  rm -f "$f"
}
alive() { [ -f "$PIDS/$1.pid" ] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }
if alive kubelet && alive kube-apiserver; then   # Pods first, through the API, while the kubelet can stop them
  KUBECONFIG=$K8S_DIR/kubeconfig timeout 60 kubectl delete pods --all -A --grace-period=1 --wait=true >/dev/null 2>&1
fi
stop kube-proxy; stop kubelet
if alive holder && alive containerd; then   # what the kubelet left: tasks, then containers
  ctr=(nsenter -t "$(cat "$PIDS/holder.pid")" -m -n -- ctr -a "$RUN/containerd/containerd.sock" -n k8s.io)
  for c in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s KILL "$c" >/dev/null 2>&1; done
  sleep 1
  for c in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$c" >/dev/null 2>&1; done
  for c in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$c" >/dev/null 2>&1; done
fi
stop containerd
for n in kube-scheduler kube-controller-manager kube-apiserver etcd bridge-host bridge-ns; do stop "$n"; done
for f in "$PIDS"/*.pid; do [ -e "$f" ] || continue; n=$(basename "$f" .pid); [ "$n" = holder ] || stop "$n"; done
stop holder   # its private mount namespace, with the overlay and netns mounts in it, goes with it
# Shims of our containerd (its socket path is in their command line).
for d in /proc/[0-9]*; do
  { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -q "^/usr/bin/containerd-shim-runc-v2 .*-address $RUN/containerd/containerd.sock " && kill -KILL "${d#/proc/}" 2>/dev/null
done
[ -d /run/containerd ] && find /run/containerd -depth -type d -empty -delete 2>/dev/null
for h in /sys/fs/cgroup/*/; do   # deepest first; a cgroup goes once its last process has
  d="${h%/}$K8S_CGROUP"; [ -d "$d" ] || continue
  for _ in 1 2 3 4 5; do find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null; [ -d "$d" ] || break; sleep 0.5; done
  [ -d "$d" ] && echo "down.sh: could not remove $d" >&2
done
ip netns list | grep -qw "$K8S_NETNS" && ip netns del "$K8S_NETNS"
if [ -f "$RUN/netns-dir-created" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
  while mountpoint -q /run/netns; do umount /run/netns || break; done
  rmdir /run/netns 2>/dev/null; rm -f "$RUN/netns-dir-created"
fi
echo "down.sh: down"
