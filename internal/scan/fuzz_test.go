package scan

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func fuzzSeeds(f *testing.F) {
	for _, tc := range ruleCases {
		f.Add([]byte(tc.content))
	}
	for _, s := range benignCases {
		f.Add([]byte(s))
	}
	f.Add([]byte("\xff\xfe\x00 invalid \xc3 utf8 \u202e\n\n\r\n"))
	f.Add([]byte("<!-- unterminated " + override))
	f.Add([]byte("http://[::ffff:169.254.169.254 http://@ http://0x http:// ://x"))
	// The evasion corpora: disguises, splits, nested encodings.
	for _, dir := range []string{"evasion", "heldout"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, c := range strings.Split(string(b), "=== ") {
				f.Add([]byte(c))
			}
		}
	}
}

// FuzzScanners: no scanner panics; every finding's line and column lie
// inside the content; excerpts and messages are valid UTF-8 with hidden runes
// made visible; normalisation keeps its offset map consistent.
func FuzzScanners(f *testing.F) {
	fuzzSeeds(f)
	sec, err := NewSecretsScanner()
	if err != nil {
		f.Fatal(err)
	}
	scanners := []Scanner{NewUnicodeScanner(), NewInjectionScanner(), NewSSRFScanner(nil), sec}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		for _, s := range scanners {
			fs, err := s.Scan(context.Background(), data, Meta{Path: "fuzz"})
			if err != nil {
				t.Fatalf("%s: %v", s.Name(), err)
			}
			for _, f := range fs {
				if f.Line < 1 || f.Line > len(lines) {
					t.Fatalf("%s %s: line %d of %d", s.Name(), f.Rule, f.Line, len(lines))
				}
				if n := utf8.RuneCount(lines[f.Line-1]); f.Column < 1 || f.Column > n+1 {
					t.Fatalf("%s %s: column %d of %d", s.Name(), f.Rule, f.Column, n+1)
				}
				if !utf8.ValidString(f.Excerpt) || !utf8.ValidString(f.Message) {
					t.Fatalf("%s %s: invalid UTF-8 %q %q", s.Name(), f.Rule, f.Excerpt, f.Message)
				}
				for _, r := range f.Excerpt {
					if hiddenRune(r) && r != utf8.RuneError {
						t.Fatalf("%s %s: hidden rune U+%04X in excerpt %q", s.Name(), f.Rule, r, f.Excerpt)
					}
				}
			}
		}
		norm, offs := normalize(data, 7)
		if len(norm) != len(offs) {
			t.Fatalf("normalize: %d bytes, %d offsets", len(norm), len(offs))
		}
		for i, o := range offs {
			if o < 7 || o >= 7+len(data) || (i > 0 && o < offs[i-1]) {
				t.Fatalf("normalize: offset %d at %d out of order or range", o, i)
			}
		}
	})
}

// FuzzSecretsPrefilter: the secrets prefilter never hides a match. For a
// single line, every rule whose regular expression matches it must be
// admitted by some keyword occurrence (keyword present, cheap check true).
func FuzzSecretsPrefilter(f *testing.F) {
	fuzzSeeds(f)
	for _, s := range []string{
		"api_key = \"" + fakeGeneric + "\"", "token:" + fakeGeneric, "jira_token => 'abcdefghij0123456789ABCD'",
		"x s.abcdefghijklmnopqrstuvwx y", "eyJhbGciOiJIUzI1NiJ9x.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijkl",
		"SK0123456789abcdef0123456789abcdef", "curl -H 'X-Api-Key: abcdefgh12345' https://x", "curl -u user:passw0rd https://x",
		"kind: Secret\ndata:\n  pw: c2VjcmV0cGFzc3dvcmQ=",
	} {
		f.Add([]byte(s))
	}
	e, err := sharedSecrets()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 600 {
			return
		}
		admitted := map[int]bool{}
		e.kw.find(data, func(off, k int) {
			kwEnd := off + len(e.kw.kws[k])
			for _, ri := range e.kwRules[k] {
				if pf := e.prefilter(ri); pf.check == nil || !pf.checkKW[e.kw.kws[k]] || pf.check(data, kwEnd) {
					admitted[ri] = true
				}
			}
		})
		for ri, r := range e.rules {
			if e.prefilter(ri).check == nil || admitted[ri] || len(r.Keywords) == 0 {
				continue
			}
			if strings.Contains(string(data), "\n") && e.wide[ri] == 0 {
				continue // single-line rules are judged on single lines
			}
			m := r.Regex.Get().FindSubmatch(data)
			if m == nil {
				continue
			}
			// gitleaks reports a match only when its secret group has the
			// rule's minimum entropy; a refused match below it loses nothing.
			if r.Entropy > 0 && shannon(secretGroup(m, r.SecretGroup)) <= r.Entropy {
				continue
			}
			t.Fatalf("rule %s matches %q but the prefilter refused it", r.RuleID, data)
		}
	})
}

// secretGroup is the capture gitleaks treats as the secret: the rule's
// SecretGroup, else the first non-empty group, else the whole match.
func secretGroup(m [][]byte, group int) []byte {
	if group > 0 && group < len(m) {
		return m[group]
	}
	for _, g := range m[1:] {
		if len(g) > 0 {
			return g
		}
	}
	return m[0]
}

// shannon is the Shannon entropy of b in bits per byte.
func shannon(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var n [256]int
	for _, c := range b {
		n[c]++
	}
	var h float64
	for _, k := range n {
		if k > 0 {
			p := float64(k) / float64(len(b))
			h -= p * math.Log2(p)
		}
	}
	return h
}
