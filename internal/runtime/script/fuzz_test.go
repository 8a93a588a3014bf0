package script

import "testing"

func FuzzParse(f *testing.F) {
	f.Add([]byte("steps:\n  - say: hi\n  - exec: {cmd: ls, expect_exit: 1}\n    when: {iteration: 2}\n"))
	f.Add([]byte("steps:\n  - write_result: {value: {a: [1, 2]}}\n"))
	f.Add([]byte("steps: [{read: {path: /x}, write: {path: /y}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("f.yaml", data)
		if err != nil {
			if sc != nil {
				t.Fatal("script returned with an error")
			}
			return
		}
		if len(sc.Steps) == 0 {
			t.Fatal("accepted a script without steps")
		}
		for i := range sc.Steps {
			if n := len(sc.Steps[i].ops()); n != 1 {
				t.Fatalf("step %d has %d operations", i+1, n)
			}
		}
	})
}
