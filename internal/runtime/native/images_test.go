package native

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
)

func TestPromptImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	for _, api := range dialects {
		t.Run(string(api), func(t *testing.T) {
			h := newHarnessEnv(t, api, modeltest.Say("seen"))
			img := filepath.Join(t.TempDir(), "shot.png")
			writeHostFile(t, img, string(png))
			if _, err := h.run(context.Background(), h.input(map[string]string{OptImages: img})); err != nil {
				t.Fatal(err)
			}
			first := h.srv.Requests()[0].Decoded.Messages[0]
			var got *model.Block
			for i, b := range first.Content {
				if b.Type == model.BlockImage {
					got = &first.Content[i]
				}
			}
			if got == nil || got.MediaType != "image/png" || got.Data == "" || !strings.Contains(first.Text(), img) {
				t.Fatalf("first message: %s", mustJSON(first))
			}
			data, _ := os.ReadFile(filepath.Join(h.runDir, TranscriptFile))
			for _, want := range []string{`"file":"images/prompt-1.png"`, `"sha256":"` + sha256Hex(png), `"media_type":"image/png"`, img} {
				if !strings.Contains(string(data), want) {
					t.Errorf("transcript lacks %s", want)
				}
			}
			if strings.Contains(string(data), `"data":"iVBOR`) {
				t.Error("transcript keeps pixels")
			}
			// Resume re-reads the copy and checks its sha256.
			if err := os.WriteFile(filepath.Join(h.runDir, "images", "prompt-1.png"), append(png, 0), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadState(h.runDir); err == nil || !strings.Contains(err.Error(), "sha256") {
				t.Fatalf("tampered image on resume: %v", err)
			}
		})
	}
	h := newHarnessEnv(t, model.APIOpenAI, modeltest.Say("x"))
	txt := filepath.Join(t.TempDir(), "notes.png")
	writeHostFile(t, txt, "just text")
	if _, err := h.run(context.Background(), h.input(map[string]string{OptImages: txt})); err == nil || !strings.Contains(err.Error(), "is not png") {
		t.Fatalf("text as image: %v", err)
	}
}
