package scan

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// lazyRE is a regular expression compiled on first use: every fullsend
// process links this package, most never scan, and the injection rules are
// dozens of patterns. TestLazyPatternsCompile compiles them all, so a bad
// one fails the tests, not a scan.
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

func (l *lazyRE) FindIndex(b []byte) []int { return l.get().FindIndex(b) }
func (l *lazyRE) Match(b []byte) bool      { return l.get().Match(b) }
func (l *lazyRE) String() string           { return l.src }
