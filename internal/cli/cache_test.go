package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
)

// runCacheCLI runs fullsend with FULLSEND_CACHE_DIR=cacheDir (when non-empty)
// and the workspace ws.
func runCacheCLI(t *testing.T, ws, cacheDir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == cas.EnvCacheDir {
			return cacheDir
		}
		return ""
	}}
	code := run(context.Background(), env, append([]string{"--workspace", ws}, args...))
	return code, out.String(), errb.String()
}

// fillCache makes three entries with distinct last-use times (oldest first).
func fillCache(t *testing.T, dir string) []cas.Entry {
	t.Helper()
	s, err := cas.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var es []cas.Entry
	put := func(e cas.Entry, err error) {
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	put(s.PutFile("", cas.Metadata{URL: "https://example.test/a.md"}, bytes.Repeat([]byte("a"), 3000)))
	put(s.PutTree("", cas.Metadata{URL: "https://example.test/tree/skill"}, map[string][]byte{"SKILL.md": []byte("skill"), "x/y.sh": []byte("y")}))
	put(s.PutFile("", cas.Metadata{URL: "https://example.test/c.md"}, bytes.Repeat([]byte("c"), 2000)))
	base := time.Now().Add(-time.Hour)
	for i, e := range es {
		at := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(e.Dir, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return es
}

func TestCacheLs(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".fullsend-cache") // the default location
	es := fillCache(t, dir)
	code, out, errOut := runCacheCLI(t, ws, "", "cache", "ls")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "HASH") || !strings.Contains(lines[0], "LAST USED") {
		t.Fatalf("table:\n%s", out)
	}
	for _, e := range es {
		if !strings.Contains(out, string(e.Digest[:12])+" ") || strings.Contains(out, string(e.Digest[:13])) {
			t.Errorf("table lacks the 12-digit hash %s:\n%s", e.Digest[:12], out)
		}
		if !strings.Contains(out, e.Meta.URL) {
			t.Errorf("table lacks %s", e.Meta.URL)
		}
	}
	if !strings.Contains(out, "directory") || !strings.Contains(out, cacheFormatSize(es[0].Size)) || cacheFormatSize(es[0].Size) != "3.2 KiB" {
		t.Errorf("table lacks type or size:\n%s", out)
	}

	code, out, _ = runCacheCLI(t, ws, "", "cache", "ls", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	var got []cacheEntryJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(got) != 3 {
		t.Fatalf("--json has %d entries", len(got))
	}
	for _, g := range got {
		if g.SHA256 == "" || g.Size <= 0 || g.LastUsed.IsZero() || g.URL == "" || (g.Type != "file" && g.Type != "directory") {
			t.Errorf("--json entry %+v", g)
		}
	}
}

func TestCacheLsEmptyDoesNotCreate(t *testing.T) {
	ws := t.TempDir()
	code, out, _ := runCacheCLI(t, ws, "", "cache", "ls", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("exit %d, out %q; want []", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".fullsend-cache")); !os.IsNotExist(err) {
		t.Errorf("ls created the cache: %v", err)
	}
}

func TestCacheDirFromEnv(t *testing.T) {
	ws, other := t.TempDir(), filepath.Join(t.TempDir(), "ci-cache")
	es := fillCache(t, other)
	code, out, _ := runCacheCLI(t, ws, other, "cache", "ls")
	if code != 0 || !strings.Contains(out, string(es[0].Digest[:12])) {
		t.Errorf("FULLSEND_CACHE_DIR ignored: exit %d\n%s", code, out)
	}
}

func TestCacheVerify(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".fullsend-cache")
	es := fillCache(t, dir)
	code, out, _ := runCacheCLI(t, ws, "", "cache", "verify")
	if code != 0 || !strings.Contains(out, "verified 3 entries") {
		t.Fatalf("clean cache: exit %d\n%s", code, out)
	}
	// Tamper with one file.
	b, _ := os.ReadFile(es[2].ContentPath)
	b[0] ^= 1
	os.WriteFile(es[2].ContentPath, b, 0o600)
	code, out, errOut := runCacheCLI(t, ws, "", "cache", "verify")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(out, string(es[2].Digest)) || !strings.Contains(out, "corrupt") || strings.Contains(out, string(es[0].Digest)) {
		t.Errorf("stdout does not name exactly the corrupt entry:\n%s", out)
	}
	line := strings.TrimRight(errOut, "\n")
	if strings.Count(line, "\n") != 0 || !strings.HasPrefix(line, "fullsend: ") || !strings.Contains(line, "1 problem") {
		t.Errorf("stderr = %q", errOut)
	}
	if _, err := os.Stat(es[2].Dir); !os.IsNotExist(err) {
		t.Errorf("corrupt entry not removed")
	}
	if code, _, _ := runCacheCLI(t, ws, "", "cache", "verify"); code != 0 {
		t.Errorf("second verify exit %d, want 0", code)
	}
}

func TestCacheClean(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".fullsend-cache")
	es := fillCache(t, dir)
	// Bound that keeps the two most recent entries: the oldest goes.
	bound := es[1].Size + es[2].Size
	code, out, errOut := runCacheCLI(t, ws, "", "cache", "clean", "--max-size", itoa(bound))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "removed "+string(es[0].Digest[:12])) || strings.Contains(out, string(es[1].Digest[:12])) || !strings.Contains(out, "freed") || !strings.Contains(out, itoa(es[0].Size)+" bytes") {
		t.Errorf("clean --max-size output:\n%s", out)
	}
	if _, err := os.Stat(es[0].Dir); !os.IsNotExist(err) {
		t.Errorf("LRU entry not removed")
	}
	code, out, _ = runCacheCLI(t, ws, "", "cache", "clean")
	if code != 0 || strings.Count(out, "removed ") != 2 {
		t.Errorf("clean (all): exit %d\n%s", code, out)
	}
	for _, e := range es {
		if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
			t.Errorf("%s survived clean", e.Digest[:12])
		}
	}
}

