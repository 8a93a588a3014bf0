// Package ref is the single place where fullsend decides what a reference
// string in a harness, config file or frontmatter means.
//
// SECURITY: every rule below guards the supply chain. Other packages must not
// call url.Parse on a reference, compare URL strings, or match allowlist
// prefixes themselves; they call the function here that owns the rule. A change
// to this package changes what fullsend will fetch and run: review it as such.
//
// # Rules (one function each)
//
//   - Classify: a reference is Relative (a local path against the .fullsend
//     dir, or RFC 3986 against the container's URL), Absolute (a local path
//     starting with "/") or URL (https only). The empty string, any other
//     scheme (http, file, ftp, javascript, …) and scheme-relative "//host"
//     references are rejected, as are backslashes and NUL bytes.
//   - ParseDigest / SplitDigest: "#sha256=<64 hex>" pins content. Hex is
//     accepted in any case and stored lower-case; any other fragment on a URL
//     is an error (ErrFragment, ErrBadDigest).
//   - Canonicalize: the only form in which URLs are compared. https only; no
//     userinfo; no "%25" anywhere (double encoding); no backslash; scheme and
//     host lower-cased; a trailing dot on the host dropped; IPv6 literals
//     written in their RFC 5952 form; the default port 443 dropped;
//     percent-encoded unreserved characters decoded ("%61" is "a") and other
//     escapes upper-cased; dot segments removed (after decoding, so "%2E%2E"
//     is ".."). An encoded slash "%2F" stays distinct from "/", but a segment
//     that would become "." or ".." if a server decoded "%2F" or "%5C", or
//     dropped a ";" path parameter ("..;/", "..%3B/"), is rejected
//     (ErrDotSegment). Escapes that decode to a control character or to
//     bytes that are not valid UTF-8 (overlong "%C0%AE" included) are
//     rejected (ErrSyntax). Hosts are ASCII only: letters, digits, "-",
//     "_" and dots; an internationalised name must be written in its
//     punycode ("xn--") form, so full-width dots and other look-alikes never
//     reach a resolver. Hosts that look like legacy IPv4 forms ("127.1",
//     "0x7f.0.0.1") are rejected, as are IPv6 zone identifiers.
//   - ResolveRef: RFC 3986 §5.2 resolution of a reference found inside a
//     remote resource against that resource's canonical URL, then
//     Canonicalize. An absolute local path inside a remote resource is an
//     error (ErrLocalInRemote): remote content never names host files.
//   - CheckPrefix / CanonicalPrefix: allowlist entries are canonical https
//     URLs ending in "/" with no query, so "…/library/" never matches
//     "…/library-evil/".
//   - MatchPrefix: string prefix match on canonical forms only.
//     MatchCanonical is the same match for callers that canonicalised the
//     URL (Parse) and their entries (CanonicalPrefix) once beforehand.
//   - CheckSubset: every child entry starts with some parent entry.
//
// # Failure
//
// Every error returned is a *Error naming the reference (userinfo redacted)
// and wrapping one of the Err* sentinels, so callers branch with errors.Is and
// print err.Error() as one line.
package ref
