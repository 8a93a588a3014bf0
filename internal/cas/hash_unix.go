//go:build unix

package cas

import (
	"hash"
	"io"
	"os"
	"runtime/debug"
	"syscall"
)

// mmapMin is the file size from which hashContent maps the file instead of
// reading it: hashing straight from the page cache saves a copy, which is
// about 15% of the verify-on-read cost.
const mmapMin = 64 << 10

// hashContent writes the content of f (size bytes according to fstat) to h
// and returns the number of bytes hashed. A file that shrinks while mapped
// would fault; that fault is turned into a corrupt error, never a crash.
func hashContent(f *os.File, size int64, h hash.Hash, buf []byte) (n int64, err error) {
	if size < mmapMin || size != int64(int(size)) {
		return readHash(f, h, buf)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readHash(f, h, buf)
	}
	defer syscall.Munmap(m)
	if err := hashMapped(h, m, f.Name()); err != nil {
		return 0, err
	}
	// Anything appended after fstat is hashed too (and will not match).
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		return 0, err
	}
	rest, err := readHash(f, h, buf)
	return size + rest, err
}

func hashMapped(h hash.Hash, m []byte, name string) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = corruptf("%s shrank while being read", name)
		}
	}()
	h.Write(m)
	return nil
}
