// Package gitleaksdiff is a nested module pinning the gitleaks release
// whose default rules internal/scan applies (internal/scan/secretrules),
// so the main module does not depend on gitleaks. It holds:
//
//   - genrules, the generator of secretrules/rules_gen.go (run by
//     `go generate ./internal/scan/secretrules` in the main module), and
//     its test that the committed table is what the pinned module
//     generates;
//   - the differential test: pinned gitleaks (detect, default config, one
//     fragment per file) and our scanner (scan.SecretMatches) on every
//     text file of the agents corpus ($FULLSEND_CORPUS) and of the fixture
//     library, and on a generated corpus of secrets built from every
//     rule's regular expression plus near misses, must report the same
//     findings: rule, line and secret.
//
// Run it with `(cd internal/scan/gitleaksdiff && go test ./...)`; CI does.
package gitleaksdiff
