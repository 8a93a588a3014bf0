package yamlx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"
)

// MaxFileSize bounds every YAML file fullsend reads.
const MaxFileSize = 1 << 20

// Sentinels for callers that branch on the class of a decoding error.
var (
	ErrSyntax       = errors.New("invalid YAML")
	ErrUnknownField = errors.New("unknown field")
	ErrType         = errors.New("wrong type")
	ErrDuplicate    = errors.New("duplicate key")
	ErrValue        = errors.New("invalid value")
	ErrTooLarge     = errors.New("file too large")
)

// Error is a decoding or validation error at a position in a file.
type Error struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error at node n (which may be nil).
func Errorf(file string, n *yaml.Node, field string, sentinel error, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	err := sentinel
	if format != "" {
		err = fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
	}
	return &Error{File: file, Line: line, Field: field, Err: err}
}

// Wrap builds an *Error at node n around err.
func Wrap(file string, n *yaml.Node, field string, err error) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: file, Line: line, Field: field, Err: err}
}

// ReadFile reads the file at path for Parse: at most MaxFileSize+1 bytes,
// so that a larger file is read no further and Parse refuses it (naming
// the file). Its errors are those of os.Open and of the read, unwrapped.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

// Parse reads one YAML document and returns its top-level mapping node, or
// nil for an empty document.
func Parse(file string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: file, Err: fmt.Errorf("%w: %d bytes (max %d)", ErrTooLarge, len(data), MaxFileSize)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if i := strings.IndexByte(rest, ':'); i > 0 {
				if n, err := strconv.Atoi(rest[:i]); err == nil {
					line = n
					msg = strings.TrimSpace(rest[i+1:])
				}
			}
		}
		return nil, &Error{File: file, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, msg)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := checkNode(file, root, ""); err != nil {
		return nil, err
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, Errorf(file, root, "", ErrType, "the document must be a mapping")
	}
	return root, nil
}

// checkNode rejects aliases, anchors used as merge keys and duplicate keys
// anywhere in the tree.
func checkNode(file string, n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return Errorf(file, n, path, ErrValue, "YAML aliases are not supported")
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return Errorf(file, k, path, ErrType, "mapping keys must be strings")
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return Errorf(file, k, path, ErrValue, "YAML merge keys are not supported")
			}
			fp := Join(path, k.Value)
			if prev, ok := seen[k.Value]; ok {
				return Errorf(file, k, fp, ErrDuplicate, "first set on line %d", prev)
			}
			seen[k.Value] = k.Line
			if err := checkNode(file, v, fp); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := checkNode(file, c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Join appends key to a dotted field path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Pairs returns the key/value pairs of a mapping node (nil or null: none).
func Pairs(file, field string, n *yaml.Node) ([][2]*yaml.Node, error) {
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, Errorf(file, n, field, ErrType, "expected a mapping, got %s", kindName(n))
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out, nil
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar (" + strings.TrimPrefix(n.Tag, "!!") + ")"
	}
	return "something else"
}

// String reads a scalar as its literal text. Null is "".
func String(file, field string, n *yaml.Node) (string, error) {
	if IsNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", Errorf(file, n, field, ErrType, "expected a string, got %s", kindName(n))
	}
	return n.Value, nil
}

// Strings reads a list of scalars.
func Strings(file, field string, n *yaml.Node) ([]string, error) {
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, Errorf(file, n, field, ErrType, "expected a list, got %s", kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		s, err := String(file, fmt.Sprintf("%s[%d]", field, i), c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// StringMap reads a mapping of scalars, preserving nothing of order.
func StringMap(file, field string, n *yaml.Node) (map[string]string, error) {
	pairs, err := Pairs(file, field, n)
	if err != nil || pairs == nil {
		return nil, err
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		v, err := String(file, Join(field, p[0].Value), p[1])
		if err != nil {
			return nil, err
		}
		out[p[0].Value] = v
	}
	return out, nil
}

// Bool reads a boolean (true/false only).
func Bool(file, field string, n *yaml.Node) (bool, error) {
	if IsNull(n) {
		return false, nil
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE":
			return false, nil
		}
	}
	return false, Errorf(file, n, field, ErrType, "expected true or false")
}

// Int reads an integer.
func Int(file, field string, n *yaml.Node) (int64, error) {
	if n != nil && n.Kind == yaml.ScalarNode {
		if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64); err == nil {
			return v, nil
		}
	}
	return 0, Errorf(file, n, field, ErrType, "expected an integer")
}

// Float reads a number.
func Float(file, field string, n *yaml.Node) (float64, error) {
	if n != nil && n.Kind == yaml.ScalarNode {
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return v, nil
		}
	}
	return 0, Errorf(file, n, field, ErrType, "expected a number")
}

// Duration reads a Go duration ("30s", "2m").
func Duration(file, field string, n *yaml.Node) (time.Duration, error) {
	s, err := String(file, field, n)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, Errorf(file, n, field, ErrValue, "%q is not a duration like 30s or 2m", s)
	}
	return d, nil
}
