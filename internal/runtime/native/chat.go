package native

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// A chat (Options["chat"]="true", package chat) is one conversation kept
// in RunDir across calls to Run: the first call starts the transcript with
// Prompt as the first user message, every later call (in this process or
// a new one) rebuilds the conversation with LoadState and continues it
// with Prompt, and the images of Options["images"], as the next user
// message. Each call gets a fresh turn and output-token budget on top of
// what the conversation used, and its Outcome counts that call alone.

// hasTranscript reports whether dir holds a transcript to continue.
func hasTranscript(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, TranscriptFile))
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}

// addChatMessage appends the chat's next user message (Prompt and the
// images, numbered after those already kept) to a continued loop.
func (r *Runtime) addChatMessage(in runtime.RunInput, ro runOptions, d loopDeps, l *loop, turn int) error {
	images, err := promptImages(d.rd, ro.images, countPromptImages(in.RunDir)+1)
	if err != nil {
		return &runtime.Error{Runtime: Name, Op: "images", Err: err}
	}
	content := append([]model.Block{model.TextBlock(in.Prompt)}, images...)
	if err := l.addMessage(model.Message{Role: model.RoleUser, Content: content}, Record{Turn: turn}); err != nil {
		return &runtime.Error{Runtime: Name, Op: "run", Err: err}
	}
	return nil
}

// countPromptImages counts the prompt images kept in dir/images.
func countPromptImages(dir string) int {
	ents, err := os.ReadDir(filepath.Join(dir, ImagesDir))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "prompt-") {
			n++
		}
	}
	return n
}
