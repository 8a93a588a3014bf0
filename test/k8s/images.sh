#!/bin/bash
# Images without a registry: an OCI layout (one layer, FROM scratch) built
# with tar and sha256sum, imported into our containerd's k8s.io namespace
# under NAME:1 and NAME@sha256:<manifest digest>, so a digest reference
# resolves on the node (imagePullPolicy IfNotPresent never pulls).
#   images.sh pause                       -> $K8S_DIR/images/pause.tar
#   images.sh sandbox NAME BINARY [ENTRY] -> busybox + BINARY as /usr/local/bin/fullsend
#   images.sh import                      -> every image into containerd
# Each NAME.tar has a NAME.ref beside it: the digest reference.
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
. "$D/env.sh"
IMG=$K8S_DIR/images
mkdir -p "$IMG"

oci() { # oci NAME ROOTFS ENTRYPOINT_JSON
  local name=$1 root=$2 entry=$3 ref="fullsend-k8s.local/$1" w
  w=$(mktemp -d "$IMG/.oci.XXXXXX"); mkdir -p "$w/blobs/sha256"
  blob() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); echo "$d $(stat -c%s "$1")"; mv "$1" "$w/blobs/sha256/$d"; }
  tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$root" -cf "$w/layer" .
  local layer config manifest
  layer=($(blob "$w/layer"))
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"Env":["PATH=/usr/local/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$entry" "${layer[0]}" > "$w/config"
  config=($(blob "$w/config"))
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "${config[0]}" "${config[1]}" "${layer[0]}" "${layer[1]}" > "$w/manifest"
  manifest=($(blob "$w/manifest"))
  local m='{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s"}}'
  printf "{\"schemaVersion\":2,\"manifests\":[$m,$m]}" "${manifest[0]}" "${manifest[1]}" "$ref:1" "${manifest[0]}" "${manifest[1]}" "$ref@sha256:${manifest[0]}" > "$w/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$w/oci-layout"
  tar -C "$w" -cf "$IMG/$name.tar" oci-layout index.json blobs
  rm -rf "$w"
  echo "$ref@sha256:${manifest[0]}" > "$IMG/$name.ref"
  cat "$IMG/$name.ref"
}

case ${1:-} in
pause)
  r=$(mktemp -d)
  (cd "$D/../.." && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$r/pause" ./test/k8s/pause)
  oci pause "$r" '["/pause"]'
  rm -rf "$r";;
sandbox)
  name=$2 binary=$3 entry=${4:-'["/bin/sh"]'}
  r=$(mktemp -d)
  mkdir -p "$r/bin" "$r/usr/local/bin" "$r/tmp" "$r/sandbox" "$r/etc"
  cp /bin/busybox "$r/bin/busybox"
  for c in $("$r/bin/busybox" --list); do [ "$c" = busybox ] || ln -s busybox "$r/bin/$c"; done
  install -m 755 "$binary" "$r/usr/local/bin/fullsend"
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532::/sandbox:/bin/sh\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$r/etc/group"
  chmod 1777 "$r/tmp"
  oci "$name" "$r" "$entry"
  rm -rf "$r";;
import)
  [ -f "$PIDS/holder.pid" ] || { echo "images.sh: the cluster is not up" >&2; exit 1; }
  for t in "$IMG"/*.tar; do
    [ -e "$t" ] || continue
    nsenter -t "$(cat "$PIDS/holder.pid")" -m -n -- ctr -a "$RUN/containerd/containerd.sock" -n k8s.io images import "$t" >/dev/null
  done;;
*) echo "usage: images.sh pause | sandbox NAME BINARY [ENTRYPOINT_JSON] | import" >&2; exit 2;;
esac
