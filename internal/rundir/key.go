package rundir

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// KeyFile is the per-user secret's file name in the state directory.
const KeyFile = "run.key"

var (
	keyMu    sync.Mutex
	keyCache = map[string][]byte{}
)

// Key returns the per-user run key: 32 random bytes kept hex-encoded in
// <state dir>/run.key, created on first use (mode 0600, written to a
// temporary file and linked into place, so two first uses agree on one
// key). A key file that is a symlink, not a regular file, owned by
// another user or readable or writable by group or others is refused, as
// is a state directory others may write to.
func Key(getenv func(string) string) ([]byte, error) {
	state, err := StateDir(getenv)
	if err != nil {
		return nil, fmt.Errorf("run key: %w (set one: the key that binds resumable runs to you lives there)", err)
	}
	keyMu.Lock()
	defer keyMu.Unlock()
	if k, ok := keyCache[state]; ok {
		return k, nil
	}
	k, err := loadOrCreateKey(state)
	if err != nil {
		return nil, err
	}
	keyCache[state] = k
	return k, nil
}

func loadOrCreateKey(state string) ([]byte, error) {
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, fmt.Errorf("state directory %s: %w", state, err)
	}
	fi, err := os.Lstat(state)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", state, err)
	}
	if err := checkDirInfo(state, "", fi); err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("state directory %s: mode %v lets others write to it: refused (chmod go-w %s)", state, fi.Mode().Perm(), state)
	}
	p := filepath.Join(state, KeyFile)
	k, err := readKey(p)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(state, p); err != nil {
			return nil, err
		}
		k, err = readKey(p)
	}
	return k, err
}

func readKey(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if err := checkFileInfo(p, "", fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openflag.NoFollow|openflag.NonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("run key %s: %w", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("run key %s: %w", p, err)
	}
	if !os.SameFile(fi, st) {
		return nil, fmt.Errorf("run key %s: replaced while being opened", p)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("run key %s: mode %v lets others read it: refused (chmod 600 %s, or remove it: runs made with it then cannot be resumed)", p, st.Mode().Perm(), p)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return nil, fmt.Errorf("run key %s: %w", p, err)
	}
	k, err := hex.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("run key %s: not 64 hex digits (remove it: a new one is made; runs made with it then cannot be resumed)", p)
	}
	return k, nil
}

func createKey(state, p string) error {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(state, ".run.key.tmp-*")
	if err != nil {
		return fmt.Errorf("run key %s: %w", p, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	_, err = tmp.WriteString(hex.EncodeToString(k[:]) + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// link(2) never replaces: the first of two racing creators wins
		// and the other reads its key.
		if err = os.Link(name, p); errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("run key %s: %w", p, err)
	}
	return nil
}

// Chain computes the MAC chain of a transcript: each line's MAC covers
// the previous MAC and the line, so lines cannot be changed, inserted,
// dropped from the middle or reordered, and the first MAC covers the
// label (the run or session the transcript belongs to), so a transcript
// does not verify in another run.
type Chain struct {
	key  []byte
	prev []byte
}

// NewChain starts a chain for the transcript of label.
func NewChain(key []byte, label string) *Chain {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("fullsend transcript v1\x00" + label))
	return &Chain{key: key, prev: m.Sum(nil)}
}

// Resume continues a chain whose last MAC (hex) is last.
func ResumeChain(key []byte, last string) (*Chain, error) {
	b, err := hex.DecodeString(last)
	if err != nil || len(b) != sha256.Size {
		return nil, errors.New("bad MAC")
	}
	return &Chain{key: key, prev: b}, nil
}

func (c *Chain) mac(line []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(c.prev)
	m.Write(line)
	return m.Sum(nil)
}

// macField is what Seal appends to a JSON object line.
const macField = `,"mac":"`

// Seal returns the JSON object line with a last member "mac" holding
// the line's MAC, and advances the chain.
func (c *Chain) Seal(obj []byte) []byte {
	obj = bytes.TrimRight(obj, "\n")
	sum := c.mac(obj)
	c.prev = sum
	out := make([]byte, 0, len(obj)+len(macField)+2*sha256.Size+2)
	out = append(out, obj[:len(obj)-1]...)
	out = append(out, macField...)
	out = hex.AppendEncode(out, sum)
	return append(out, '"', '}')
}

// ErrBadMAC is returned by Verify for a line whose MAC is missing or
// wrong.
var ErrBadMAC = errors.New("MAC missing or wrong: not written by this user's fullsend for this run")

// Verify checks a line made by Seal and advances the chain.
func (c *Chain) Verify(line []byte) error {
	line = bytes.TrimRight(line, "\n")
	n := len(macField) + 2*sha256.Size + 2
	if len(line) < n+2 || line[len(line)-1] != '}' || line[len(line)-2] != '"' {
		return ErrBadMAC
	}
	cut := len(line) - n
	if !bytes.Equal(line[cut:cut+len(macField)], []byte(macField)) {
		return ErrBadMAC
	}
	got, err := hex.DecodeString(string(line[cut+len(macField) : len(line)-2]))
	if err != nil {
		return ErrBadMAC
	}
	obj := append(append([]byte{}, line[:cut]...), '}')
	want := c.mac(obj)
	if !hmac.Equal(got, want) {
		return ErrBadMAC
	}
	c.prev = want
	return nil
}

// Last is the chain's last MAC (hex), for ResumeChain.
func (c *Chain) Last() string { return hex.EncodeToString(c.prev) }
