package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedTableIsGenerated: secretrules/rules_gen.go is exactly what
// the pinned gitleaks module generates (go generate was run after the
// last version bump or generator change).
func TestCommittedTableIsGenerated(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "secretrules", "rules_gen.go")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go generate ./internal/scan/secretrules", path)
	}
}
