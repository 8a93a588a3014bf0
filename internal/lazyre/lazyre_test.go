package lazyre

import "testing"

func TestCompiledOnFirstUse(t *testing.T) {
	t.Parallel()
	l := New(`^a+b$`)
	if l.Compiled() {
		t.Fatal("compiled before use")
	}
	if !l.MatchString("aab") || l.MatchString("b") || !l.Compiled() {
		t.Fatal("pattern not compiled or wrong on first use")
	}
	found := false
	for _, p := range All() {
		found = found || p == l
	}
	if !found || l.String() != `^a+b$` {
		t.Fatal("New does not register the pattern")
	}
	defer func() {
		if recover() == nil {
			t.Error("a bad pattern did not panic on first use")
		}
	}()
	New(`(`).Get()
}
