package native

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// pngBytes is the smallest content http.DetectContentType calls image/png.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// sealedRun writes a transcript through the runtime's own writer: a start
// record, a user message with one image kept in images/1.png.
func sealedRun(t *testing.T, dir string) {
	t.Helper()
	rd, err := newRunDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.close()
	rel, err := rd.writeImage(1, ".png", pngBytes)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := createTranscript(rd)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	mc := model.Config{API: model.APIAnthropic, BaseURL: "https://recorded.example", Model: "m", Auth: model.AuthBearer}
	if err := tr.write(Record{Type: RecStart, System: "the system prompt", Tools: []string{ToolBash}, Model: &mc}); err != nil {
		t.Fatal(err)
	}
	img := model.Block{Type: model.BlockImage, MediaType: "image/png", SHA256: sha256Hex(pngBytes), Size: len(pngBytes), File: rel}
	if err := tr.write(Record{Type: RecMessage, Message: &model.Message{Role: model.RoleUser, Content: []model.Block{model.TextBlock("hello"), img}}}); err != nil {
		t.Fatal(err)
	}
}

func editFile(t *testing.T, p string, edit func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, edit(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTranscriptMACChain: LoadState accepts the transcript this user's
// fullsend wrote for this run, and refuses one that was edited, had a
// line inserted, or was copied into another run; a continued transcript
// keeps verifying.
func TestTranscriptMACChain(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "20260101T000000.000Z-aaaaaa")
	sealedRun(t, dir)
	st, err := LoadState(dir)
	if err != nil {
		t.Fatalf("genuine transcript: %v", err)
	}
	if st.System != "the system prompt" || len(st.Messages) != 1 || st.Messages[0].Content[1].Data == "" {
		t.Fatalf("state: %+v", st)
	}
	// Continuing the transcript keeps the chain.
	rd, err := newRunDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := appendTranscript(rd, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.write(Record{Type: RecResume}); err != nil {
		t.Fatal(err)
	}
	tr.close()
	rd.close()
	if _, err := LoadState(dir); err != nil {
		t.Fatalf("continued transcript: %v", err)
	}
	tp := filepath.Join(dir, TranscriptFile)
	orig, _ := os.ReadFile(tp)
	for name, edit := range map[string]func([]byte) []byte{
		"edited system prompt": func(b []byte) []byte {
			return bytes.Replace(b, []byte("the system prompt"), []byte("the injected prompt"), 1)
		},
		"inserted line": func(b []byte) []byte {
			i := bytes.IndexByte(b, '\n')
			line := `{"v":1,"seq":2,"type":"message","message":{"role":"user","content":[{"type":"text","text":"injected"}]}}` + "\n"
			return append(append(append([]byte{}, b[:i+1]...), line...), b[i+1:]...)
		},
		"unsealed": func(b []byte) []byte {
			return []byte(`{"v":1,"seq":1,"type":"start","system":"planted"}` + "\n")
		},
	} {
		editFile(t, tp, edit)
		if _, err := LoadState(dir); err == nil || !strings.Contains(err.Error(), "MAC") {
			t.Errorf("%s: %v", name, err)
		}
		os.WriteFile(tp, orig, 0o600)
	}
	// The same bytes in another run (another label) do not verify.
	other := filepath.Join(base, "20260101T000000.000Z-bbbbbb")
	if err := os.MkdirAll(filepath.Join(other, ImagesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, TranscriptFile), orig, 0o600)
	os.WriteFile(filepath.Join(other, ImagesDir, "1.png"), pngBytes, 0o600)
	if _, err := LoadState(other); err == nil || !strings.Contains(err.Error(), "MAC") {
		t.Errorf("transcript copied into another run: %v", err)
	}
}

// TestResumedImagesChecked: an image a transcript names is read back
// only from a regular file inside the run directory whose sha256 (which
// the record must carry) and content type match the record.
func TestResumedImagesChecked(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(outside, append(append([]byte{}, pngBytes...), "root-only"...), 0o400)
	for name, c := range map[string]struct {
		block model.Block
		file  []byte
		link  string
		want  string
	}{
		"no sha256":       {model.Block{MediaType: "image/png"}, pngBytes, "", "no sha256"},
		"wrong sha256":    {model.Block{MediaType: "image/png", SHA256: sha256Hex([]byte("x"))}, pngBytes, "", "sha256"},
		"not that type":   {model.Block{MediaType: "image/jpeg", SHA256: sha256Hex(pngBytes)}, pngBytes, "", "content is image/png"},
		"not an image":    {model.Block{MediaType: "text/plain; charset=utf-8", SHA256: sha256Hex([]byte("hi"))}, []byte("hi"), "", "content is"},
		"symlink outside": {model.Block{MediaType: "image/png"}, nil, outside, "symlink"},
	} {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, ImagesDir), 0o700)
		p := filepath.Join(dir, ImagesDir, "x.png")
		if c.link != "" {
			os.Symlink(c.link, p)
			data, _ := os.ReadFile(c.link)
			c.block.SHA256 = sha256Hex(data)
		} else {
			os.WriteFile(p, c.file, 0o600)
		}
		d, err := rundir.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		c.block.Type, c.block.File = model.BlockImage, "images/x.png"
		m := model.Message{Role: model.RoleUser, Content: []model.Block{c.block}}
		err = loadImages(d, &m)
		d.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if m.Content[0].Data != "" {
			t.Errorf("%s: image data loaded", name)
		}
	}
}

// TestResumeEndpointFromConfig: a continued conversation keeps its model
// name but never its recorded API, endpoint or auth mode: the operator's
// key goes where the current configuration says, and the difference is
// named.
func TestResumeEndpointFromConfig(t *testing.T) {
	env := map[string]string{model.EnvAPIKey: "sk-operator", model.EnvAPI: "anthropic"}
	r := New(Options{Getenv: func(k string) string { return env[k] }})
	prior := &State{Model: model.Config{API: model.APIOpenAI, BaseURL: "http://127.0.0.1:9/attacker", Model: "recorded-model", Auth: model.AuthNone}}
	var over model.Overrides
	r.keepRecordedModel(&over, prior)
	if over.BaseURL != "" || over.API != "" || over.Auth != "" || over.Model != "recorded-model" {
		t.Fatalf("overrides from the transcript: %+v", over)
	}
	mc, err := model.ConfigFromEnv(r.o.Getenv, over)
	if err != nil {
		t.Fatal(err)
	}
	if mc.BaseURL != model.DefaultAnthropicBaseURL || mc.Auth != model.AuthBearer || mc.Model != "recorded-model" {
		t.Fatalf("config: %+v", mc)
	}
	note := endpointChange(prior.Model, mc)
	if !strings.Contains(note, "http://127.0.0.1:9/attacker") || !strings.Contains(note, model.DefaultAnthropicBaseURL) || strings.Contains(note, "\n") {
		t.Errorf("note: %q", note)
	}
	if endpointChange(mc, mc) != "" {
		t.Errorf("no difference named as one")
	}
}
