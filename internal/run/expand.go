package run

import (
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// expandVars replaces every ${NAME} in s (NAME a valid environment variable
// name) by getenv(NAME). Everything else — "$NAME" without braces, "$(…)",
// a lone "$", "${" not followed by a valid name and "}" — is left as
// written, so shell syntax in expanded files survives. It returns the
// names that were unset (empty), sorted and without duplicates.
func expandVars(s string, getenv func(string) string) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '{' {
			b.WriteByte(s[i])
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		name := s[i+2 : i+2+end]
		if !config.ValidEnvName(name) {
			b.WriteByte(s[i])
			continue
		}
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		b.WriteString(v)
		i += 2 + end
	}
	return b.String(), dedupe(missing)
}

func dedupe(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	sort.Strings(l)
	out := l[:1]
	for _, s := range l[1:] {
		if s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

// expandMap expands every value of m; the result is a new map.
func expandMap(m map[string]string, getenv func(string) string) (map[string]string, []string) {
	out := make(map[string]string, len(m))
	var missing []string
	for k, v := range m {
		e, miss := expandVars(v, getenv)
		out[k] = e
		missing = append(missing, miss...)
	}
	return out, dedupe(missing)
}

// shellQuote quotes s for a POSIX shell: single quotes, with embedded single
// quotes written '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
