package scan

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/scan/secretrules"
)

// TestSecretRulesTable: the generated table is well formed (every pattern
// compiles, secret groups exist, keywords are lower case, ids sorted and
// unique) and pins the gitleaks version the nested module gitleaksdiff
// requires (whose tests check the table against that module).
func TestSecretRulesTable(t *testing.T) {
	if len(secretrules.Rules) < 200 {
		t.Fatalf("%d rules", len(secretrules.Rules))
	}
	all := func(ps []string) {
		for _, p := range ps {
			if _, err := regexp.Compile(p); err != nil {
				t.Errorf("pattern %q: %v", p, err)
			}
		}
	}
	for _, a := range secretrules.Global {
		all(a.Regexes)
		all(a.Paths)
	}
	ids := []string{}
	for _, r := range secretrules.Rules {
		ids = append(ids, r.ID)
		if r.Regex != "" {
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				t.Errorf("%s: %v", r.ID, err)
			} else if r.SecretGroup > re.NumSubexp() {
				t.Errorf("%s: secret group %d of %d", r.ID, r.SecretGroup, re.NumSubexp())
			}
		}
		for _, k := range r.Keywords {
			if k != strings.ToLower(k) {
				t.Errorf("%s: keyword %q not lower case", r.ID, k)
			}
		}
		for _, a := range r.Allowlists {
			all(a.Regexes)
			all(a.Paths)
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Error("rules not ordered by id")
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Errorf("rule %s twice", ids[i])
		}
	}
	mod, err := os.ReadFile(filepath.Join("gitleaksdiff", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if pin := secretrules.Module + " " + secretrules.Version; !strings.Contains(string(mod), "\t"+pin+"\n") && !strings.Contains(string(mod), "require "+pin+"\n") {
		t.Errorf("gitleaksdiff/go.mod does not require %s: regenerate the table (go generate ./internal/scan/secretrules) after changing the pin", pin)
	}
}

// TestGitleaksLine: the line gitleaks gives a match (location() in its
// detect package), quirks included.
func TestGitleaksLine(t *testing.T) {
	for _, tc := range []struct {
		content      string
		s, e         int
		line, ls, le int
	}{
		{"abc", 0, 2, 0, 0, 3},                // no newline: one line
		{"ab\ncd\nef", 0, 1, 0, 0, 2},         // first line
		{"ab\ncd\nef", 3, 5, 1, 2, 5},         // the line starts at its newline
		{"ab\ncd\nef", 3, 7, 1, 2, 7},         // spans into the last line: cut at e
		{"ab\ncd\nef\n", 3, 8, 1, 2, 8},       // spans lines: ends at the closing newline
		{"ab\ncd\nef", 6, 7, 2, 0, 8},         // last line, no final newline: from the top
		{"ab\ncd\nef\r\ngh", 6, 7, 2, 5, 9},   // \r\n: ends at the \n, the \r kept
		{"ab\ncd\nef gh\rij", 6, 7, 2, 0, 11}, // fallback stops at \r
	} {
		line, ls, le := gitleaksLine([]byte(tc.content), tc.s, tc.e)
		if line != tc.line || ls != tc.ls || le != tc.le {
			t.Errorf("%q [%d,%d): line %d [%d,%d), want %d [%d,%d)", tc.content, tc.s, tc.e, line, ls, le, tc.line, tc.ls, tc.le)
		}
	}
}

// TestGitleaksSemantics: the parts of gitleaks' detector that decide
// whether a regex match is reported.
func TestGitleaksSemantics(t *testing.T) {
	rules := func(content, path string) []string {
		ms, err := SecretMatches(context.Background(), []byte(content), path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Rule)
		}
		return out
	}
	for _, tc := range []struct {
		name, content, path, want string
	}{
		{"reported", "x = " + fakeGitHubPAT + "\n", "a.txt", "github-pat"},
		// The content's own gitleaks:allow marks vouch for nothing.
		{"gitleaks:allow on its line", "x = " + fakeGitHubPAT + " # gitleaks:allow\n", "a.txt", "github-pat"},
		{"gitleaks:allow on the next line", "x = " + fakeGitHubPAT + "\n# gitleaks:allow\n", "a.txt", "github-pat"},
		{"mark far above an unterminated last line", "# gitleaks:allow\n" + strings.Repeat("filler line\n", 500) + "x = " + fakeGitHubPAT, "a.txt", "github-pat"},
		{"mark far above a terminated last line", "# gitleaks:allow\n" + strings.Repeat("filler line\n", 500) + "x = " + fakeGitHubPAT + "\n", "a.txt", "github-pat"},
		{"global path allowlist", "x = " + fakeGitHubPAT + "\n", "web/node_modules/x/index.js", ""},
		{"rule path allowlist", "x = " + fakeGitHubPAT + "\n", "node/@octokit/auth-token/README.md", ""},
		{"entropy floor", "x = ghp_" + strings.Repeat("a", 36) + "\n", "a.txt", ""},
		{"generic rule shadowed on the line", "github_token = \"" + fakeGitHubPAT + "\"\n", "a.txt", "github-pat"},
		{"generic rule", "api_key = \"" + fakeGeneric + "\"\n", "a.txt", "generic-api-key"},
		{"global regex allowlist", "api_key = \"${API_KEY_FROM_ENV}\"\n", "a.txt", ""},
		{"stop word", "api_key = \"Zx8q2LmN4pexampleR7tY1vB6cW9kJ3\"\n", "a.txt", ""},
		{"match allowlist", "api_version = \"" + fakeGeneric + "\"\n", "a.txt", ""},
		{"line allowlist", "RUN --mount=type=secret,id=x api_key=\"" + fakeGeneric + "\"\n", "a.txt", ""},
		{"and allowlist, other path", "SRC_URI_KEY = \"" + fakeGeneric + "\"\n", "a.txt", "generic-api-key"},
		{"and allowlist, its path", "SRC_URI_KEY = \"" + fakeGeneric + "\"\n", "meta/x.bb", ""},
		// gitleaks' curl rules continue over five line breaks of one or
		// two newlines each: ten lines down.
		{"curl over blank lines", "curl https://example.com \\\n\n  --compressed \\\n\n  -v \\\n\n  -L \\\n\n  -s \\\n\n  -u admin:Zx8vQ2mN4pL7\n", "a.sh", "curl-auth-user"},
		// "$" is the end of the content, not of a line (nor of a window).
		{"end of text only", "see https://cE2cFf2C:fBeE2BC2@gems.contribsys.com\nnext\n", "a.txt", ""},
		{"end of text", "see https://cE2cFf2C:fBeE2BC2@gems.contribsys.com/\nnext\n", "a.txt", "sidekiq-sensitive-url"},
	} {
		if got := strings.Join(rules(tc.content, tc.path), ","); got != tc.want {
			t.Errorf("%s: %q as %s: rules %q, want %q", tc.name, tc.content, tc.path, got, tc.want)
		}
	}
}

