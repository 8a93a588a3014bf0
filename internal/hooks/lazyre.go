package hooks

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// lazyRE is a regular expression compiled on first use, so that starting
// the fullsend binary for a command that runs no hook (or one hook) does
// not pay for compiling every hook's patterns at package initialisation.
// Every pattern is a constant of this package; TestLazyPatternsCompile
// compiles them all, so a bad one fails the tests, not a hook at run time.
type lazyRE struct {
	src  string
	once sync.Once
	re   atomic.Pointer[regexp.Regexp]
}

// lazyPatterns lists every lazyRE of the package (for the tests).
var lazyPatterns []*lazyRE

func lazyRegexp(src string) *lazyRE {
	l := &lazyRE{src: src}
	lazyPatterns = append(lazyPatterns, l)
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re.Store(regexp.MustCompile(l.src)) })
	return l.re.Load()
}

// compiled reports whether the pattern has been compiled yet.
func (l *lazyRE) compiled() bool { return l.re.Load() != nil }

func (l *lazyRE) MatchString(s string) bool           { return l.get().MatchString(s) }
func (l *lazyRE) FindStringIndex(s string) []int      { return l.get().FindStringIndex(s) }
func (l *lazyRE) ReplaceAllString(s, r string) string { return l.get().ReplaceAllString(s, r) }
func (l *lazyRE) Split(s string, n int) []string      { return l.get().Split(s, n) }
func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
