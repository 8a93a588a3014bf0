#!/bin/bash
# Debian packages the cluster runs on: etcd, containerd, runc, the CNI
# plugins, iptables/conntrack for kube-proxy, socat for the API bridge,
# busybox-static for the images, openssl for the certificates.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  containerd runc containernetworking-plugins iptables conntrack socat \
  etcd-server busybox-static openssl curl iproute2 util-linux >/dev/null
command -v kubectl >/dev/null || apt-get install -y -qq --no-install-recommends kubernetes-client >/dev/null
