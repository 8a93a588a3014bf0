package scan

// Cheap necessary conditions checked before an injection pattern's regular
// expression runs at an anchor. Each reads the window the expression would
// read (t[:end], starting at i, just after the anchor) and returns false
// only when the expression cannot match there: ASCII is compared
// case-insensitively, and any byte >= 0x80 where a letter could be (case
// folding maps 'ſ' to s and 'K' to k) makes the check answer true. The
// differential test TestInjectionPrechecksNecessary holds them to that.

// reSpace is Go's \s.
func reSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// skipSpaces returns the offset after the run of \s at i and whether the
// run was non-empty.
func skipSpaces(t []byte, i, end int) (int, bool) {
	j := i
	for j < end && reSpace(t[j]) {
		j++
	}
	return j, j > i
}

// hasPrefixFold reports whether t[i:end] starts with the lower-case ASCII
// word w, case-insensitively; a byte >= 0x80 before a difference counts as
// a possible match.
func hasPrefixFold(t []byte, i, end int, w string) bool {
	for k := 0; k < len(w); k++ {
		if i+k >= end {
			return false
		}
		c := t[i+k]
		if c >= 0x80 {
			return true
		}
		if lowerTable[c] != w[k] {
			return false
		}
	}
	return true
}

func anyPrefixFold(t []byte, i, end int, ws []string) bool {
	for _, w := range ws {
		if hasPrefixFold(t, i, end, w) {
			return true
		}
	}
	return false
}

// nextWord: one or more \s, then a word starting with one of ws.
func nextWord(ws ...string) func(t []byte, i, end int) bool {
	return func(t []byte, i, end int) bool {
		j, ok := skipSpaces(t, i, end)
		return ok && anyPrefixFold(t, j, end, ws)
	}
}

// preLeak: \s+ (?:[a-z'-]+\s+){0,3}? (?:your|the|its|all)\s
func preLeak(t []byte, i, end int) bool {
	for w := 0; w <= 3; w++ {
		var ok bool
		if i, ok = skipSpaces(t, i, end); !ok || i >= end {
			return false
		}
		for _, d := range [...]string{"your", "the", "its", "all"} {
			if hasPrefixFold(t, i, end, d) {
				if k := i + len(d); k >= end || reSpace(t[k]) || t[k] >= 0x80 {
					return true
				}
			}
		}
		s := i
		for i < end && !reSpace(t[i]) {
			c := t[i]
			if c >= 0x80 {
				return true
			}
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '\'' || c == '-') {
				return false
			}
			i++
		}
		if i == s {
			return false
		}
	}
	return false
}

// exfilTargets are how the secret alternatives of the exfiltration
// pattern start.
var exfilTargets = []string{"token", "secret", "credential", "password", "api", "private", "ssh", "access", "env", ".env", "cookie", "session", "$"}

// preExfil: \s+ (?:[^\s]+\s+){0,4}? then a secret word.
func preExfil(t []byte, i, end int) bool {
	for w := 0; w <= 4; w++ {
		var ok bool
		if i, ok = skipSpaces(t, i, end); !ok || i >= end {
			return false
		}
		if t[i] >= 0x80 || anyPrefixFold(t, i, end, exfilTargets) {
			return true
		}
		for i < end && !reSpace(t[i]) {
			i++
		}
	}
	return false
}

// prePipe: [^\n|;&]* then '|'.
func prePipe(t []byte, i, end int) bool {
	for ; i < end; i++ {
		switch t[i] {
		case '|':
			return true
		case '\n', ';', '&':
			return false
		}
	}
	return false
}

// preShellSubst: \s+ (?:-c\s+)? ["']? then $( <( or a backquote.
func preShellSubst(t []byte, i, end int) bool {
	i, ok := skipSpaces(t, i, end)
	if !ok {
		return false
	}
	at := func(j int) bool {
		if j < end && (t[j] == '"' || t[j] == '\'') {
			j++
		}
		return hasPrefixFold(t, j, end, "$(") || hasPrefixFold(t, j, end, "<(") || hasPrefixFold(t, j, end, "`")
	}
	if at(i) {
		return true
	}
	if hasPrefixFold(t, i, end, "-c") {
		if j, ok := skipSpaces(t, i+2, end); ok && at(j) {
			return true
		}
	}
	return false
}

// preUpload: on the rest of the line, '-' followed by d, f, t or '-' (every
// upload flag of the pattern holds one), or right after the newline ending
// it "-d", "-f" or "-t" (the \s before those flags may be that newline).
func preUpload(t []byte, i, end int) bool {
	for ; i+1 < end; i++ {
		if t[i] == '\n' {
			if i+2 < end && t[i+1] == '-' {
				switch lowerTable[t[i+2]] {
				case 'd', 'f', 't':
					return true
				}
			}
			return false
		}
		if t[i] == '-' {
			switch lowerTable[t[i+1]] {
			case 'd', 'f', 't', '-':
				return true
			}
		}
	}
	return false
}
