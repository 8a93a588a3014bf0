package progress

import (
	"io"
	"os"

	"github.com/mattn/go-runewidth"
	"github.com/mitchellh/colorstring"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// liveLine is the status line of Live mode: an indeterminate
// progressbar (a spinner and a description) in ANSI mode. Every call
// happens under the Reporter's mutex, and the bar runs no goroutine of its
// own (no spinner interval): the Reporter's ticker redraws it.
type liveLine struct {
	w     io.Writer
	o     Options
	bar   *progressbar.ProgressBar
	shown bool
	stop  chan struct{}
}

func newLiveLine(w io.Writer, o Options) *liveLine {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(0),
		progressbar.OptionSetRenderBlankState(false),
	}
	return &liveLine{w: w, o: o, bar: progressbar.NewOptions64(-1, opts...), stop: make(chan struct{})}
}

// show redraws the line with text (already sanitised), cut to the
// terminal's width so that it never wraps (a wrapped line could not be
// redrawn in place).
func (l *liveLine) show(text string) {
	width := l.o.Width
	if width <= 0 {
		width = 80
		if f, ok := l.w.(*os.File); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				width = w
			}
		}
	}
	// The bar adds the spinner and three spaces; "fullsend " is ours.
	room := max(width-14, 10)
	text = runewidth.Truncate(text, room, "…")
	prefix := "fullsend "
	if l.o.Color {
		prefix = colorize("[cyan]fullsend[reset] ")
	}
	l.bar.Describe(prefix + text)
	l.shown = true
}

// clear erases the line (the cursor goes back to its start).
func (l *liveLine) clear() {
	if l.shown {
		_ = l.bar.Clear()
		l.shown = false
	}
}

// close stops the ticker and retires the bar.
func (l *liveLine) close() {
	close(l.stop)
	_ = l.bar.Exit()
}

var painter = &colorstring.Colorize{Colors: colorstring.DefaultColors, Reset: false}

// colorize turns our own markup ("[yellow]warning:[reset]") into SGR
// sequences. Only static strings of this package go through it.
func colorize(s string) string { return painter.Color(s) }
