# Settings every script of test/k8s sources. All state lives under $K8S_DIR;
# nothing outside it changes except what down.sh removes again (the network
# namespace, the cgroup subtree, containerd's empty dirs under /run).
K8S_DIR=${K8S_DIR:-${TMPDIR:-/tmp}/fullsend-k8s}
K8S_VERSION=${K8S_VERSION:-v1.34.4}     # newest kubelet that still runs on cgroup v1 with Debian's containerd 1.6
K8S_NETNS=${K8S_NETNS:-fullsend-k8s}    # the cluster's own network namespace
K8S_NODE=fullsend-node
K8S_NODE_IP=10.250.0.1                  # on a veth inside the namespace: the kubelet will not take a loopback node IP
K8S_POD_CIDR=10.244.0.0/24
K8S_SVC_CIDR=10.96.0.0/24
K8S_API_PORT=6443                       # 127.0.0.1 inside the namespace
K8S_HOST_PORT=${K8S_HOST_PORT:-16443}   # 127.0.0.1 on the host, forwarded over a unix socket
K8S_CGROUP=/fullsend-k8s
BIN=$K8S_DIR/bin PKI=$K8S_DIR/pki ETC=$K8S_DIR/etc RUN=$K8S_DIR/run DATA=$K8S_DIR/data LOGS=$K8S_DIR/logs PIDS=$K8S_DIR/pids
PATH=$BIN:$PATH
export K8S_DIR PATH
