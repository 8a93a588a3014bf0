package watch

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Bounds of the polling interval: at most every MinInterval, backing off to
// 20 times the duration of one scan (at most MaxInterval) so that scanning a
// big tree costs little.
const (
	MinInterval = 500 * time.Millisecond
	MaxInterval = 10 * time.Second
)

// Start measures dirs and polls them until stop is called; when their
// allocated size has grown by more than limit it calls exceeded once with
// the growth and stops. With no dirs it does nothing.
func Start(dirs []string, limit int64, exceeded func(grown int64)) (stop func()) {
	if len(dirs) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	base := Usage(dirs)
	go func() {
		interval := MinInterval
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
			}
			start := time.Now()
			grown := Usage(dirs) - base
			interval = min(max(MinInterval, 20*time.Since(start)), MaxInterval)
			if grown > limit {
				exceeded(grown)
				return
			}
		}
	}()
	var closed bool
	return func() {
		if !closed {
			closed = true
			close(done)
		}
	}
}

// Usage sums the allocated size (blocks, so sparse files count for what
// they occupy) of everything under dirs, staying on each directory's file
// system and never following symlinks.
func Usage(dirs []string) int64 {
	var total int64
	for _, d := range dirs {
		st, err := os.Lstat(d)
		if err != nil {
			continue
		}
		dev, _ := usage(st)
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			info, err := e.Info()
			if err != nil {
				return nil
			}
			fdev, n := usage(info)
			if fdev != dev {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			total += n
			return nil
		})
	}
	return total
}
