package gitleaksdiff

import (
	"math/rand"
	"regexp/syntax"
	"strings"
	"unicode"
)

// sampler writes strings matching a regular expression, choosing
// repetitions, alternatives and characters with a seeded generator. With
// flat set, every character class yields its first printable member, so
// secrets come out with low entropy (near misses for entropy floors).
type sampler struct {
	rng  *rand.Rand
	flat bool
}

// sample returns a string generated from src, or false when src does not
// parse.
func (s *sampler) sample(src string) (string, bool) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return "", false
	}
	var sb strings.Builder
	s.gen(&sb, re.Simplify())
	return sb.String(), true
}

func (s *sampler) gen(sb *strings.Builder, re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 && s.rng.Intn(2) == 0 {
				r = unicode.SimpleFold(r)
			}
			sb.WriteRune(r)
		}
	case syntax.OpCharClass:
		sb.WriteRune(s.pick(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		// often a dot: rules write host names with unescaped dots
		if s.rng.Intn(2) == 0 {
			sb.WriteByte('.')
		} else {
			sb.WriteRune(s.pick([]rune{'a', 'z', 'A', 'Z', '0', '9'}))
		}
	case syntax.OpCapture:
		s.gen(sb, re.Sub[0])
	case syntax.OpStar:
		s.repeat(sb, re.Sub[0], 0, 3)
	case syntax.OpPlus:
		s.repeat(sb, re.Sub[0], 1, 4)
	case syntax.OpQuest:
		s.repeat(sb, re.Sub[0], 0, 1)
	case syntax.OpRepeat:
		hi := re.Max
		if hi < 0 || hi > re.Min+24 {
			hi = re.Min + 24
		}
		s.repeat(sb, re.Sub[0], re.Min, hi)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			s.gen(sb, sub)
		}
	case syntax.OpAlternate:
		s.gen(sb, re.Sub[s.rng.Intn(len(re.Sub))])
	}
	// empty-width operators (anchors, word boundaries) write nothing
}

func (s *sampler) repeat(sb *strings.Builder, re *syntax.Regexp, lo, hi int) {
	n := lo + s.rng.Intn(hi-lo+1)
	for i := 0; i < n; i++ {
		s.gen(sb, re)
	}
}

// pick chooses a rune of the class (pairs of inclusive ranges), preferring
// printable ASCII (space for whitespace) so the samples read like text
// and stay on one line unless the class allows nothing else.
func (s *sampler) pick(ranges []rune) rune {
	var ascii []rune
	for k := 0; k+1 < len(ranges); k += 2 {
		for r := max(ranges[k], ' '); r <= ranges[k+1] && r <= '~'; r++ {
			ascii = append(ascii, r)
		}
	}
	if len(ascii) > 0 {
		if s.flat {
			return ascii[0]
		}
		return ascii[s.rng.Intn(len(ascii))]
	}
	if len(ranges) == 0 {
		return 'x'
	}
	k := 2 * s.rng.Intn(len(ranges)/2)
	if s.flat {
		return ranges[k]
	}
	lo, hi := ranges[k], min(ranges[k+1], ranges[k]+64)
	return lo + rune(s.rng.Intn(int(hi-lo+1)))
}
