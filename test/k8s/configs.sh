#!/bin/bash
# containerd (its own instance: own socket, root and state), the CNI bridge,
# the kubelet and kube-proxy.
set -euo pipefail
. "$(dirname "$0")/env.sh"
mkdir -p "$ETC/cni/net.d" "$ETC/sysctl" "$RUN" "$DATA" "$LOGS" "$PIDS"
echo "nameserver 127.0.0.1" > "$ETC/resolv.conf"   # Pods get no resolver from the host
cat > "$ETC/containerd.toml" <<TOML
version = 2
root = "$DATA/containerd"
state = "$RUN/containerd/state"
[grpc]
  address = "$RUN/containerd/containerd.sock"
[ttrpc]
  address = "$RUN/containerd/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "$DATA/containerd-opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "fullsend-k8s.local/pause:1"
    restrict_oom_score_adj = true         # this machine lacks CAP_SYS_RESOURCE: never lower an oom_score_adj
    netns_mounts_under_state_dir = true   # Pod network namespaces pinned in our state dir, not /var/run/netns
    enable_selinux = false
    stream_server_address = "127.0.0.1"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$RUN/runc"
      # gVisor, tried as a RuntimeClass (handler runsc): Debian's runsc through the runc shim.
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
          BinaryName = "$BIN/runsc-wrapper"
          SystemdCgroup = false
          Root = "$RUN/runsc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$ETC/cni/net.d"
TOML
cat > "$ETC/cni/net.d/10-fullsend.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "fullsend-k8s", "plugins": [{
  "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
  "ipam": {"type": "host-local", "dataDir": "$DATA/cni-ipam", "ranges": [[{"subnet": "$K8S_POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON
cat > "$ETC/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $K8S_NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
containerRuntimeEndpoint: unix://$RUN/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: $K8S_CGROUP
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
resolvConf: $ETC/resolv.conf
podPidsLimit: 4096
maxPods: 60
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "200Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
YAML
cat > "$ETC/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $ETC/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $K8S_POD_CIDR
hostnameOverride: $K8S_NODE
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
# The kubelet checks, and would write, machine-wide sysctls: the node runs in
# a private mount namespace where files holding the values it wants are
# bind-mounted over /proc/sys, so the machine's own settings never change.
printf '1\n' > "$ETC/sysctl/overcommit_memory"; printf '0\n' > "$ETC/sysctl/panic_on_oom"
printf '10\n' > "$ETC/sysctl/panic"; printf '1\n' > "$ETC/sysctl/panic_on_oops"
printf '1000000\n' > "$ETC/sysctl/root_maxkeys"; printf '25000000\n' > "$ETC/sysctl/root_maxbytes"
# Debian's runsc (2022-12) takes any netns with net.core.rmem_default for the
# host's and then refuses its own network stack: host networking inside the
# Pod's namespace instead.
mkdir -p "$BIN"
printf '#!/bin/sh\nexec /usr/bin/runsc --network=host "$@"\n' > "$BIN/runsc-wrapper"; chmod 755 "$BIN/runsc-wrapper"
