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
func preLeak(t []byte, i, end int) bool { return walkWords(t, i, end, 3, atLeakDeterminer) }

// atLeakDeterminer: (?:your|the|its|all) at i, then \s and a leak tail.
func atLeakDeterminer(t []byte, i, end int) bool {
	for _, d := range [...]string{"your", "the", "its", "all"} {
		if hasPrefixFold(t, i, end, d) {
			if k := i + len(d); k < end && (t[k] >= 0x80 || reSpace(t[k]) && leakTail(t, k, end)) {
				return true
			}
		}
	}
	return false
}

// leakTails are how the last part of the leak pattern starts.
var leakTails = []string{"system", "initial", "original", "hidden", "secret", "entire", "exact", "verbatim", "developer", "pre", "instructions", "prompt"}

// leakTail: \s+ (?:[a-z'-]+\s+){0,2}? then a leak tail.
func leakTail(t []byte, i, end int) bool { return walkWords(t, i, end, 2, atLeakTail) }

func atLeakTail(t []byte, i, end int) bool {
	return t[i] >= 0x80 || anyPrefixFold(t, i, end, leakTails)
}

// walkWords: \s+ (?:[a-z'-]+\s+){0,maxWords}? then a place where at answers
// true. at is asked after each run of \s (with i < end); a byte >= 0x80
// inside a word makes the walk answer true.
func walkWords(t []byte, i, end, maxWords int, at func(t []byte, i, end int) bool) bool {
	for w := 0; w <= maxWords; w++ {
		var ok bool
		if i, ok = skipSpaces(t, i, end); !ok || i >= end {
			return false
		}
		if at(t, i, end) {
			return true
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

// uploadFlags are the long flags of the upload pattern, after "--".
var uploadFlags = []string{"data", "form", "upload-file", "post-data", "post-file", "body-file"}

// preUpload: on the rest of the line (and the newline ending it, which
// \s may match) one of the pattern's flags: \s-d, \s-f, \s-t or --data,
// --form, --upload-file, --post-data, --post-file, --body-file.
func preUpload(t []byte, i, end int) bool {
	for j := i; j+1 < end; j++ {
		if t[j] != '-' {
			if t[j] == '\n' && (j+1 >= end || t[j+1] != '-') {
				return false
			}
			continue
		}
		if j > i && reSpace(t[j-1]) {
			switch lowerTable[t[j+1]] {
			case 'd', 'f', 't':
				return true
			}
		}
		if t[j+1] == '-' && j > i && t[j-1] != '\n' || t[j+1] == '-' && j == i {
			if anyPrefixFold(t, j+2, end, uploadFlags) {
				return true
			}
		}
		if j > i && t[j-1] == '\n' {
			return false // only a short flag may follow the newline
		}
	}
	return false
}
