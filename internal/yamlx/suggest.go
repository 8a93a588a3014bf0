package yamlx

import (
	"maps"
	"slices"
)

// Suggest returns the candidate closest to word when it is close enough to
// be a likely misspelling (an edit distance of at most a third of word's
// length, at least 1, at most 3), else "". Ties go to the first in sorted
// order, so the answer is deterministic.
func Suggest(word string, candidates []string) string {
	limit := min(max(len(word)/3, 1), 3)
	best, bestD := "", limit+1
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		if c == word {
			continue
		}
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes), with
// a swap of two adjacent bytes counted as one edit.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Unknown is the error for the key of e that the mapping's struct has no
// field for: ErrUnknownField at the key, with "did you mean K?" when a
// known key K is a likely misspelling of it.
func (f *Fields) Unknown(e Entry) *Error {
	if s := Suggest(e.Key.Value, f.known); s != "" {
		return Errorf(f.File, e.Key, f.Field(e.Key.Value), ErrUnknownField, "did you mean %s?", s)
	}
	return Errorf(f.File, e.Key, f.Field(e.Key.Value), ErrUnknownField, "")
}

// knownKeys lists a schema's keys.
func (s *schema) knownKeys() []string { return slices.Collect(maps.Keys(s.keys)) }

// Known returns the keys of the struct the mapping decodes into.
func (f *Fields) Known() []string { return slices.Clone(f.known) }
