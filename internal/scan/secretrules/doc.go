// Package secretrules is gitleaks' default secret-detection rule set as
// Go data: per rule its id, description, regular expression, secret group,
// entropy floor, keywords, path filter and allowlists, plus the global
// allowlists. internal/scan compiles and applies them; this package holds
// no code.
//
// rules_gen.go is generated from the gitleaks module pinned in
// internal/scan/gitleaksdiff/go.mod (its config/gitleaks.toml, loaded the
// way gitleaks loads it) by `go generate ./internal/scan/secretrules`;
// never edit it by hand. The nested module's tests fail when the table no
// longer matches what the pinned module generates.
//
// The rules are gitleaks' work, under the MIT License (Copyright (c) 2019
// Zachary Rice): LICENSE-gitleaks in this directory is its licence text.
package secretrules

//go:generate go run -C ../gitleaksdiff ./genrules -o ../secretrules/rules_gen.go

// Rule is one detection rule.
type Rule struct {
	ID          string
	Description string
	// Regex is the content pattern (Go regexp syntax); empty for rules
	// that match file paths only.
	Regex string
	// SecretGroup is the capture group holding the secret; 0 means the
	// first non-empty group (or the whole match when there is none).
	SecretGroup int
	// Entropy is the minimum Shannon entropy of the secret; 0 for none.
	Entropy float64
	// Keywords are lower-case; a rule with none runs on all content.
	Keywords []string
	// Path, when set, must match the file's path.
	Path       string
	Allowlists []Allowlist
}

// Allowlist says when a candidate secret is not reported.
type Allowlist struct {
	Description string
	// And: every check present (paths, regexes, stop words) must hold;
	// otherwise any one suffices (paths then skip the whole file).
	And bool
	// RegexTarget is what Regexes are matched against: "" (the secret),
	// "match" or "line".
	RegexTarget string
	Regexes     []string
	Paths       []string
	// StopWords are lower-case; the secret must not contain any.
	StopWords []string
}
