package ocicache

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	godigest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// emptyConfig is the OCI empty descriptor's content.
var emptyConfig = []byte("{}")

// PutFile pushes the file pinned with d (content must hash to d): the
// blob, then a manifest tagged file-d referencing it. origin is the URL it
// was fetched from (an annotation, informational).
func (c *Cache) PutFile(ctx context.Context, d ref.Digest, content []byte, origin string) error {
	if err := c.checkPush(); err != nil {
		return err
	}
	d, err := checkDigest(c.o.Repository, "file", d)
	if err != nil {
		return err
	}
	if got := ref.SHA256(content); got != d {
		return &Error{Registry: c.o.Repository, Digest: d, What: "file", Err: fmt.Errorf("not pushed: content hashes to %s", got)}
	}
	l := layer("", content, true)
	m := c.newManifest(FileArtifactType, []descriptor{l}, d, origin)
	if err := c.pushAll(ctx, [][]byte{content}, m, FileTagPrefix+string(d)); err != nil {
		return c.putErr(ctx, "file", d, err)
	}
	return nil
}

// PutTree pushes the tree with tree hash d (files must hash to d): every
// file's blob and the empty config, then the manifest tagged tree-d.
// Files up to EmbedFileMax bytes are also embedded in the manifest while
// the embedded total stays within EmbedTotalMax.
func (c *Cache) PutTree(ctx context.Context, d ref.Digest, files map[string][]byte, origin string) error {
	if err := c.checkPush(); err != nil {
		return err
	}
	d, err := checkDigest(c.o.Repository, "tree", d)
	if err != nil {
		return err
	}
	got, err := cas.TreeHash(files)
	if err != nil {
		return &Error{Registry: c.o.Repository, Digest: d, What: "tree", Err: fmt.Errorf("not pushed: %w", err)}
	}
	if got != d {
		return &Error{Registry: c.o.Repository, Digest: d, What: "tree", Err: fmt.Errorf("not pushed: files hash to %s", got)}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	layers := make([]descriptor, 0, len(paths))
	blobs := make([][]byte, 0, len(paths))
	var embedded int
	for _, p := range paths {
		b := files[p]
		embed := len(b) <= EmbedFileMax && embedded+len(b) <= EmbedTotalMax
		if embed {
			embedded += len(b)
		}
		layers = append(layers, layer(p, b, embed))
		blobs = append(blobs, b)
	}
	m := c.newManifest(TreeArtifactType, layers, d, origin)
	if err := c.pushAll(ctx, blobs, m, TreeTagPrefix+string(d)); err != nil {
		return c.putErr(ctx, "tree", d, err)
	}
	return nil
}

// putErr classifies a push failure: the caller's cancellation as such,
// anything else as an unavailability for pushes (no more pushes from this
// Cache; reads go on, a registry may be readable without push rights).
func (c *Cache) putErr(ctx context.Context, what string, d ref.Digest, err error) error {
	if ctx.Err() != nil {
		return &Error{Registry: c.o.Repository, Digest: d, What: what, Err: ctx.Err()}
	}
	msg := fetch.Redact(oneLine(err.Error()))
	c.pushDown.CompareAndSwap(nil, &Error{Registry: c.o.Repository, What: "earlier push failure", Err: fmt.Errorf("%w: push: %s", ErrUnavailable, msg)})
	return &Error{Registry: c.o.Repository, Digest: d, What: what, Err: fmt.Errorf("%w: push: %s", ErrUnavailable, msg)}
}

// layer is the descriptor of one file (path "" for a single file).
func layer(path string, b []byte, embed bool) descriptor {
	l := descriptor{MediaType: LayerMediaType, Digest: "sha256:" + string(ref.SHA256(b)), Size: int64(len(b))}
	if path != "" {
		l.Annotations = map[string]string{AnnotationPath: path, annotationTitle: path, AnnotationMode: FileMode}
	}
	if embed {
		l.Data = b // an empty file's "data" is omitted: size 0 says it all
	}
	return l
}

func (c *Cache) newManifest(artifact string, layers []descriptor, d ref.Digest, origin string) *manifest {
	m := &manifest{
		SchemaVersion: 2,
		MediaType:     ManifestType,
		ArtifactType:  artifact,
		Config:        descriptor{MediaType: EmptyConfigType, Digest: "sha256:" + string(ref.SHA256(emptyConfig)), Size: int64(len(emptyConfig)), Data: emptyConfig},
		Layers:        layers,
		Annotations:   map[string]string{AnnotationDigest: string(d)},
	}
	if origin != "" {
		m.Annotations[AnnotationSource] = origin
	}
	return m
}

// pushAll pushes the blobs the registry lacks (and the empty config), then
// the manifest under tag.
func (c *Cache) pushAll(ctx context.Context, blobs [][]byte, m *manifest, tag string) error {
	seen := map[ref.Digest]bool{}
	todo := [][]byte{emptyConfig}
	seen[ref.SHA256(emptyConfig)] = true
	for _, b := range blobs {
		if d := ref.SHA256(b); !seen[d] {
			seen[d] = true
			todo = append(todo, b)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.o.Concurrency)
	for _, b := range todo {
		g.Go(func() error { return c.pushBlob(gctx, b) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(body) > MaxManifestSize {
		return fmt.Errorf("manifest of %d bytes is larger than %d", len(body), MaxManifestSize)
	}
	desc := ocispec.Descriptor{MediaType: ManifestType, Digest: godigest.FromBytes(body), Size: int64(len(body))}
	return c.repo.Manifests().PushReference(ctx, desc, bytes.NewReader(body), tag)
}

// pushBlob uploads b unless the registry has it. Pushes of one digest share
// one upload and, once it is done, are skipped: every manifest names the
// same empty config, and a registry that receives a blob again while it
// checks another manifest's references may call that blob unknown (the
// filesystem storage of the distribution registry rewrites the blob's link
// in place; seen in CI as "manifest blob unknown" for the empty config).
func (c *Cache) pushBlob(ctx context.Context, b []byte) error {
	desc := ocispec.Descriptor{MediaType: LayerMediaType, Digest: godigest.FromBytes(b), Size: int64(len(b))}
	if _, ok := c.pushed.Load(desc.Digest); ok {
		return nil
	}
	_, err, _ := c.uploads.Do(string(desc.Digest), func() (any, error) {
		if _, ok := c.pushed.Load(desc.Digest); ok {
			return nil, nil
		}
		ok, err := c.repo.Blobs().Exists(ctx, desc)
		if err == nil && !ok {
			err = c.repo.Blobs().Push(ctx, desc, bytes.NewReader(b))
		}
		if err == nil {
			c.pushed.Store(desc.Digest, struct{}{})
		}
		return nil, err
	})
	return err
}
