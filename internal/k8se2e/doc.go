// Package k8se2e holds the tests of the kubernetes sandbox backend against
// a real control plane and node: the one-node cluster of test/k8s
// (Kubernetes built from the Go module proxy, etcd, containerd, runc and
// the CNI bridge from Debian, in its own network namespace). See
// docs/kubernetes.md "Tests on a real cluster".
package k8se2e
