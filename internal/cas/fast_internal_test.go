package cas

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"
)

// TestParseMeta: metadata.json decodes to its fields by name, in any key
// order, content_type optional (entries written before it was recorded);
// what is not one JSON object of that shape is an error.
func TestParseMeta(t *testing.T) {
	at := time.Date(2026, 11, 21, 21, 0, 0, 123456789, time.UTC)
	sha := strings.Repeat("a", 64)
	for _, tc := range []struct {
		in   string
		want Metadata
	}{
		{`{"url":"https://x/a.md","fetch_time":"2026-11-21T21:00:00.123456789Z","content_type":"text/plain; charset=utf-8","sha256":"` + sha + `","type":"file"}`,
			Metadata{URL: "https://x/a.md", FetchTime: at, ContentType: "text/plain; charset=utf-8", SHA256: sha, Type: TypeFile}},
		{"{\n  \"url\": \"https://x/t\",\n  \"fetch_time\": \"2026-11-21T21:00:00.123456789Z\",\n  \"sha256\": \"" + sha + "\",\n  \"type\": \"directory\"\n}\n",
			Metadata{URL: "https://x/t", FetchTime: at, SHA256: sha, Type: TypeDirectory}},
		{`{"type":"file","sha256":"` + sha + `","url":"https://x/\u00e9","fetch_time":"2026-11-21T21:00:00.123456789Z"}`,
			Metadata{URL: "https://x/é", FetchTime: at, SHA256: sha, Type: TypeFile}},
	} {
		got, err := parseMeta([]byte(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseMeta(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, s := range []string{``, `null x`, `[]`, `{"url":1}`, `{"url":"a","fetch_time":"not a time"}`, `{"url":"a"} {}`} {
		if m, err := parseMeta([]byte(s)); err == nil {
			t.Errorf("parseMeta(%q) = %+v, want an error", s, m)
		}
	}
	// What Put writes reads back the same.
	m := Metadata{URL: "https://x/a", FetchTime: at, ContentType: "image/png", SHA256: sha, Type: TypeFile}
	b, _ := json.MarshalIndent(m, "", "  ")
	if got, err := parseMeta(b); err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
}

// TestContentType: a file entry records the sniffed content type unless
// the caller gave one; a tree has none; an entry written without
// content_type (before it was recorded) still verifies and reads.
func TestContentType(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 16)...)
	for _, tc := range []struct {
		content []byte
		given   string
		want    string
	}{
		{[]byte("# Agent\n\nDo things.\n"), "", "text/plain; charset=utf-8"},
		{png, "", "image/png"},
		{[]byte{0, 1, 2, 3}, "", "application/octet-stream"},
		{[]byte("name: x\n"), "application/yaml", "application/yaml"},
	} {
		e, err := s.PutFile("", Metadata{URL: "https://x/f", ContentType: tc.given}, tc.content)
		if err != nil {
			t.Fatal(err)
		}
		g, err := s.Get(e.Digest)
		if err != nil || e.Meta.ContentType != tc.want || g.Meta.ContentType != tc.want {
			t.Errorf("content %q: content_type %q (put), %q (get), %v; want %q", tc.content, e.Meta.ContentType, g.Meta.ContentType, err, tc.want)
		}
	}
	tr, err := s.PutTree("", Metadata{URL: "https://x/t"}, map[string][]byte{"SKILL.md": []byte("x")})
	if err != nil || tr.Meta.ContentType != "" {
		t.Errorf("tree content_type %q, %v", tr.Meta.ContentType, err)
	}
	// An old entry: metadata.json without content_type.
	content := []byte("old entry\n")
	e, err := s.PutFile("", Metadata{URL: "https://x/old"}, content)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf("{\n  \"url\": \"https://x/old\",\n  \"fetch_time\": \"2025-01-02T03:04:05Z\",\n  \"sha256\": %q,\n  \"type\": \"file\"\n}\n", e.Digest)
	if err := os.WriteFile(filepath.Join(e.Dir, metadataName), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	g, b, err := s.ReadFile(e.Digest)
	if err != nil || string(b) != string(content) || g.Meta.ContentType != "" || g.Meta.URL != "https://x/old" {
		t.Errorf("old entry: %+v, %q, %v", g.Meta, b, err)
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