func TestCacheCleanBadSize(t *testing.T) {
	ws := t.TempDir()
	es := fillCache(t, filepath.Join(ws, ".fullsend-cache"))
	for _, arg := range []string{"-1", "lots", "5XB", "1.5.2GB", "99999999999999999999"} {
		code, _, errOut := runCacheCLI(t, ws, "", "cache", "clean", "--max-size", arg)
		if code != 2 || !strings.Contains(errOut, "--max-size") {
			t.Errorf("--max-size %q: exit %d, stderr %q; want usage error 2", arg, code, errOut)
		}
	}
	if _, err := os.Stat(es[0].Dir); err != nil {
		t.Errorf("a bad --max-size removed entries")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestCacheParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false},
		{"1024", 1024, false},
		{"500MB", 500_000_000, false},
		{"500mb", 500_000_000, false},
		{"1GiB", 1 << 30, false},
		{"1gib", 1 << 30, false},
		{"10Ki", 10 << 10, false},
		{"2K", 2000, false},
		{"1.5GiB", 3 << 29, false},
		{"7 MiB", 7 << 20, false},
		{"3B", 3, false},
		{"1TB", 1e12, false},
		{"", 0, true},
		{"MB", 0, true},
		{"-5", 0, true},
		{"5XB", 0, true},
		{"1.2.3", 0, true},
		{"9223372036854775807", 1<<63 - 1, false},
		{"9223372036854775808", 0, true},
		{"9000000000GiB", 0, true},
		{"1e3", 0, true},
	} {
		got, err := cacheParseSize(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("cacheParseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("cacheParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestCacheFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := cacheFormatSize(n); got != want {
			t.Errorf("cacheFormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCacheUnknownSubcommand(t *testing.T) {
	code, _, errOut := runCacheCLI(t, t.TempDir(), "", "cache", "bogus")
	if code != 2 || !strings.Contains(errOut, `"bogus"`) {
		t.Errorf("exit %d, stderr %q; want usage error naming the command", code, errOut)
	}
}
