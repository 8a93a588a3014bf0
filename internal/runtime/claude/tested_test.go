package claude

import (
	"os"
	"regexp"
	"testing"
)

// The version doctor compares with is the one CI installs.
func TestTestedVersionMatchesCI(t *testing.T) {
	b, err := os.ReadFile("../../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CLAUDE_CODE_VERSION=(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal(".ci/run sets no CLAUDE_CODE_VERSION")
	}
	if string(m[1]) != TestedVersion {
		t.Fatalf(".ci/run installs Claude Code %s, TestedVersion is %s: change both together", m[1], TestedVersion)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"2.1.330 (Claude Code)\n": "2.1.330",
		"claude 1.0.0":            "1.0.0",
		"no version here":         "",
	} {
		if got := ParseVersion(in); got != want {
			t.Errorf("ParseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
