// Package forgetest runs fake GitHub and GitLab servers for tests: httptest
// TLS servers on 127.0.0.1 serving in-memory repositories through the subset
// of the REST APIs that package forge uses, reached through the real
// fetch.Client (no transport is swapped, so the SSRF dialer stays in the
// path).
//
// # Hosts
//
// Each server answers for a few host names, all with the server's port:
// a fake GitHub for "github.test" (web), "api.github.test" (API) and
// "raw.github.test" (raw files); an Enterprise GitHub (Enterprise option) for
// "ghe.test" with its API under /api/v3 and raw files on "raw.ghe.test"; a
// fake GitLab for "gitlab.test" with its API under /api/v4. The server's
// certificate, issued by the fetchtest CA, covers those names; its
// Resolver maps them to 127.0.0.1 and knows nothing else. Options returns
// the fetch.Options that reach one or more servers: their host names
// allowed, 127.0.0.0/8 in AllowedPrivateNetworks, the test CA, the fake
// resolver.
//
// # Endpoints
//
// GitHub (under the API host): GET /repos/O/R/git/trees/REF[?recursive=1]
// (with a truncation switch), /repos/O/R/git/blobs/SHA (raw media type or the
// base64 JSON envelope), /repos/O/R/contents/PATH?ref=REF (directory
// listings, files raw or as JSON; submodules listed as "file" without a
// download URL as GitHub does), /repos/O/R/commits/REF (the commit id as
// text with the sha media type, else JSON {"sha"}). Raw host: GET
// /O/R/REF/PATH.
// GitLab: GET /projects/ID/repository/tree?path&ref&recursive&per_page&page
// (X-Next-Page pagination), /projects/ID/repository/files/PATH/raw?ref=REF
// and /projects/ID/repository/commits/REF (JSON {"id"}).
//
// # Knobs
//
// Tamper serves other bytes for a file than its listed blob id; Fail answers
// chosen requests with a status (3xx, 403, 404, 429 with Retry-After, 5xx),
// an oversize body or a stall, for a number of requests; SetLatency delays
// every request; SetTruncated makes tree listings truncated; SetPageSize
// shrinks GitLab pages; RequireToken makes API requests without the token
// answer 404 like a private repository; Requests records every request
// (host, path, token headers; CountRequests counts those whose path holds a
// string) so tests can assert that cache hits make no
// request and that tokens only reach the API host.
//
// Handlers report protocol violations by the client (a method other than
// GET, an unknown API route, a token sent to a host other than the API
// host) with t.Errorf and an HTTP error; they never call t.Fatal.
package forgetest
