// Package ocicache is fullsend's shared cache tier in an OCI registry
// (config.yaml cache.oci, issue 18): CI runners that start with an empty
// local cache read pinned resources from a registry the org runs instead
// of fetching them from the forge again. Package resolve asks it between
// the local cache and the forge: local cache → registry → forge.
//
// SECURITY: the registry is untrusted storage. Nothing read from it is
// believed: a file is returned only when its sha256 equals the pin, a tree
// only when every layer's bytes match the layer's digest, every path
// passes cas.CheckTreePath (cas.TreeHash runs cas.CheckTreePaths: no "..",
// no absolute path, no control characters, no case-fold collisions) and
// cas.TreeHash of the reassembled tree equals the pin. Package resolve
// checks the pin again, scans the content like forge content, and only
// then writes it to the local cache. A registry that serves other bytes
// (a tampered blob, a re-tagged manifest) gets an *Error matching
// ErrRefused naming the registry and the digest; resolve reports it and
// goes to the forge.
//
// # Layout
//
// A file pinned with sha256 H is the blob sha256:H: the pin is the OCI
// digest, so it is read with one GET /v2/REPO/blobs/sha256:H. It is also
// referenced by a manifest tagged file-H (artifactType FileArtifactType,
// one layer), so registry garbage collection keeps it and `cache ls
// --remote` lists it.
//
// A tree (skill directory) with tree hash H is an OCI image manifest
// tagged tree-H, artifactType TreeArtifactType, the empty config, and one
// layer per file, sorted by path: media type LayerMediaType, the file's
// digest and size, annotations AnnotationPath (the tree path),
// "org.opencontainers.image.title" (the same) and AnnotationMode. Tree
// hashes do not cover modes and the local cache stores every file 0600, so
// the mode is written as "0644" and ignored on read. Small files ride in
// the manifest itself (the descriptor "data" field of image-spec 1.1: at
// most EmbedFileMax bytes a file and EmbedTotalMax a manifest), so a
// skill of small files is read in one round trip; larger ones are fetched
// by digest in parallel. Embedded bytes are verified exactly like fetched
// ones. Every blob is pushed too (registries refuse a manifest naming
// blobs they lack, and clients that ignore "data" still work). The tag
// keeps the manifest, and so its blobs, from garbage collection; the
// manifest annotations AnnotationDigest and AnnotationSource (the URL it
// was fetched from) are informational.
//
// Reading is bounded: a manifest at most MaxManifestSize bytes, at most
// forge.MaxTreeFiles layers, every file and a tree's total at most
// Options.MaxSize (the fetch size limit), the same bounds a forge tree
// has. A manifest's paths and sizes are checked before any of its blobs
// is fetched.
//
// # Network
//
// Requests go through fullsend's own transport, never a proxy from the
// environment. The registry host is the org's explicit choice in
// config.yaml, so it needs no allowed_domains entry, and its addresses are
// not held to the private-network rule (a registry on the CI network or on
// loopback is normal); a cloud metadata address is refused even there.
// Every other host (a blob redirect's target, an upload location on
// another host, a token realm) is dialled through fetch.Client.DialContext
// with the org's allowed_private_networks: resolved once, internal
// addresses refused outside that list, only vetted addresses dialled.
//
// Redirects: registries commonly answer a blob GET with a redirect to
// object storage (S3, GCS, a CDN), and the content is verified against its
// digest wherever it comes from, so a GET or HEAD of a blob may follow at
// most MaxRedirects redirects to https URLs (plain http only back to a
// plain_http registry). Any other request (manifests, uploads, tag lists,
// token requests) that is redirected fails. Credentials never leave the
// registry's origin: oras-go drops Authorization when a redirect leaves
// it, and this package drops it again on every hop to another host.
//
// Plain HTTP is used only when plain_http is set (config warns when the
// host is not loopback), and only towards the registry host itself; any
// other host is https only.
//
// # Credentials
//
// FULLSEND_CACHE_OCI_TOKEN (a registry bearer token), or
// FULLSEND_CACHE_OCI_USERNAME and FULLSEND_CACHE_OCI_PASSWORD, when set;
// otherwise the Docker credential store ($DOCKER_CONFIG/config.json or
// ~/.docker/config.json, with its credsStore and credHelpers). They are
// offered only for the registry's own host[:port], never to other hosts
// (token realms get them as the registry's challenge asks, as with Docker).
//
// # Failures
//
// A missing entry is ErrNotFound (a miss, silent). Content that fails
// verification is ErrRefused. A registry that cannot be reached or
// answers with an error is ErrUnavailable, and after the first such
// failure the Cache stops asking it (every later call fails at once with
// the first reason), so a registry that is down costs one timeout per
// process, not one per resource. A failed push stops further pushes the
// same way but not reads (a registry may be readable without push
// rights). Pushing is the caller's choice (package resolve pushes in the
// background and only warns when it fails); PutFile and PutTree refuse
// content that does not hash to the digest they are given, before any
// request.
package ocicache
