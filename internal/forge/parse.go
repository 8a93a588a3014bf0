package forge

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Kind is the shape of a forge URL.
type Kind int

const (
	// Tree is a directory: GitHub /tree/REF/PATH, GitLab /-/tree/REF/PATH.
	Tree Kind = iota
	// Blob is a file page: GitHub /blob/REF/PATH, GitLab /-/blob/REF/PATH.
	Blob
	// Raw is a raw file: raw.githubusercontent.com/O/R/REF/PATH (raw.HOST
	// for GitHub Enterprise), GitLab /-/raw/REF/PATH.
	Raw
)

func (k Kind) String() string {
	switch k {
	case Tree:
		return "tree"
	case Blob:
		return "blob"
	case Raw:
		return "raw"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Location is a parsed forge URL. Owner is the GitHub owner or the GitLab
// namespace ("group/sub"); Path is the decoded, slash-separated path inside
// the repository ("" for a repository root tree). URL is the canonical
// rendering of the fields (a tree without trailing slash); Parse(URL)
// returns the same Location.
type Location struct {
	Forge            config.Forge
	Kind             Kind
	Owner, Repo, Ref string
	Path             string
	URL              string
}

// Limits of the URL grammar.
const (
	MaxNamespaceDepth = 20  // GitLab group nesting
	MaxNameLen        = 255 // one owner, group, repository or ref name
)

// Parse recognises a GitHub, GitLab or raw-file URL of one of forges (the
// host, with its port, must equal a forge's host exactly; raw files of a
// GitHub forge live on raw.githubusercontent.com for github.com and on
// raw.HOST otherwise). The input goes through ref.Canonicalize first.
//
// A URL on no forge host is ErrNotForge. A URL on a forge host that is not
// a tree, blob or raw URL, or whose owner, repository, ref or path is not
// acceptable, is ErrBadURL. REF must be a single segment (a commit id, or a
// branch or tag without slashes); a query is refused.
func Parse(canonURL string, forges []config.Forge) (Location, error) {
	canon, err := ref.Canonicalize(canonURL)
	if err != nil {
		return Location{}, &Error{URL: ref.Redact(canonURL), Err: err}
	}
	return ParseCanonical(canon, forges)
}

// ParseCanonical is Parse for a URL that is already canonical: a
// ref.Ref's URL (ref.Parse canonicalises it) or a ref.Canonicalize result.
// Canonicalize is idempotent, so for such a URL the answer is Parse's; it
// only skips canonicalising the URL a second time. Callers holding any
// other string use Parse.
func ParseCanonical(canon string, forges []config.Forge) (Location, error) {
	fail := func(err error) (Location, error) { return Location{}, &Error{URL: canon, Err: err} }
	rest := strings.TrimPrefix(canon, "https://")
	hostport, path, _ := strings.Cut(rest, "/")
	if strings.IndexByte(path, '?') >= 0 {
		if _, _, raw := matchHost(hostport, forges); raw || isForgeHost(hostport, forges) {
			return fail(fmt.Errorf("%w: forge URLs take no query", ErrBadURL))
		}
		return fail(ErrNotForge)
	}
	f, ok, raw := matchHost(hostport, forges)
	if !ok {
		return fail(ErrNotForge)
	}
	segs, err := decodeSegments(path)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrBadURL, err))
	}
	var loc Location
	switch {
	case raw:
		loc, err = parseGitHubRaw(segs)
	case f.Type == "github":
		loc, err = parseGitHub(segs)
	case f.Type == "gitlab":
		loc, err = parseGitLab(segs)
	default:
		err = fmt.Errorf("forge type %q is not supported", f.Type)
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrBadURL, err))
	}
	loc.Forge = f
	loc.URL = loc.render()
	return loc, nil
}

// isForgeHost reports whether hostport is the web host of some forge.
func isForgeHost(hostport string, forges []config.Forge) bool {
	_, ok, _ := matchHost(hostport, forges)
	return ok
}

// matchHost finds the forge whose web host (or, for GitHub forges, raw
// host) is hostport.
func matchHost(hostport string, forges []config.Forge) (config.Forge, bool, bool) {
	for _, f := range forges {
		if canonicalHost(f.Host) == hostport {
			return f, true, false
		}
	}
	for _, f := range forges {
		if f.Type == "github" && rawHost(f) == hostport {
			return f, true, true
		}
	}
	return config.Forge{}, false, false
}

