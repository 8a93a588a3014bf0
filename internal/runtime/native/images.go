package native

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/model"
)

// MaxPromptImages bounds the images attached to the first user message.
const MaxPromptImages = 8

// parseExtraOptions reads the web_fetch and images options.
func (r *Runtime) parseExtraOptions(o map[string]string, ro *runOptions) error {
	switch v := o[OptWebFetch]; v {
	case "", "false":
	case "true":
		if r.web == nil {
			return fmt.Errorf("option %s: web_fetch is not configured (no egress allowlist or scan pipeline given)", OptWebFetch)
		}
		ro.webFetch = true
	default:
		return fmt.Errorf("option %s: %q is not true or false", OptWebFetch, v)
	}
	for _, p := range strings.Split(o[OptImages], "\n") {
		if p = strings.TrimSpace(p); p != "" {
			ro.images = append(ro.images, p)
		}
	}
	if len(ro.images) > MaxPromptImages {
		return fmt.Errorf("option %s: %d images, at most %d", OptImages, len(ro.images), MaxPromptImages)
	}
	return nil
}

// promptImages reads the prompt images (host files the runner checked to
// lie inside the target repository), verifies their type by content and
// their size, and keeps a copy in images/prompt-<k>.<ext>: the transcript
// records the path, media type, size and sha256 and never the pixels; a
// resumed run re-reads the copy and re-verifies its sha256 (loadImages).
// Images are numbered from first (a chat's later messages go on counting).
func promptImages(rd *runDir, paths []string, first int) ([]model.Block, error) {
	var out []model.Block
	for i, p := range paths {
		k := first - 1 + i
		data, err := readImageFile(p)
		if err != nil {
			return nil, err
		}
		mt := http.DetectContentType(data)
		ext, ok := imageExt[mt]
		if !ok {
			return nil, fmt.Errorf("image %s: %s is not png, jpeg, gif or webp", p, mt)
		}
		rel, err := rd.writePromptImage(k+1, ext, data)
		if err != nil {
			return nil, fmt.Errorf("image %s: keeping a copy in the run directory: %w", p, err)
		}
		sum := sha256Hex(data)
		out = append(out, model.TextBlock(fmt.Sprintf("[attached image %d: %s (%s, %d bytes, sha256 %s)]", k+1, p, mt, len(data), sum)),
			model.Block{Type: model.BlockImage, MediaType: mt, Data: base64.StdEncoding.EncodeToString(data), SHA256: sum, Size: len(data), File: rel})
	}
	return out, nil
}

func readImageFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", p, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("image %s: not a regular file", p)
	}
	data, err := limit.ReadAll(f, MaxImageBytes)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", p, err)
	}
	return data, nil
}

// writePromptImage stores prompt image k as images/prompt-<k><ext>.
func (r *runDir) writePromptImage(k int, ext string, data []byte) (string, error) {
	if err := r.d.MkdirAll(ImagesDir, 0o700); err != nil {
		return "", err
	}
	rel := filepath.ToSlash(filepath.Join(ImagesDir, "prompt-"+strconv.Itoa(k)+ext))
	return rel, r.d.WriteAtomic(rel, data, 0o600)
}
