package ref

import "strings"

// CanonicalPrefix validates an allowed_remote_resources / trusted prefix entry
// and returns its canonical form: an https URL ending in "/" with no query or
// fragment. Entries without the trailing slash are rejected (not fixed up):
// "…/library" would otherwise also allow "…/library-evil/".
func CanonicalPrefix(p string) (string, error) {
	if p == "" {
		return "", newError(p, ErrEmpty)
	}
	if strings.ContainsAny(p, "?#") || !strings.HasSuffix(p, "/") {
		return "", newError(p, ErrPrefix)
	}
	c, err := Canonicalize(p)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(c, "/") {
		return "", newError(p, ErrPrefix)
	}
	return c, nil
}

// CheckPrefix reports whether p is a valid allowlist entry (see
// CanonicalPrefix).
func CheckPrefix(p string) error {
	_, err := CanonicalPrefix(p)
	return err
}

// MatchPrefix canonicalises u and returns the index of the first entry of
// prefixes (each canonicalised; invalid entries never match) that is a
// string prefix of it. A URL that does not canonicalise matches nothing.
func MatchPrefix(u string, prefixes []string) (int, bool) {
	c, err := Canonicalize(u)
	if err != nil {
		return -1, false
	}
	for i, p := range prefixes {
		cp, err := CanonicalPrefix(p)
		if err != nil {
			continue
		}
		if strings.HasPrefix(c, cp) {
			return i, true
		}
	}
	return -1, false
}

// MatchCanonical is MatchPrefix for callers that canonicalised both sides
// once already: c must be a canonical URL (Canonicalize, or Ref.URL from
// Parse) and every entry of canon the result of CanonicalPrefix. Since
// Canonicalize is idempotent (FuzzCanonicalize), it gives MatchPrefix's
// answer without re-canonicalising the entries on every call; callers
// pre-canonicalise their allowlist when they are built.
func MatchCanonical(c string, canon []string) (int, bool) {
	for i, p := range canon {
		if strings.HasPrefix(c, p) {
			return i, true
		}
	}
	return -1, false
}

// CheckAllowed returns nil when the URL reference r matches some entry of
// prefixes, the index of that entry, or an *Error wrapping ErrNotAllowed.
func CheckAllowed(r Ref, prefixes []string) (int, error) {
	if r.Kind != URL {
		return -1, nil
	}
	i, ok := MatchPrefix(r.URL, prefixes)
	if !ok {
		return -1, newError(r.URL, ErrNotAllowed)
	}
	return i, nil
}

// CheckSubset verifies that every child entry is valid and starts with some
// (valid) parent entry, both canonicalised. The error names the first
// offending child entry.
func CheckSubset(child, parent []string) error {
	for _, c := range child {
		cc, err := CanonicalPrefix(c)
		if err != nil {
			return err
		}
		if _, ok := MatchPrefix(cc, parent); !ok {
			return newError(c, ErrNotAllowed)
		}
	}
	return nil
}

// CleanLocal lexically cleans a relative local path and rejects one that
// climbs out of its base directory with ".." (ErrEscapes). Symlinks are the
// caller's job: this function never touches the filesystem.
func CleanLocal(rel string) (string, error) {
	k, err := Classify(rel)
	if err != nil {
		return "", err
	}
	if k != Relative {
		return "", newError(rel, ErrScheme)
	}
	var out []string
	for _, s := range strings.Split(rel, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return "", newError(rel, ErrEscapes)
			}
			out = out[:len(out)-1]
		default:
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return ".", nil
	}
	return strings.Join(out, "/"), nil
}

// Hostname returns the host of a canonical https URL without port or IPv6
// brackets ("" when u is not an https URL). It is the one place URL hosts
// are extracted for allowlists and prompts; u must already be canonical
// (Canonicalize), so no further normalisation happens here.
func Hostname(u string) string {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.IndexByte(rest, ']'); i > 0 {
			return rest[1:i]
		}
		return ""
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
