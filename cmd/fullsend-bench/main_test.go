package main

import (
	"os"
	"path/filepath"
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
