package ocicache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/errdef"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// descriptor is the part of an OCI descriptor this package reads.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Data        []byte            `json:"data,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// manifest is the part of an OCI image manifest this package reads and
// writes.
type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	ArtifactType  string            `json:"artifactType"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// GetFile returns the file pinned with d, read as the blob sha256:d and
// returned only when its sha256 is d and it is at most Options.MaxSize
// bytes.
func (c *Cache) GetFile(ctx context.Context, d ref.Digest) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	d, err := checkDigest(c.o.Repository, "file", d)
	if err != nil {
		return nil, err
	}
	b, err := c.blob(ctx, d, -1)
	if err != nil {
		return nil, c.classify(ctx, "file", d, err)
	}
	return b, nil
}

// GetTree returns the tree whose tree hash is d, from the manifest tagged
// tree-d: every layer verified against its digest, every path checked
// (cas.CheckTreePaths, through cas.TreeHash) and the tree hash of the
// whole equal to d.
func (c *Cache) GetTree(ctx context.Context, d ref.Digest) (map[string][]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	d, err := checkDigest(c.o.Repository, "tree", d)
	if err != nil {
		return nil, err
	}
	m, err := c.manifest(ctx, TreeTagPrefix+string(d))
	if err != nil {
		return nil, c.classify(ctx, "tree", d, err)
	}
	files, err := c.treeFiles(ctx, m)
	if err != nil {
		return nil, c.classify(ctx, "tree", d, err)
	}
	got, err := cas.TreeHash(files)
	if err != nil {
		return nil, c.fail("tree", d, ErrRefused, err)
	}
	if got != d {
		return nil, c.fail("tree", d, ErrRefused, fmt.Errorf("tree hash of the served files is %s", got))
	}
	return files, nil
}

// checkDigest validates a pin and returns it lower-cased.
func checkDigest(registry, what string, d ref.Digest) (ref.Digest, error) {
	p, err := ref.ParseDigest(string(d))
	if err != nil {
		return d, &Error{Registry: registry, Digest: d, What: what, Err: err}
	}
	return p, nil
}

// refusal marks a verification failure (as opposed to a transport one).
type refusal struct{ error }

func refused(format string, args ...any) error { return refusal{fmt.Errorf(format, args...)} }

// classify maps an error of a read to ErrNotFound, ErrRefused or
// ErrUnavailable; the caller's own cancellation is none of them and does
// not trip the breaker.
func (c *Cache) classify(ctx context.Context, what string, d ref.Digest, err error) error {
	var rf refusal
	switch {
	case errors.As(err, &rf):
		return c.fail(what, d, ErrRefused, rf.error)
	case errors.Is(err, errdef.ErrNotFound):
		return &Error{Registry: c.o.Repository, Digest: d, What: what, Err: ErrNotFound}
	case ctx.Err() != nil:
		return &Error{Registry: c.o.Repository, Digest: d, What: what, Err: ctx.Err()}
	}
	return c.fail(what, d, ErrUnavailable, err)
}

// manifest fetches and parses the manifest tagged tag (one GET).
func (c *Cache) manifest(ctx context.Context, tag string) (*manifest, error) {
	_, rc, err := c.repo.Manifests().FetchReference(ctx, tag)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := limit.ReadAll(rc, MaxManifestSize)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, refused("manifest %s is larger than %d bytes", tag, MaxManifestSize)
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, refused("manifest %s: %v", tag, err)
	}
	if m.SchemaVersion != 2 || m.MediaType != ManifestType {
		return nil, refused("manifest %s: not an OCI image manifest (schemaVersion %d, mediaType %q)", tag, m.SchemaVersion, m.MediaType)
	}
	return &m, nil
}

// treeFiles verifies a tree manifest's layers and returns the files.
func (c *Cache) treeFiles(ctx context.Context, m *manifest) (map[string][]byte, error) {
	if m.ArtifactType != TreeArtifactType {
		return nil, refused("manifest artifactType %q, want %q", m.ArtifactType, TreeArtifactType)
	}
	if len(m.Layers) == 0 {
		return nil, refused("manifest has no layers")
	}
	if len(m.Layers) > forge.MaxTreeFiles {
		return nil, refused("manifest has %d layers, more than %d", len(m.Layers), forge.MaxTreeFiles)
	}
	var total int64
	paths := make([]string, len(m.Layers))
	digests := make([]ref.Digest, len(m.Layers))
	for i, l := range m.Layers {
		p := l.Annotations[AnnotationPath] // checked below with the others
		if l.MediaType != LayerMediaType {
			return nil, refused("layer %s: media type %q, want %q", p, l.MediaType, LayerMediaType)
		}
		d, err := layerDigest(l.Digest)
		if err != nil {
			return nil, refused("layer %s: %v", p, err)
		}
		if l.Size < 0 || l.Size > c.maxSize {
			return nil, refused("layer %s: size %d outside 0..%d", p, l.Size, c.maxSize)
		}
		if total += l.Size; total > c.maxSize {
			return nil, refused("the tree's files add up to more than %d bytes", c.maxSize)
		}
		paths[i], digests[i] = p, d
	}
	// cas.CheckTreePaths: every path alone (cas.CheckTreePath) and the set
	// (case-fold collisions, a file that is also a directory).
	if err := cas.CheckTreePaths(paths); err != nil {
		return nil, refused("%v", err)
	}
	contents := make([][]byte, len(m.Layers))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.o.Concurrency)
	for i, l := range m.Layers {
		if l.Data != nil || l.Size == 0 {
			// Embedded, or empty (encoding/json omits an empty "data"):
			// nothing to fetch, the same check.
			if l.Data == nil {
				l.Data = []byte{}
			}
			if err := verify(l.Data, digests[i], l.Size); err != nil {
				return nil, refused("layer %s (embedded): %v", paths[i], err)
			}
			contents[i] = l.Data
			continue
		}
		g.Go(func() error {
			b, err := c.blob(gctx, digests[i], l.Size)
			if err != nil {
				var rf refusal
				if errors.As(err, &rf) || errors.Is(err, errdef.ErrNotFound) {
					return refused("layer %s: %v", paths[i], err)
				}
				return err
			}
			contents[i] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(paths))
	for i, p := range paths {
		files[p] = contents[i]
	}
	return files, nil
}

// layerDigest parses "sha256:HEX" (lower-case hex, 64 digits).
func layerDigest(s string) (ref.Digest, error) {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return "", fmt.Errorf("digest %q is not sha256", s)
	}
	d, err := ref.ParseDigest(hex)
	if err != nil || string(d) != hex {
		return "", fmt.Errorf("digest %q is not 64 lower-case hex digits", s)
	}
	return d, nil
}

// verify checks that b is size bytes (size < 0: any) with sha256 d.
func verify(b []byte, d ref.Digest, size int64) error {
	if size >= 0 && int64(len(b)) != size {
		return fmt.Errorf("%d bytes, the descriptor says %d", len(b), size)
	}
	if got := ref.SHA256(b); got != d {
		return fmt.Errorf("sha256 of the served bytes is %s", got)
	}
	return nil
}

// blob fetches the blob sha256:d (size < 0: unknown, bounded by MaxSize)
// and verifies it.
func (c *Cache) blob(ctx context.Context, d ref.Digest, size int64) ([]byte, error) {
	desc, rc, err := c.repo.Blobs().FetchReference(ctx, "sha256:"+string(d))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	max := c.maxSize
	if size >= 0 {
		max = size
	}
	if desc.Size > max {
		return nil, refused("blob sha256:%s is %d bytes, more than %d", d, desc.Size, max)
	}
	b, err := limit.ReadAll(rc, max)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, refused("blob sha256:%s is more than %d bytes", d, max)
	}
	if err != nil {
		return nil, err
	}
	if err := verify(b, d, size); err != nil {
		return nil, refused("blob sha256:%s: %v", d, err)
	}
	return b, nil
}

// Item is one entry listed by List.
type Item struct {
	Digest ref.Digest
	Type   cas.Type
	Tag    string
}

// List lists the entries the repository's tags name (tree-H and file-H),
// sorted by type and digest. Other tags are skipped. Nothing is verified:
// a listed entry is verified when it is read.
func (c *Cache) List(ctx context.Context) ([]Item, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	var out []Item
	err := c.repo.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			typ, hex := cas.TypeDirectory, ""
			if h, ok := strings.CutPrefix(t, TreeTagPrefix); ok {
				hex = h
			} else if h, ok := strings.CutPrefix(t, FileTagPrefix); ok {
				typ, hex = cas.TypeFile, h
			} else {
				continue
			}
			if d, err := ref.ParseDigest(hex); err == nil && string(d) == hex {
				out = append(out, Item{Digest: d, Type: typ, Tag: t})
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, nil // no repository yet: nothing pushed
		}
		return nil, c.fail("tag list", "", ErrUnavailable, err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type // directories (trees) first
		}
		return out[i].Digest < out[j].Digest
	})
	return out, nil
}
