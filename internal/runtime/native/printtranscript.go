package native

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// Bounds of `runs show --transcript`: a tool result shows at most this
// many lines and bytes (the whole output stays in the run directory), a
// tool call's arguments at most transcriptArgBytes.
const (
	transcriptResultLines = 12
	transcriptResultBytes = 1200
	transcriptArgBytes    = 400
)

var _ runtime.TranscriptPrinter = (*Runtime)(nil)

// PrintTranscript implements runtime.TranscriptPrinter: the conversation
// of run id in runDir (transcript.jsonl), read and checked as --resume
// reads it (this user's MAC chain, no symlink), for people.
func (r *Runtime) PrintTranscript(w io.Writer, id, runDir string) error {
	recs, err := ReadTranscript(runDir)
	if err != nil {
		return err
	}
	writeTranscript(w, id, recs)
	return nil
}

// oneLine is s sanitised for a terminal on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(termsafe.Sanitize(s)), " ")
}

// writeTranscript prints recs for people. Everything in a transcript is
// untrusted (the model's text, tool output from the sandbox): it all goes
// through package termsafe, header fields on one line, bodies indented so
// that no body line can pass for a header.
func writeTranscript(w io.Writer, id string, recs []Record) {
	sw := termsafe.SafeWriter(w)
	one := oneLine
	fmt.Fprintf(sw, "transcript of run %s\n", one(id))
	for _, r := range recs {
		switch r.Type {
		case RecStart:
			if r.Model != nil {
				fmt.Fprintf(sw, "model:  %s (%s)\n", one(r.Model.Model), one(string(r.Model.API)))
			}
			fmt.Fprintf(sw, "tools:  %s\n", one(strings.Join(r.Tools, ", ")))
			fmt.Fprintf(sw, "system: %d bytes\n", len(r.System))
		case RecResume:
			fmt.Fprintln(sw, "\n[resumed]")
		case RecSnapshot:
			if sn := r.Snapshot; sn != nil {
				fmt.Fprintf(sw, "\n[workspace snapshot] %s (%d bytes)\n", one(sn.File), sn.Size)
			}
		case RecCompaction:
			if c := r.Compaction; c != nil {
				fmt.Fprintf(sw, "\n[compacted] %d earlier messages replaced by a summary at %d input tokens (whole tool outputs kept: %s)\n", c.Dropped, c.InputTokens, one(strings.Join(c.ToolOutputs, ", ")))
				writeIndented(sw, c.Summary)
			}
		case RecStop:
			fmt.Fprintf(sw, "\n[stop] %s", one(r.Stop))
			if r.Error != "" {
				fmt.Fprintf(sw, ": %s", one(r.Error))
			}
			fmt.Fprintln(sw)
		case RecMessage:
			if r.Message != nil {
				writeTranscriptMessage(sw, r)
			}
		}
	}
}

func writeTranscriptMessage(w io.Writer, r Record) {
	one := oneLine
	m := r.Message
	switch m.Role {
	case model.RoleUser:
		fmt.Fprintln(w, "\n[user]")
	case model.RoleAssistant:
		fmt.Fprintf(w, "\n[assistant] turn %d", r.Turn)
		if u := r.Usage; u != nil {
			fmt.Fprintf(w, ", %d input / %d output tokens", u.InputTokens, u.OutputTokens)
			if u.CacheReadInputTokens > 0 || u.CacheCreationInputTokens > 0 {
				fmt.Fprintf(w, " (cache: %d read, %d written)", u.CacheReadInputTokens, u.CacheCreationInputTokens)
			}
		}
		if r.Stop != "" {
			fmt.Fprintf(w, ", stop %s", one(r.Stop))
		}
		fmt.Fprintln(w)
	case model.RoleTool:
		fmt.Fprintf(w, "\n[tool result] %s", one(m.ToolCallID))
		if t := r.Tool; t != nil {
			fmt.Fprintf(w, " %s, call %d, %.1f ms", one(t.Name), t.N, t.DurationMS)
			if t.Blocked != "" {
				fmt.Fprintf(w, ", blocked by %s", one(t.Blocked))
			}
		}
		if m.IsError {
			fmt.Fprint(w, ", error")
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprintf(w, "\n[%s]\n", one(string(m.Role)))
	}
	if m.Reasoning != "" {
		fmt.Fprintf(w, "  (reasoning: %d bytes)\n", len(m.Reasoning))
	}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case model.BlockText:
			text.WriteString(b.Text)
		case model.BlockImage:
			fmt.Fprintf(w, "  (image %s, %d bytes, %s)\n", one(b.MediaType), b.Size, one(b.File))
		}
	}
	body := text.String()
	if m.Role == model.RoleTool {
		file := ""
		if r.Tool != nil {
			file = r.Tool.OutputFile
		}
		body = cutToolResult(body, file)
	}
	writeIndented(w, body)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(w, "  -> call %s %s %s\n", one(tc.ID), one(tc.Name), one(cutBytes(tc.Arguments, transcriptArgBytes)))
	}
}

// writeIndented writes text with each line indented by two spaces.
func writeIndented(w io.Writer, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimRight(line, "\r"))
	}
}

// cutToolResult keeps the first transcriptResultLines lines and at most
// transcriptResultBytes bytes of s, saying how much was left out and
// where the whole output is.
func cutToolResult(s, file string) string {
	cut := s
	if lines := strings.SplitAfterN(cut, "\n", transcriptResultLines+1); len(lines) > transcriptResultLines {
		cut = strings.Join(lines[:transcriptResultLines], "")
	}
	cut = cutBytes(cut, transcriptResultBytes)
	if len(cut) == len(s) {
		return s
	}
	more := fmt.Sprintf("... %d more bytes", len(s)-len(cut))
	if file != "" {
		more += " (whole output: " + file + ")"
	}
	return strings.TrimRight(cut, "\n") + "\n" + more
}

// cutBytes returns at most n bytes of s, cut on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
