#!/bin/bash
# A private CA (openssl, P-256, 30 days) and a certificate and kubeconfig
# for every component; the service-account signing key pair.
set -euo pipefail
. "$(dirname "$0")/env.sh"
mkdir -p "$PKI" "$ETC"
cd "$PKI"
[ -f ca.crt ] && [ -f sa.key ] && [ -f "$K8S_DIR/kubeconfig" ] && exit 0
openssl ecparam -name prime256v1 -genkey -noout -out ca.key
openssl req -x509 -new -key ca.key -sha256 -days 30 -subj "/CN=fullsend-k8s-ca" -out ca.crt
# issue NAME CN ORG SANS USE: USE is client, server or both; ORG and SANS may be empty.
issue() {
  local subj="/CN=$2" eku
  [ -n "$3" ] && subj="/O=$3/CN=$2"
  case $5 in client) eku=clientAuth;; server) eku=serverAuth;; *) eku=serverAuth,clientAuth;; esac
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
  openssl req -new -key "$1.key" -subj "$subj" -out "$1.csr"
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"; [ -z "$4" ] || echo "subjectAltName=$4"; } > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -sha256 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
issue apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.96.0.1,IP:$K8S_NODE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" server
issue apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" client
issue admin admin system:masters "" client
issue controller-manager system:kube-controller-manager "" "" client
issue scheduler system:kube-scheduler "" "" client
issue kube-proxy system:kube-proxy "" "" client
issue kubelet "system:node:$K8S_NODE" system:nodes "" client
issue kubelet-serving "$K8S_NODE" "" "IP:$K8S_NODE_IP,DNS:$K8S_NODE" server
openssl ecparam -name prime256v1 -genkey -noout -out sa.key
openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
chmod 600 ./*.key
# kubeconfig FILE USER SERVER
kubeconfig() {
  cat > "$1" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: fullsend-k8s, cluster: {server: "$3", certificate-authority-data: $(base64 -w0 ca.crt)}}]
users: [{name: $2, user: {client-certificate-data: $(base64 -w0 "$2.crt"), client-key-data: $(base64 -w0 "$2.key")}}]
contexts: [{name: fullsend-k8s, context: {cluster: fullsend-k8s, user: $2}}]
current-context: fullsend-k8s
YAML
  chmod 600 "$1"
}
for c in admin controller-manager scheduler kube-proxy kubelet; do kubeconfig "$ETC/$c.kubeconfig" "$c" "https://127.0.0.1:$K8S_API_PORT"; done
kubeconfig "$K8S_DIR/kubeconfig" admin "https://127.0.0.1:$K8S_HOST_PORT"   # for the host, through the bridge
