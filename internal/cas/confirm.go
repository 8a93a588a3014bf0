package cas

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// metaPrefix names Confirm's temporary metadata files in resources/tmp;
// Clean removes those older than staleMetaAge (a crashed Confirm's).
const (
	metaPrefix   = "meta-"
	staleMetaAge = 10 * time.Minute
)

// Confirm records in d's metadata.json that a fetch from url served
// exactly d's content at time at (Metadata.ConfirmedURLs; a URL already
// recorded gets the later time). The entry is verified first (Get). The
// new metadata is written under resources/tmp, fsynced and renamed over
// the old one, so a reader sees either file, never a mix, and the entry
// never holds anything but its own files. Writers of one entry take its
// directory's lock in turn, so two confirmations never lose one another.
// At most MaxConfirmedURLs are kept, the least recently confirmed dropped
// first.
func (s *Store) Confirm(d ref.Digest, url string, at time.Time) (Entry, error) {
	if err := checkMeta(Metadata{URL: url}); err != nil {
		return Entry{}, entryErr(d, fmt.Errorf("confirmed url: %w", err))
	}
	if err := checkDigest(d); err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	at = at.UTC()
	dir := s.entryDir(d)
	unlock, err := lockDir(dir)
	if err != nil {
		return Entry{}, entryErr(d, err)
	}
	defer unlock()
	e, err := s.Get(d)
	if err != nil {
		return Entry{}, err
	}
	if t, ok := e.Meta.Confirmed(url); ok && !t.Before(at) {
		return e, nil
	}
	meta := e.Meta
	meta.ConfirmedURLs = make([]Confirmation, 0, len(e.Meta.ConfirmedURLs)+1)
	for _, c := range e.Meta.ConfirmedURLs {
		if c.URL != url {
			meta.ConfirmedURLs = append(meta.ConfirmedURLs, c)
		}
	}
	meta.ConfirmedURLs = append(meta.ConfirmedURLs, Confirmation{URL: url, Time: at})
	if n := len(meta.ConfirmedURLs); n > MaxConfirmedURLs {
		meta.ConfirmedURLs = meta.ConfirmedURLs[n-MaxConfirmedURLs:]
	}
	if err := checkMeta(meta); err != nil {
		return Entry{}, entryErr(d, fmt.Errorf("metadata: %w", err))
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return Entry{}, entryErr(d, err)
	}
	data = append(data, '\n')
	f, err := os.CreateTemp(s.tmp, metaPrefix+string(d[:12])+"-*")
	if err != nil {
		return Entry{}, entryErr(d, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Entry{}, entryErr(d, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, metadataName)); err != nil {
		return Entry{}, entryErr(d, err)
	}
	if err := syncPath(dir); err != nil {
		return Entry{}, entryErr(d, err)
	}
	e.Meta = meta
	return e, nil
}
