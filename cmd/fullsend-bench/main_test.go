//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteMarkdownSizeAndDeterminism(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md")
	for _, p := range []string{a, b} {
		if err := writeMarkdown(p, 123457); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if len(x) != 123457 || string(x) != string(y) {
		t.Fatalf("sizes %d/%d, equal %v", len(x), len(y), string(x) == string(y))
	}
}

func TestPickAndRatio(t *testing.T) {
	s := series{{wall: 3 * time.Millisecond}, {wall: 1 * time.Millisecond}, {wall: 2 * time.Millisecond}}
	m, lo, hi := s.pick(func(x sample) float64 { return ms(x.wall) })
	if m != 2 || lo != 1 || hi != 3 {
		t.Fatalf("median %v min %v max %v", m, lo, hi)
	}
	h := series{{wall: time.Millisecond}}
	if r := ratio(s, h); r != 2 {
		t.Fatalf("ratio %v", r)
	}
}

// pair alternates which command goes first and keeps each sample with
// its own command.
func TestPairAlternates(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	a := job{cmds: []*cmdSpec{{args: []string{"sh", "-c", "echo a >> " + log}}}}
	b := job{cmds: []*cmdSpec{{args: []string{"sh", "-c", "echo b >> " + log}}}}
	sa, sb, err := pair(3, a, &b)
	if err != nil || len(sa) != 3 || len(sb) != 3 {
		t.Fatalf("%d %d %v", len(sa), len(sb), err)
	}
	got, _ := os.ReadFile(log)
	if string(got) != "a\nb\na\nb\nb\na\na\nb\n" { // warm-ups, then a-b, b-a, a-b
		t.Fatalf("order %q", got)
	}
	bad := job{cmds: []*cmdSpec{{args: []string{"sh", "-c", "exit 3"}}}}
	if _, _, err := pair(1, bad, nil); err == nil {
		t.Fatal("a failing command was measured")
	}
}

func TestAgentTime(t *testing.T) {
	d, err := agentTime([]byte(`{"status":"succeeded","phases":[{"name":"provision","duration_ms":20},{"name":"agent[1]","duration_ms":30.5},{"name":"agent[2]","duration_ms":9.5}]}`))
	if err != nil || d != 40*time.Millisecond {
		t.Fatalf("agentTime = %v, %v; want 40ms", d, err)
	}
	for _, bad := range []string{
		`{"status":"failed","error":"boom","phases":[{"name":"agent[1]","duration_ms":1}]}`,
		`{"status":"succeeded","phases":[{"name":"provision","duration_ms":1}]}`,
		`not json`,
	} {
		if _, err := agentTime([]byte(bad)); err == nil {
			t.Errorf("agentTime(%s): no error", bad)
		}
	}
}

func TestHostVarSources(t *testing.T) {
	h := "host_files:\n  - src: env/a.env\n  - src: ${CREDS}\n    dest: x\n  - src: \"${TOKEN_FILE}\"\n  - src: ${A}/b\n"
	var got []string
	for _, m := range hostVarRe.FindAllStringSubmatch(h, -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, ",") != "CREDS,TOKEN_FILE" {
		t.Fatalf("host file variables = %v", got)
	}
}

func TestCountStarts(t *testing.T) {
	log := `100 execve("/tmp/x/fullsend", ["/tmp/x/fullsend", "run", "--target-repo"], 0x1 /* 3 vars */) = 0
101 execve("/proc/self/exe", ["/proc/self/exe", "fullsend-sandbox-init"], 0x2 /* 1 var */) = 0
102 execve("/proc/self/exe", ["fullsend-sandbox-supervisor"], 0x3 /* 3 vars */) = 0
103 execve("/usr/local/bin/fullsend", ["fullsend-sandbox-archive", "untar", "/sandbox/w"], 0x4 /* 2 vars */) = 0
104 execve("/usr/local/bin/fullsend", ["fullsend-sandbox-pid1", "/usr/bin/sh", "sh"], 0x5 /* 9 vars */) = 0
105 execve("/proc/self/exe", ["fullsend-sandbox-enter", "/usr/bin/sh"], 0x6 /* 9 vars */) = 0
105 execve("/usr/bin/sh", ["sh", "-c", "true"], 0x7 /* 9 vars */) = 0
106 execve("/usr/local/sbin/cat", ["cat"], 0x8 /* 9 vars */) = -1 ENOENT (No such file or directory)
106 execve("/usr/bin/cat", ["cat"], 0x8 /* 9 vars */) = 0
107 execve("/usr/local/bin/fullsend", ["/usr/local/bin/fullsend", "scan", "context"], 0x9 /* 9 vars */) = 0
108 execve("/usr/local/bin/fullsend", ["fullsend-sandbox-pid1", "spare"], 0xa /* 2 vars */ <unfinished ...>
109 execve("/usr/bin/true", ["true"], 0xb /* 9 vars */) = 0
108 <... execve resumed>) = 0
111 execve("/usr/local/bin/fullsend", ["/usr/local/bin/fullsend", "scan", "context"], 0xc /* 9 vars */ <pid changed to 110 ...>
110 <... execve resumed>)             = 0
`
	n, other, roles := countStarts([]byte(log), "/tmp/x/fullsend")
	if n != 9 || other != 3 || roles != "1 run, 1 sandbox-archive, 1 sandbox-enter, 1 sandbox-init, 2 sandbox-pid1, 1 sandbox-supervisor, 2 scan" {
		t.Fatalf("countStarts = %d, %d, %q", n, other, roles)
	}
}

func TestScriptWithExecs(t *testing.T) {
	got, err := scriptWithExecs([]byte("# c\nsteps:\n  - say: hi\n"), 2)
	want := "# c\nsteps:\n  - exec:\n      cmd: 'true'\n  - exec:\n      cmd: 'true'\n  - say: hi\n"
	if err != nil || string(got) != want {
		t.Fatalf("scriptWithExecs = %q, %v", got, err)
	}
	if _, err := scriptWithExecs([]byte("say: hi\n"), 1); err == nil {
		t.Fatal("a file without steps was accepted")
	}
}
