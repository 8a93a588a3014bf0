#!/bin/bash
# Builds the Kubernetes server binaries from the Go module proxy alone.
# k8s.io/kubernetes points its k8s.io/* requirements at ./staging, which the
# module zip lacks: a copy of the module gets those replace directives
# dropped and requires the published v0.<minor>.<patch> modules instead.
# The Go build cache makes a second build take seconds.
set -euo pipefail
. "$(dirname "$0")/env.sh"
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
mkdir -p "$K8S_DIR/src" "$BIN"
src=$K8S_DIR/src/kubernetes-$K8S_VERSION
if [ ! -f "$src/.ready" ]; then
  mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$src"; cp -r "$mod" "$src"; chmod -R u+w "$src"
  cd "$src"; rm -f go.work go.work.sum
  edits=()
  for m in $(sed -n '/^replace (/,/^)/p' go.mod | awk '/=>/{print $1}'); do
    edits+=(-dropreplace="$m")
    grep -q "^	$m v0.0.0$" go.mod && edits+=(-require="$m@v0.${K8S_VERSION#v1.}")
  done
  go mod edit "${edits[@]}"
  go mod download
  touch .ready
fi
cd "$src"
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
for c in ${*:-kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy}; do
  [ -x "$BIN/$c" ] && continue
  t=$(date +%s)
  nice -n "${NICE:-10}" go build -trimpath -tags=notest -ldflags "$ld" -o "$BIN/$c.tmp" "./cmd/$c"
  mv "$BIN/$c.tmp" "$BIN/$c"
  echo "built $c in $(( $(date +%s) - t ))s"
done
