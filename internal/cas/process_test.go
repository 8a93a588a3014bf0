package cas

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// The test binary doubles as a cache writer process (see child).
const childEnv = "FULLSEND_CAS_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := child(spec); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child runs one writer process. spec is "mode|dir|seed":
//
//	writer: publish and remove entries of the fixed set at random, forever
//	        (the parent SIGKILLs it); it writes one byte to stdout when busy.
//	filler: wait for <dir>/go, put the fixed set in a seed-shuffled order
//	        plus two entries of its own, then exit.
func child(spec string) error {
	parts := strings.Split(spec, "|")
	mode, dir := parts[0], parts[1]
	seed, _ := strconv.ParseUint(parts[2], 10, 64)
	s, err := Open(dir)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	switch mode {
	case "writer":
		os.Stdout.Write([]byte{'!'})
		for {
			i := rng.IntN(numFixtures)
			if rng.IntN(4) == 0 {
				if err := s.remove(fixtureDigest(i), nil); err != nil {
					return err
				}
				continue
			}
			if err := putFixture(s, i); err != nil {
				return err
			}
		}
	case "emfile":
		return emfileChild(s)
	case "filler":
		for {
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		order := rng.Perm(numFixtures)
		order = append(order, numFixtures+2*int(seed), numFixtures+2*int(seed)+1)
		for _, i := range order {
			if err := putFixture(s, i); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// Fixtures: entry i is deterministic; every third one is a tree.
const numFixtures = 24

type fixture struct {
	file  []byte
	tree  map[string][]byte
	hash  ref.Digest
	isDir bool
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[int]*fixture{}
)

func getFixture(i int) *fixture {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if f, ok := fixtureCache[i]; ok {
		return f
	}
	rng := rand.New(rand.NewPCG(uint64(i), 42))
	blob := func(n int) []byte {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		return b
	}
	f := &fixture{}
	if i%3 == 0 {
		f.isDir = true
		f.tree = map[string][]byte{"SKILL.md": []byte(fmt.Sprintf("skill %d\n", i))}
		for j := range 2 + i%5 {
			f.tree[fmt.Sprintf("dir%d/f%d.txt", j%2, j)] = blob(1 + rng.IntN(48<<10))
		}
		f.hash, _ = TreeHash(f.tree)
	} else {
		f.file = blob(1 + rng.IntN(96<<10))
		f.hash = ref.SHA256(f.file)
	}
	fixtureCache[i] = f
	return f
}

func fixtureDigest(i int) ref.Digest { return getFixture(i).hash }

func putFixture(s *Store, i int) error {
	f := getFixture(i)
	meta := Metadata{URL: fmt.Sprintf("https://example.test/%d", i)}
	if f.isDir {
		_, err := s.PutTree(f.hash, meta, f.tree)
		return err
	}
	_, err := s.PutFile(f.hash, meta, f.file)
	return err
}

// checkFixture asserts that a verified entry carries fixture i's bytes.
func checkFixture(e Entry, i int) error {
	f := getFixture(i)
	if f.isDir {
		if len(e.Files) != len(f.tree) {
			return fmt.Errorf("entry %d: %d files, want %d", i, len(e.Files), len(f.tree))
		}
		for _, tf := range e.Files {
			if c, ok := f.tree[tf.Path]; !ok || ref.SHA256(c) != tf.SHA256 {
				return fmt.Errorf("entry %d: unexpected file %+v", i, tf)
			}
		}
		return nil
	}
	if e.Size <= int64(len(f.file)) || e.ContentPath == "" {
		return fmt.Errorf("entry %d: size %d, content %q", i, e.Size, e.ContentPath)
	}
	return nil
}

func helperCmd(t *testing.T, spec string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestCrashConsistency SIGKILLs a writer process at random points of its
// publish/remove loop, many times over, while a reader keeps reading every
// entry: a read returns either ErrNotFound or a verified entry with the
// right bytes, never a partial or corrupt one. Afterwards the cache verifies
// clean and Clean clears what the dead writers left in resources/tmp.
//
// It costs about a minute: `go test -short` (local iteration) skips it;
// CI (.ci/run) runs the suite without -short, so it runs there in full.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (about a minute): runs without -short, as in CI")
	}
	const iterations = 200
	const budget = 90 * time.Second
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range numFixtures {
		getFixture(i)
	}

	var stop atomic.Bool
	var hits, misses atomic.Int64
	var readErr atomic.Value // error
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			for i := range numFixtures {
				e, err := s.Get(fixtureDigest(i))
				switch {
				case err == nil:
					hits.Add(1)
					if cerr := checkFixture(e, i); cerr != nil {
						readErr.Store(cerr)
						return
					}
				case errors.Is(err, ErrNotFound):
					misses.Add(1)
				default:
					readErr.Store(err)
					return
				}
			}
		}
	})

	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	killed := 0
	for it := range iterations {
		if time.Since(start) > budget {
			t.Logf("time budget reached after %d iterations", it)
			break
		}
		cmd := helperCmd(t, fmt.Sprintf("writer|%s|%d", dir, it))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		out.Read(b[:]) // the writer is busy from here on
		time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else {
			t.Fatalf("writer %d ended before the kill: %v", it, err)
		}
		if readErr.Load() != nil {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if err, _ := readErr.Load().(error); err != nil {
		t.Fatalf("reader saw a bad entry: %v", err)
	}
	leftovers := tmpNames(t, s)
	t.Logf("%d writers killed in %v; reader: %d verified hits, %d misses; %d temp dirs left behind",
		killed, time.Since(start).Round(time.Millisecond), hits.Load(), misses.Load(), len(leftovers))
	if hits.Load() == 0 {
		t.Errorf("reader never saw an entry: the test exercised nothing")
	}

	problems, err := s.Verify()
	if err != nil || len(problems) != 0 {
		t.Fatalf("Verify after crashes: %v %v", problems, err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		found := false
		for i := range numFixtures {
			if fixtureDigest(i) == e.Digest {
				found = true
				if err := checkFixture(must(s.Get(e.Digest)), i); err != nil {
					t.Error(err)
				}
			}
		}
		if !found {
			t.Errorf("unexpected entry %s", e.Digest)
		}
	}
	if _, err := s.Clean(1 << 62); err != nil {
		t.Fatal(err)
	}
	if n := tmpNames(t, s); len(n) != 0 {
		t.Errorf("Clean left temp dirs of dead writers: %v", n)
	}
	if after := must(s.List()); len(after) != len(list) {
		t.Errorf("Clean with a huge bound evicted entries: %d -> %d", len(list), len(after))
	}
}

// TestConcurrentFillers runs 8 processes putting the same entries in
// different orders (plus two of their own each) into one cache.
func TestConcurrentFillers(t *testing.T) {
	const procs = 8
	dir := filepath.Join(t.TempDir(), "cache")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helperCmd(t, fmt.Sprintf("filler|%s|%d", dir, p))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("filler %d: %v", i, err)
		}
	}
	problems, err := s.Verify()
	if err != nil || len(problems) != 0 {
		t.Fatalf("Verify: %v %v", problems, err)
	}
	want := numFixtures + 2*procs
	list := must(s.List())
	if len(list) != want {
		t.Errorf("List = %d entries, want %d", len(list), want)
	}
	for i := range want {
		e, err := s.Get(fixtureDigest(i))
		if err != nil {
			t.Errorf("entry %d: %v", i, err)
			continue
		}
		if err := checkFixture(e, i); err != nil {
			t.Error(err)
		}
	}
	if n := tmpNames(t, s); len(n) != 0 {
		t.Errorf("temp dirs left after clean exits: %v", n)
	}
}

// Concurrent goroutines in one process, same hashes, with Clean and Verify
// running alongside.
func TestConcurrentGoroutines(t *testing.T) {
	s := newStore(t)
	var wg sync.WaitGroup
	var failed atomic.Value
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 30 {
				i := rng.IntN(6)
				if err := putFixture(s, i); err != nil {
					failed.Store(err)
					return
				}
				e, err := s.Get(fixtureDigest(i))
				if err != nil && !errors.Is(err, ErrNotFound) {
					failed.Store(err)
					return
				}
				if err == nil {
					if err := checkFixture(e, i); err != nil {
						failed.Store(err)
						return
					}
				}
				if g == 0 {
					if _, err := s.Clean(0); err != nil {
						failed.Store(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Verify(); err != nil || len(p) != 0 {
		t.Errorf("Verify: %v %v", p, err)
	}
}
