package cli

import (
	"fmt"
	"io"
	"strings"

	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// showTranscript prints the conversation of run id (report r) through its
// runtime (runtime.TranscriptPrinter: the native runtime's
// transcript.jsonl, checked as --resume checks it).
func showTranscript(w io.Writer, id string, r *runpkg.Report) error {
	var tp runtime.TranscriptPrinter
	if rt, err := builtin.Get(r.Runtime); err == nil {
		tp, _ = rt.(runtime.TranscriptPrinter)
	}
	if tp == nil {
		var printers []string
		for _, n := range builtin.Names() {
			if rt, _ := builtin.Get(n); rt != nil {
				if _, ok := rt.(runtime.TranscriptPrinter); ok {
					printers = append(printers, n)
				}
			}
		}
		return fmt.Errorf("run %s: --transcript reads the %s runtime's transcript; this run used runtime %q (its raw transcript.jsonl is in %s)",
			id, strings.Join(printers, ", "), termsafe.Sanitize(r.Runtime), r.Dir())
	}
	if err := tp.PrintTranscript(w, id, r.Dir()); err != nil {
		return fmt.Errorf("run %s: %w", id, err)
	}
	return nil
}