// TestWalkRegexp: topLevelBranches and groupEnd see through escapes and
// character classes.
func TestWalkRegexp(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{`a|b`, []string{"a", "b"}},
		{`(a|b)|c`, []string{"(a|b)", "c"}},
		{`[|]|x`, []string{"[|]", "x"}},
		{`[]|]|x`, []string{"[]|]", "x"}},
		{`\||x`, []string{`\|`, "x"}},
		{`a\(|b`, []string{`a\(`, "b"}},
		{`[(]|b`, []string{"[(]", "b"}},
		{`ab`, []string{"ab"}},
	} {
		if got := topLevelBranches(c.src); !slices.Equal(got, c.want) {
			t.Errorf("topLevelBranches(%q) = %q, want %q", c.src, got, c.want)
		}
	}
	for _, c := range []struct {
		src  string
		from int
		want int // offset after the ')' closing the group at from; -1: none
	}{
		{`x(ab)y`, 1, 5},
		{`x(a(b)c)y`, 1, 8},
		{`x([)]b)y`, 1, 7},
		{`x(\)b)y`, 1, 6},
		{`x(ab`, 1, -1},
	} {
		if end := groupEnd(c.src, c.from); end != c.want {
			t.Errorf("groupEnd(%q, %d) = %d, want %d", c.src, c.from, end, c.want)
		}
	}
}
