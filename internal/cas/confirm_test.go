package cas

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

func TestConfirmRecordsURLs(t *testing.T) {
	s := newStore(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	content := []byte("# agent\n")
	d := ref.SHA256(content)
	if _, err := s.PutFile(d, Metadata{URL: "https://h/a.md", ConfirmedURLs: []Confirmation{{URL: "https://h/a.md", Time: t0}}}, content); err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Meta.Confirmed("https://h/a.md"); !ok {
		t.Fatalf("confirmed_urls after Put = %v", e.Meta.ConfirmedURLs)
	}
	if _, ok := e.Meta.Confirmed("https://h/b.md"); ok {
		t.Fatalf("confirmed_urls after Put = %q", e.Meta.ConfirmedURLs)
	}
	if _, err := s.Confirm(d, "https://h/b.md", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Confirm(d, "https://h/a.md", t0.Add(time.Hour)); err != nil { // refreshed
		t.Fatal(err)
	}
	if _, err := s.Confirm(d, "https://h/a.md", t0); err != nil { // older: no change
		t.Fatal(err)
	}
	e, err = s.Get(d)
	if err != nil {
		t.Fatalf("entry after Confirm: %v", err)
	}
	if want := []Confirmation{{"https://h/b.md", t0}, {"https://h/a.md", t0.Add(time.Hour)}}; !slices.EqualFunc(e.Meta.ConfirmedURLs, want, func(a, b Confirmation) bool { return a.URL == b.URL && a.Time.Equal(b.Time) }) {
		t.Fatalf("confirmed_urls = %v, want %v", e.Meta.ConfirmedURLs, want)
	}
	if n := tmpNames(t, s); len(n) != 0 {
		t.Fatalf("resources/tmp holds %q after Confirm", n)
	}
	if _, err := s.Confirm(d, "https://h/\x1b[2Jx", t0); err == nil {
		t.Fatal("Confirm accepted a URL with a control character")
	}
	if _, err := s.Confirm(ref.SHA256([]byte("absent")), "https://h/c.md", t0); err == nil {
		t.Fatal("Confirm of an absent entry succeeded")
	}
}

// Concurrent confirmations of one entry each end up recorded.
func TestConfirmConcurrentKeepsAll(t *testing.T) {
	s := newStore(t)
	content := []byte("tree-less file\n")
	d := ref.SHA256(content)
	if _, err := s.PutFile(d, Metadata{URL: "https://h/0"}, content); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Confirm(d, fmt.Sprintf("https://h/%d", i), time.Now()); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e, err := s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Meta.ConfirmedURLs) != 16 {
		t.Fatalf("%d confirmed URLs survive 16 concurrent confirmations: %v", len(e.Meta.ConfirmedURLs), e.Meta.ConfirmedURLs)
	}
}

func TestConfirmKeepsNewest(t *testing.T) {
	s := newStore(t)
	content := []byte("x\n")
	d := ref.SHA256(content)
	if _, err := s.PutFile(d, Metadata{}, content); err != nil {
		t.Fatal(err)
	}
	for i := range MaxConfirmedURLs + 3 {
		if _, err := s.Confirm(d, fmt.Sprintf("https://h/%d", i), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	e, err := s.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Meta.ConfirmedURLs) != MaxConfirmedURLs || e.Meta.ConfirmedURLs[0].URL != "https://h/3" {
		t.Fatalf("kept %d, first %v", len(e.Meta.ConfirmedURLs), e.Meta.ConfirmedURLs[0])
	}
}

func TestCleanRemovesStaleConfirmTemp(t *testing.T) {
	s := newStore(t)
	stale := filepath.Join(s.tmp, metaPrefix+"0123456789ab-1")
	fresh := filepath.Join(s.tmp, metaPrefix+"0123456789ab-2")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleMetaAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clean(1 << 30); err != nil {
		t.Fatal(err)
	}
	if got := tmpNames(t, s); !slices.Equal(got, []string{filepath.Base(fresh)}) {
		t.Fatalf("resources/tmp after Clean = %q, want only the fresh one", got)
	}
}
