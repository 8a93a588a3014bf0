//go:build linux

// Command sandboxbench measures sandbox start-up and exec latency side by
// side: the local backend, bubblewrap with equivalent isolation, and the
// docker backend (Linux only). It prints one table (medians and p90 over
// -n runs).
//
//	go run ./internal/sandbox/cmd/sandboxbench -n 50
//	go run ./internal/sandbox/cmd/sandboxbench -n 20 -pause 300ms  # idle before each live exec
//
// The docker column needs a running engine and a local image named by
// -image (default: the suite's busybox image, if imported).
package main
