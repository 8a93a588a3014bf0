// Package lazyre holds regular expressions compiled on first use. Every
// fullsend process links the hook and scan packages, most processes run no
// hook and no scan, and their rules are dozens of patterns: compiled at
// package initialisation they cost every command several milliseconds.
//
// Patterns are constants of the packages that declare them. Each such
// package tests that all of its patterns compile (Compile) and that none is
// compiled during initialisation (Compiled, in a fresh process), so a bad
// pattern fails the tests, not a hook or a scan at run time.
package lazyre

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// Regexp is a regular expression compiled on its first use.
type Regexp struct {
	src  string
	once sync.Once
	re   atomic.Pointer[regexp.Regexp]
}

var (
	mu  sync.Mutex
	all []*Regexp
)

// New returns the pattern src, to be compiled on first use (a bad pattern
// panics then, as regexp.MustCompile does).
func New(src string) *Regexp {
	l := &Regexp{src: src}
	mu.Lock()
	all = append(all, l)
	mu.Unlock()
	return l
}

// All returns every pattern made with New in this process.
func All() []*Regexp {
	mu.Lock()
	defer mu.Unlock()
	return append([]*Regexp(nil), all...)
}

// Get compiles the pattern once and returns it.
func (l *Regexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re.Store(regexp.MustCompile(l.src)) })
	return l.re.Load()
}

// Compiled reports whether the pattern has been compiled yet.
func (l *Regexp) Compiled() bool { return l.re.Load() != nil }

// String returns the source of the pattern.
func (l *Regexp) String() string { return l.src }

func (l *Regexp) MatchString(s string) bool           { return l.Get().MatchString(s) }
func (l *Regexp) Match(b []byte) bool                 { return l.Get().Match(b) }
func (l *Regexp) FindIndex(b []byte) []int            { return l.Get().FindIndex(b) }
func (l *Regexp) FindStringIndex(s string) []int      { return l.Get().FindStringIndex(s) }
func (l *Regexp) ReplaceAllString(s, r string) string { return l.Get().ReplaceAllString(s, r) }
func (l *Regexp) Split(s string, n int) []string      { return l.Get().Split(s, n) }
func (l *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.Get().FindAllStringSubmatch(s, n)
}