// canonicalHost brings a configured host[:port] to the form it takes in a
// canonical URL.
func canonicalHost(h string) string {
	if c, ok := canonHosts.Load(h); ok {
		return c.(string)
	}
	c, err := ref.Canonicalize("https://" + h + "/")
	if err != nil {
		c = "\x00invalid" // matches nothing
	} else {
		c = strings.TrimSuffix(strings.TrimPrefix(c, "https://"), "/")
	}
	if canonHostsN.Add(1) <= maxCanonHosts {
		canonHosts.Store(h, c)
	}
	return c
}

// canonHosts memoises canonicalHost, a pure function of a forge's
// configured host (a handful per process; at most maxCanonHosts are
// kept): every Parse looks up every configured forge's host.
var (
	canonHosts  sync.Map // string -> string
	canonHostsN atomic.Int64
)

const maxCanonHosts = 256

// rawHost is where a GitHub forge serves raw files.
func rawHost(f config.Forge) string {
	h := canonicalHost(f.Host)
	if h == "github.com" {
		return "raw.githubusercontent.com"
	}
	return "raw." + h
}

func decodeSegments(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("no path")
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(d, "/\\\x00") {
			return nil, fmt.Errorf("segment %q hides a separator or NUL", s)
		}
		segs[i] = d
	}
	return segs, nil
}

func parseGitHub(segs []string) (Location, error) {
	// OWNER/REPO/(tree|blob)/REF[/PATH...]
	if len(segs) < 4 || (segs[2] != "tree" && segs[2] != "blob") {
		return Location{}, errors.New("expected /OWNER/REPO/tree/REF/PATH or /OWNER/REPO/blob/REF/PATH")
	}
	kind := Tree
	if segs[2] == "blob" {
		kind = Blob
	}
	return finish(kind, segs[0], segs[1], segs[3], segs[4:])
}

func parseGitHubRaw(segs []string) (Location, error) {
	// OWNER/REPO/REF/PATH...
	if len(segs) < 4 {
		return Location{}, errors.New("expected /OWNER/REPO/REF/PATH")
	}
	return finish(Raw, segs[0], segs[1], segs[2], segs[3:])
}

func parseGitLab(segs []string) (Location, error) {
	// NAMESPACE.../PROJECT/-/(tree|blob|raw)/REF[/PATH...]
	dash := -1
	for i, s := range segs {
		if s == "-" {
			dash = i
			break
		}
	}
	if dash < 2 || len(segs) < dash+3 {
		return Location{}, errors.New("expected /GROUP/PROJECT/-/tree/REF/PATH, /-/blob/ or /-/raw/")
	}
	var kind Kind
	switch segs[dash+1] {
	case "tree":
		kind = Tree
	case "blob":
		kind = Blob
	case "raw":
		kind = Raw
	default:
		return Location{}, fmt.Errorf("unsupported GitLab page %q (want tree, blob or raw)", segs[dash+1])
	}
	ns := segs[:dash-1]
	if len(ns) > MaxNamespaceDepth {
		return Location{}, fmt.Errorf("namespace deeper than %d groups", MaxNamespaceDepth)
	}
	for _, g := range ns {
		if err := checkName(g); err != nil {
			return Location{}, err
		}
	}
	return finish(kind, strings.Join(ns, "/"), segs[dash-1], segs[dash+2], segs[dash+3:])
}

// finish validates the common parts. A tree may end in "/" (one empty last
// segment); files need a path.
func finish(kind Kind, owner, repo, gitRef string, path []string) (Location, error) {
	if !strings.Contains(owner, "/") { // GitLab namespaces were checked segment by segment
		if err := checkName(owner); err != nil {
			return Location{}, err
		}
	}
	if err := checkName(repo); err != nil {
		return Location{}, err
	}
	if err := checkRef(gitRef); err != nil {
		return Location{}, err
	}
	if kind == Tree && len(path) > 0 && path[len(path)-1] == "" {
		path = path[:len(path)-1]
	}
	for _, seg := range path {
		if seg == "" {
			return Location{}, errors.New("empty path segment")
		}
	}
	p := strings.Join(path, "/")
	if p == "" {
		if kind != Tree {
			return Location{}, errors.New("a file URL needs a path after the ref")
		}
	} else if err := cas.CheckTreePath(p); err != nil {
		return Location{}, err
	}
	return Location{Kind: kind, Owner: owner, Repo: repo, Ref: gitRef, Path: p}, nil
}

