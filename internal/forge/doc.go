// Package forge turns forge URLs (GitHub, GitLab, and their Enterprise or
// self-managed hosts configured under forges: in config.yaml) into
// locations, and downloads skill directories and single files from them.
// Every request goes through a fetch.Client, so the SSRF rules of package
// fetch apply to forge API hosts too; this package makes no connections of
// its own.
//
// # URLs
//
// Parse accepts, on the exact host[:port] of a configured forge:
//
//	GitHub  https://HOST/OWNER/REPO/tree/REF[/PATH]      directory (Tree)
//	        https://HOST/OWNER/REPO/blob/REF/PATH        file (Blob)
//	        https://raw.githubusercontent.com/OWNER/REPO/REF/PATH  (Raw; raw.HOST
//	        for an Enterprise host)
//	GitLab  https://HOST/GROUP[/SUB...]/PROJECT/-/tree/REF[/PATH]
//	        .../-/blob/REF/PATH and .../-/raw/REF/PATH
//
// REF is one path segment: a 40-hex commit id (the recommended pin) or a
// branch or tag without slashes. Paths must pass cas.CheckTreePath. URLs on
// other hosts are ErrNotForge: skill directories can only come from a
// forge, because plain HTTP has no directory listing.
//
// Location.As renders the same owner, repository, ref and path as another
// kind (a blob or raw URL as the tree at that path, for instance), checked
// by parsing the rendering back; a repository root has no file form.
//
// # Directory download
//
// GitHub: one git trees call for the whole ref
// (GET {api}/repos/O/R/git/trees/REF?recursive=1), filtered here to PATH;
// when GitHub marks the listing truncated, the contents API is walked
// directory by directory instead. Blobs are then fetched in parallel
// (DefaultConcurrency per tree) from /git/blobs/SHA with the raw media
// type. Whatever the callers run in parallel, one Client has at most
// DefaultMaxInFlight requests on the wire (WithMaxInFlight), below
// GitHub's limit of 100 concurrent requests; retry waits hold none.
// GitLab: GET {api}/projects/ID/repository/tree?path=P&ref=R&recursive=true
// with pagination (MaxListPages), then the raw file API per file.
//
// Every file is verified against the git blob SHA-1 the listing gives
// (sha1("blob <len>\x00" + content)); the caller then verifies the sha256
// tree hash. Symlinks (mode 120000) and submodules are refused; paths go
// through cas.CheckTreePaths (no "..", absolute paths, backslashes, NUL,
// case-fold collisions); the number of files (MaxTreeFiles) and their total
// size (the fetch client's MaxSize) are bounded.
//
// # Tokens
//
// A forge's token is read from the environment variable its TokenEnv
// names, at request time, and sent only on requests whose host is the host
// of that forge's APIURL (Authorization: Bearer for GitHub, PRIVATE-TOKEN
// for GitLab). It is never sent to raw hosts or anywhere else, and is
// scrubbed from any error answer that echoes it.
//
// # Retries and failures
//
// 429, 403 with Retry-After or X-RateLimit-Remaining: 0, and 500/502/503/504
// are retried up to DefaultRetries times, waiting as Retry-After or
// X-RateLimit-Reset says (at most MaxRetryWait; a longer demand fails at
// once) or with exponential backoff. Every error is an *Error naming the
// forge URL asked for, on one redacted line; 401, 403 and 404 also say
// whether a token was sent and from which variable.
package forge
