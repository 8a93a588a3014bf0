// Package ci is fullsend's view of the CI system it runs in: which one it
// is (GitHub Actions, GitLab CI, none), the forge overlay that choice
// selects, and the CI-native output written for it: GitHub workflow
// commands (annotations) on stderr, the Markdown job summary appended to
// $GITHUB_STEP_SUMMARY, step outputs appended to $GITHUB_OUTPUT, and
// GitLab's code-quality report.
//
// It is also the one place that keeps untrusted text (agent output,
// findings, file names from the target repository) from becoming a
// workflow command: Guard filters fullsend's stdout and stderr so that no
// line starts with "::" or "##[" unless fullsend wrote it through
// Guard.Command, and every value placed inside a command is escaped by
// EscapeData / EscapeProperty. Detection reads only the environment; the
// --forge and --ci-output flags always win over it.
package ci

import (
	"fmt"
	"strings"
)

// Platform is a CI system fullsend knows how to talk to.
type Platform string

// The platforms. None means no CI-native output (plain text only).
const (
	None   Platform = "none"
	GitHub Platform = "github"
	GitLab Platform = "gitlab"
)

// Detection is what the environment says about the CI system.
type Detection struct {
	Platform Platform // None when no CI was detected
	// Var is the variable that decided it ("GITHUB_ACTIONS=true"); "" for
	// None.
	Var string
}

// Detect reads the CI system from the environment: GITHUB_ACTIONS=true is
// GitHub Actions, GITLAB_CI=true is GitLab CI (the values both platforms
// set on every job). GitHub wins when both are set (a GitLab runner never
// sets GITHUB_ACTIONS; act and GitHub's runner never set GITLAB_CI).
func Detect(getenv func(string) string) Detection {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return Detection{Platform: GitHub, Var: "GITHUB_ACTIONS=true"}
	case getenv("GITLAB_CI") == "true":
		return Detection{Platform: GitLab, Var: "GITLAB_CI=true"}
	}
	return Detection{Platform: None}
}

// Name is the platform as people call it.
func (p Platform) Name() string {
	switch p {
	case GitHub:
		return "GitHub Actions"
	case GitLab:
		return "GitLab CI"
	}
	return "no CI"
}

// Forge is the forge overlay (forge.<name> in a harness) a platform
// selects when --forge is not given: github for GitHub Actions, gitlab for
// GitLab CI, none otherwise.
func (p Platform) Forge() string {
	switch p {
	case GitHub:
		return "github"
	case GitLab:
		return "gitlab"
	}
	return ""
}

// ParseOutput reads the value of --ci-output: github, gitlab or none.
func ParseOutput(s string) (Platform, error) {
	switch p := Platform(strings.ToLower(strings.TrimSpace(s))); p {
	case GitHub, GitLab, None:
		return p, nil
	}
	return "", fmt.Errorf("--ci-output %q: want github, gitlab or none", s)
}

// Choice is how fullsend decided the forge overlay and the CI output of a
// command; it is printed as one line and recorded in report.json.
type Choice struct {
	Detected Detection
	// Output is the CI-native output in effect (None: plain text only).
	Output Platform
	// OutputFrom says what chose Output: "--ci-output" or Detected.Var.
	OutputFrom string `json:"-"`
	// Forge is the overlay selected when --forge is not given ("" = none),
	// ForgeFrom what selected it: "--forge" or Detected.Var.
	Forge, ForgeFrom string
}

// Decide combines detection with the --forge and --ci-output flags (""
// = not given): an explicit flag always wins over the environment.
func Decide(d Detection, forgeFlag, outputFlag string) (Choice, error) {
	c := Choice{Detected: d, Output: d.Platform, OutputFrom: d.Var}
	if outputFlag != "" {
		p, err := ParseOutput(outputFlag)
		if err != nil {
			return Choice{}, err
		}
		c.Output, c.OutputFrom = p, "--ci-output"
	}
	switch {
	case forgeFlag != "":
		c.Forge, c.ForgeFrom = forgeFlag, "--forge"
	case d.Platform != None:
		c.Forge, c.ForgeFrom = d.Platform.Forge(), d.Var
	}
	return c, nil
}

// Line is the one line that states the choice, or "" when there is
// nothing to say (no CI detected and no --ci-output given). The overlay
// actually applied is reported where the harness is (validate's "valid:"
// line, report.json harness.forge).
func (c Choice) Line() string {
	if c.Detected.Platform == None && c.OutputFrom == "" {
		return ""
	}
	var b strings.Builder
	if c.Detected.Platform != None {
		fmt.Fprintf(&b, "ci: %s detected (%s)", c.Detected.Platform.Name(), c.Detected.Var)
	} else {
		b.WriteString("ci: no CI detected")
	}
	switch {
	case c.ForgeFrom == "--forge":
		fmt.Fprintf(&b, "; forge overlay %s (--forge)", c.Forge)
	case c.Forge != "":
		fmt.Fprintf(&b, "; forge overlay %s, when the harness has one (--forge overrides)", c.Forge)
	}
	fmt.Fprintf(&b, "; CI output %s", c.Output)
	if c.OutputFrom == "--ci-output" {
		b.WriteString(" (--ci-output)")
	}
	return b.String()
}
