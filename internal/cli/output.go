package cli

import (
	"encoding/json"
	"io"
)

// writeJSON prints v as indented JSON followed by a newline: the one shape
// of every --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
