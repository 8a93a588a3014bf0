#!/bin/bash
# The real-cluster tests from nothing, as the nightly job runs them (and
# .ci/run when FULLSEND_CI_K8S=1): Debian packages, the Kubernetes
# binaries (cold: ~26 CPU-minutes; warm Go build cache: seconds), then
# internal/k8se2e, which brings the cluster up and always takes it down.
# Any "K8S E2E SKIPPED" line fails the job: here the machine must run them.
set -euo pipefail
D=$(cd "$(dirname "$0")" && pwd)
. "$D/env.sh"
t=$(date +%s)
"$D/install.sh"
echo "k8s e2e: packages in $(( $(date +%s) - t ))s"; t=$(date +%s)
"$D/build.sh"
echo "k8s e2e: binaries in $(( $(date +%s) - t ))s"; t=$(date +%s)
trap '"$D/down.sh" >/dev/null 2>&1 || true' EXIT   # also when go test dies at its -timeout
log=$(mktemp)
status=0
(cd "$D/../.." && go test -count=1 -v -timeout 40m ./internal/k8se2e) 2>&1 | tee "$log" || status=$?
echo "k8s e2e: tests in $(( $(date +%s) - t ))s"
if grep -q 'K8S E2E SKIPPED' "$log"; then echo "k8s e2e: skipped (above)" >&2; [ $status -ne 0 ] || status=1; fi
rm -f "$log"
exit $status
