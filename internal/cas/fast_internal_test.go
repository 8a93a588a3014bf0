package cas

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestParseMetaFast: on what Put writes the direct decoder answers and
// agrees with encoding/json; everything else falls back to encoding/json.
func TestParseMetaFast(t *testing.T) {
	at := time.Date(2026, 11, 21, 21, 0, 0, 123456789, time.UTC)
	var good [][]byte
	for _, m := range []Metadata{
		{URL: "https://github.com/o/r/tree/main/x", FetchTime: at, SHA256: strings.Repeat("a", 64), Type: TypeDirectory},
		{URL: "https://example.test/a.md", FetchTime: at.In(time.FixedZone("x", 3600)), ContentType: "text/markdown; charset=utf-8", SHA256: strings.Repeat("b", 64), Type: TypeFile},
		{URL: "https://example.test/é/ü", SHA256: "x", Type: "other"},
	} {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		c, _ := json.Marshal(m)
		good = append(good, b, c)
	}
	for _, b := range good {
		got, ok := parseMetaFast(b)
		var want Metadata
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("parseMetaFast(%s) = %+v, %v; want %+v", b, got, ok, want)
		}
	}
	for _, s := range []string{
		``, `{}`, `null`, `{"url":"a"}`,
		`{"URL":"a","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file"}`,
		`{"url":"a\u0041","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file"}`,
		`{"url":"a","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file"}x`,
		`{"url":"a","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file","type":"directory"}`,
		`{"url":"a","fetch_time":"not a time","sha256":"x","type":"file"}`,
		`{"url":"a","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file","extra":1}`,
		`{"url":"a` + "\x01" + `","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file"}`,
		`{"url":"a` + "\xff" + `","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","type":"file"}`,
		`{"url":"a","fetch_time":"2026-01-01T00:00:00Z","sha256":"x","content_type":"t","type":"file"}`,
	} {
		if m, ok := parseMetaFast([]byte(s)); ok {
			t.Errorf("parseMetaFast(%q) = %+v: want it left to encoding/json", s, m)
		}
		got, gerr := parseMeta([]byte(s))
		var want Metadata
		werr := json.Unmarshal([]byte(s), &want)
		if !reflect.DeepEqual(got, want) || (gerr == nil) != (werr == nil) {
			t.Errorf("parseMeta(%q) = %+v, %v; json: %+v, %v", s, got, gerr, want, werr)
		}
	}
}

// TestFoldASCII: the ASCII fast path of fold answers what the Unicode
// orbit walk does, for every ASCII character and around the letters that
// fold to non-ASCII runes (K, S).
func TestFoldASCII(t *testing.T) {
	var all []byte
	for c := range 0x80 {
		all = append(all, byte(c))
	}
	for _, s := range []string{string(all), "skills/Kelvin/README.md", "ABC", "abc", "a/b/c", "", "\u212a", "s\u017f"} {
		if got, want := fold(s), foldUnicode(s); got != want {
			t.Errorf("fold(%q) = %q, want %q", s, got, want)
		}
	}
	for c := range rune(0x80) {
		if unicode.SimpleFold(c) != c && !(('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			t.Errorf("ASCII %q folds: the fast path assumes only letters do", c)
		}
	}
}
