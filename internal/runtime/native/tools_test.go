package native

import (
	"encoding/json"
	"testing"
)

// toolArgs reports the first bad argument, as argString and argInt would
// at that argument, and reads nothing after it.
func TestToolArgs(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    map[string]any
		path    string
		offset  int
		content string
		wantErr string
	}{
		{"all good", map[string]any{"path": "a.txt", "offset": json.Number("3"), "content": "x"}, "a.txt", 3, "x", ""},
		{"optional absent", map[string]any{"path": "a.txt", "content": ""}, "a.txt", 0, "", ""},
		{"integer as string", map[string]any{"path": "a", "offset": "7", "content": "x"}, "a", 7, "x", ""},
		{"first missing", map[string]any{"offset": "x", "content": 1}, "", 0, "", `missing required argument "path"`},
		{"first of two bad", map[string]any{"path": "a", "offset": "x", "content": 1}, "a", 0, "", `argument "offset" must be an integer`},
		{"last bad", map[string]any{"path": "a", "offset": json.Number("2"), "content": 1}, "a", 2, "", `argument "content" must be a string`},
		{"not a string", map[string]any{"path": true}, "", 0, "", `argument "path" must be a string`},
	} {
		a := toolArgs{m: c.args}
		path, offset, content := a.str("path", true), a.int("offset"), a.str("content", true)
		errText := ""
		if a.err != nil {
			errText = a.err.Error()
		}
		if path != c.path || offset != c.offset || content != c.content || errText != c.wantErr {
			t.Errorf("%s: %q %d %q err %q, want %q %d %q err %q", c.name, path, offset, content, errText, c.path, c.offset, c.content, c.wantErr)
		}
	}
}
