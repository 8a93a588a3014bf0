package cas

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// List returns the published entries sorted by digest, without verifying
// them and without recording a use. An entry whose metadata cannot be read
// is listed with a zero Meta (Verify reports it). Directories in
// resources/sha256 whose names are not digests, and writers' temporary
// directories, are not entries and are skipped.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.entries)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", s.dir, err)
	}
	var out []Entry
	for _, de := range des {
		d := ref.Digest(de.Name())
		if checkDigest(d) != nil {
			continue
		}
		e, err := s.stat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, entryErr(d, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// stat describes entry d from its metadata and sizes on disk.
func (s *Store) stat(d ref.Digest) (Entry, error) {
	e := Entry{Digest: d, Dir: s.entryDir(d)}
	fi, err := os.Lstat(e.Dir)
	if err != nil {
		return Entry{}, err
	}
	e.LastUsed = fi.ModTime()
	if !fi.IsDir() {
		e.Size = fi.Size()
		return e, nil
	}
	e.Meta, _ = readMeta(e.Dir)
	e.setPaths()
	err = filepath.WalkDir(e.Dir, func(_ string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.Type().IsRegular() {
			info, err := de.Info()
			if err != nil {
				return err
			}
			e.Size += info.Size()
		}
		return nil
	})
	return e, err
}

// Verify verifies every entry as Get does, without recording uses. It
// returns one error per entry that failed (each wraps ErrCorrupt and the
// entry has been removed, or is an I/O error naming the entry) plus one per
// foreign directory in resources/sha256. The second result is an error
// that stopped the walk.
func (s *Store) Verify() ([]error, error) {
	des, err := os.ReadDir(s.entries)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", s.dir, err)
	}
	var problems []error
	for _, de := range des {
		d := ref.Digest(de.Name())
		if checkDigest(d) != nil {
			problems = append(problems, fmt.Errorf("cache %s: %q in resources/sha256 is not a cache entry", s.dir, de.Name()))
			continue
		}
		if _, err := s.verifyEntry(d, nil); err != nil && !errors.Is(err, ErrNotFound) {
			problems = append(problems, err)
		}
	}
	return problems, nil
}

// Clean removes abandoned temporary directories, then evicts entries least
// recently used first until the entries total at most maxSize bytes.
// Clean(0) removes every entry. It returns the evicted entries in eviction
// order. Entries published while Clean runs may survive it.
func (s *Store) Clean(maxSize int64) ([]Entry, error) {
	if maxSize < 0 {
		return nil, fmt.Errorf("cache %s: negative size bound %d", s.dir, maxSize)
	}
	if err := s.cleanTemp(); err != nil {
		return nil, err
	}
	entries, err := s.List()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		if c := a.LastUsed.Compare(b.LastUsed); c != 0 {
			return c
		}
		return strings.Compare(string(a.Digest), string(b.Digest))
	})
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	var removed []Entry
	for _, e := range entries {
		if total <= maxSize && maxSize > 0 {
			break
		}
		if err := s.remove(e.Digest, nil); err != nil {
			return removed, entryErr(e.Digest, fmt.Errorf("removing: %w", err))
		}
		removed = append(removed, e)
		total -= e.Size
	}
	return removed, nil
}

// cleanTemp removes removal leftovers and the directories of writers that
// no longer hold their lock (crashed).
func (s *Store) cleanTemp() error {
	des, err := os.ReadDir(s.tmp)
	if err != nil {
		return fmt.Errorf("cache %s: %w", s.dir, err)
	}
	for _, de := range des {
		p := filepath.Join(s.tmp, de.Name())
		switch {
		case strings.HasPrefix(de.Name(), rmPrefix):
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("cache %s: %w", s.dir, err)
			}
		case strings.HasPrefix(de.Name(), metaPrefix) && de.Type().IsRegular():
			// Confirm's temporary metadata: renamed into its entry within
			// milliseconds, so one this old belongs to a crashed writer.
			if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > staleMetaAge {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("cache %s: %w", s.dir, err)
				}
			}
		case strings.HasPrefix(de.Name(), putPrefix) && de.IsDir():
			unlock, free, err := tryLockDir(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // published or removed meanwhile
			}
			if err != nil {
				return fmt.Errorf("cache %s: %w", s.dir, err)
			}
			if !free {
				continue // a live writer
			}
			// Rename before deleting, so the writer (if it only just created
			// the directory) fails its publication cleanly and retries.
			err = s.removeDir(p, nil)
			unlock()
			if err != nil {
				return fmt.Errorf("cache %s: %w", s.dir, err)
			}
		}
	}
	return nil
}
