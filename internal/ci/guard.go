package ci

import (
	"io"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Marker is put in front of a line that would otherwise be read as a
// workflow command: the line is shown, but as text.
const Marker = `\`

// Guard is an io.Writer in front of fullsend's stdout or stderr in CI. The
// runner reads every line of both streams and treats one that starts
// (after leading white space) with "::" — or the older "##[" form — as a
// workflow command: ::set-output, ::add-mask, ::stop-commands,
// ::add-path… Text fullsend prints may carry untrusted bytes (an error
// quoting a file of the target repository, an agent's message, a finding),
// so Guard prefixes every such line with Marker. Lines end at LF and at a
// lone CR (the runner splits on both). Fullsend's own commands go through
// Command, which bypasses the filter.
//
// A line is held back only while it is still undecided: at most its
// leading white space and the first two or three bytes.
type Guard struct {
	mu sync.Mutex
	w  io.Writer
	// start: the next byte begins a line (or follows only white space
	// since the line began); pend holds those undecided bytes.
	start bool
	pend  []byte
}

// NewGuard filters w.
func NewGuard(w io.Writer) *Guard { return &Guard{w: w, start: true} }

// Fd passes the underlying file's descriptor through, so terminal checks
// still see the real stream.
func (g *Guard) Fd() uintptr {
	if f, ok := g.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Write filters p; it reports len(p) written when the underlying writes
// succeed.
func (g *Guard) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []byte
	i := 0
	for i < len(p) {
		if !g.start {
			// Copy through the end of the line.
			j := i
			for j < len(p) && p[j] != '\n' && p[j] != '\r' {
				j++
			}
			if j < len(p) {
				j++
				g.start = true
			}
			out = append(out, p[i:j]...)
			i = j
			continue
		}
		g.pend = append(g.pend, p[i])
		i++
		switch decide(g.pend) {
		case undecided:
			continue
		case command:
			out = append(out, Marker...)
		}
		out = append(out, g.pend...)
		last := g.pend[len(g.pend)-1]
		g.pend = g.pend[:0]
		g.start = last == '\n' || last == '\r'
	}
	if len(out) > 0 {
		if _, err := g.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Command writes line (a workflow command fullsend built, without its
// newline) as a line of its own, unfiltered: an undecided partial line is
// ended first.
func (g *Guard) Command(line string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []byte
	if len(g.pend) > 0 {
		out = append(out, g.pend...)
		g.pend = g.pend[:0]
		out = append(out, '\n')
	} else if !g.start {
		out = append(out, '\n')
	}
	out = append(out, line...)
	out = append(out, '\n')
	g.start = true
	_, err := g.w.Write(out)
	return err
}

// Flush writes an undecided partial line as it is (end of output: nothing
// can follow that would make it a command line).
func (g *Guard) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pend) == 0 {
		return nil
	}
	_, err := g.w.Write(g.pend)
	g.start = false
	g.pend = g.pend[:0]
	return err
}

type verdict int

const (
	undecided verdict = iota
	text
	command
)

// decide classifies the bytes a line has begun with: leading white space
// (as the runner trims it: Unicode white space, which excludes LF and CR,
// the line ends), then "::" or "##[".
func decide(b []byte) verdict {
	i := 0
	for i < len(b) {
		c := b[i]
		if c == '\n' || c == '\r' {
			return text // an empty or all-blank line
		}
		if c < utf8.RuneSelf {
			if c != ' ' && c != '\t' && c != '\v' && c != '\f' {
				break
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			return undecided
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	rest := b[i:]
	if len(rest) == 0 {
		return undecided
	}
	for _, prefix := range []string{"::", "##["} {
		if len(rest) >= len(prefix) {
			if string(rest[:len(prefix)]) == prefix {
				return command
			}
			continue
		}
		if string(rest) == prefix[:len(rest)] {
			return undecided
		}
	}
	return text
}