// checkName accepts owner, group and repository names: ASCII letters,
// digits, '.', '_' and '-', not "." or "..", not "-" alone.
func checkName(s string) error {
	if s == "" || s == "." || s == ".." || s == "-" || len(s) > MaxNameLen {
		return fmt.Errorf("invalid owner or repository name %q", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid owner or repository name %q", s)
		}
	}
	return nil
}

// checkRef accepts a commit id or a branch or tag name without slashes:
// ASCII letters, digits, '.', '_', '-' and '+', starting with a letter or
// digit, without "..", not ending in "." or ".lock".
func checkRef(s string) error {
	bad := func() error {
		return fmt.Errorf("invalid ref %q (use a commit id, or a branch or tag without slashes)", s)
	}
	if s == "" || len(s) > MaxNameLen || strings.Contains(s, "..") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		return bad()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-' && c != '+')) {
			return bad()
		}
	}
	return nil
}

// As returns l rendered as kind k: the same forge, owner, repository, ref
// and path, with URL re-rendered canonically, so As(k) of a Parse result
// equals Parse of the kind-k URL of the same file or directory. A
// repository root tree (empty Path) has no file form (ErrKind); an unknown
// kind is ErrKind; a location on no forge host is ErrNotForge; fields that
// do not survive rendering and parsing back (a hand-built Location) are
// ErrBadURL. Errors are *Error.
func (l Location) As(k Kind) (Location, error) {
	if l.Forge.Host == "" {
		return Location{}, &Error{URL: l.URL, Err: ErrNotForge}
	}
	switch k {
	case Tree:
	case Blob, Raw:
		if l.Path == "" {
			return Location{}, &Error{URL: l.URL, Err: fmt.Errorf("%w: a repository root has no %s URL", ErrKind, k)}
		}
	default:
		return Location{}, &Error{URL: l.URL, Err: fmt.Errorf("%w: unknown kind %s", ErrKind, k)}
	}
	l.Kind = k
	return reparse(l, []config.Forge{l.Forge})
}

// reparse renders loc and parses the result against forges, requiring the
// same kind, owner, repository, ref and path back.
func reparse(loc Location, forges []config.Forge) (Location, error) {
	u := loc.render()
	parsed, err := Parse(u, forges)
	if err != nil {
		return Location{}, err
	}
	if parsed.Kind != loc.Kind || parsed.Owner != loc.Owner || parsed.Repo != loc.Repo ||
		parsed.Ref != loc.Ref || parsed.Path != loc.Path {
		return Location{}, &Error{URL: u, Err: fmt.Errorf("%w: location fields do not survive rendering", ErrBadURL)}
	}
	return parsed, nil
}

// render builds the canonical URL of l.
func (l Location) render() string {
	var b strings.Builder
	b.WriteString("https://")
	if l.Kind == Raw && l.Forge.Type == "github" {
		b.WriteString(rawHost(l.Forge))
		b.WriteString("/" + escapeSegs(l.Owner) + "/" + escapeSegs(l.Repo) + "/" + escapeSegs(l.Ref))
	} else {
		b.WriteString(canonicalHost(l.Forge.Host))
		b.WriteString("/" + escapeSegs(l.Owner) + "/" + escapeSegs(l.Repo))
		if l.Forge.Type == "gitlab" {
			b.WriteString("/-")
		}
		b.WriteString("/" + l.Kind.String() + "/" + escapeSegs(l.Ref))
	}
	if l.Path != "" {
		b.WriteString("/" + escapeSegs(l.Path))
	}
	return b.String()
}

// escapeSegs percent-encodes each "/"-separated segment of p the way
// ref.Canonicalize leaves it: unreserved and sub-delimiter characters stay,
// everything else is %XX with upper-case hex.
func escapeSegs(p string) string { return percentEncode(p, "/-._~!$&'()*+,;=:@") }

// percentEncode keeps ASCII letters, digits and the bytes in keep, and
// writes every other byte of s as %XX with upper-case hex.
func percentEncode(s, keep string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// escapeSeg percent-encodes p as a single path segment (slashes too), for
// GitLab project ids and file paths.
func escapeSeg(p string) string {
	return strings.ReplaceAll(escapeSegs(p), "/", "%2F")
}
