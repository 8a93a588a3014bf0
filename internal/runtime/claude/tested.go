package claude

import "regexp"

// TestedVersion is the Claude Code version CI runs the claude end-to-end
// tests against (.ci/run's CLAUDE_CODE_VERSION; TestTestedVersionMatchesCI
// keeps the two equal). `fullsend doctor` compares the host's CLI with it.
const TestedVersion = "2.1.332"

var versionRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+)\b`)

// ParseVersion returns the first x.y.z in the output of `claude --version`
// ("2.1.332 (Claude Code)"), or "".
func ParseVersion(out string) string {
	if m := versionRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}
