package frontmatter

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// MaxSize bounds a frontmatter block.
const MaxSize = 64 << 10

// Frontmatter is a parsed frontmatter block.
type Frontmatter struct {
	Name         string
	Description  string
	Skills       []string       // agent definitions: skills it uses
	Dependencies []string       // SKILL.md: skills it depends on (references)
	Policy       string         // SKILL.md: its sandbox policy (a reference)
	Fields       map[string]any // every key, decoded
	Body         []byte         // the document after the block
	BodyLine     int            // 1-based line where Body starts
	Present      bool           // the document had a frontmatter block
	Notice       string         // set when the block was read leniently
}

// Split separates the frontmatter block from the body. ok is false when the
// document has none (body is then the whole document). An opening "---"
// without a closing line is an error.
func Split(name string, data []byte) (front, body []byte, bodyLine int, ok bool, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, data, 1, false, nil
	}
	if !found {
		return nil, nil, 0, false, &yamlx.Error{File: name, Line: 1, Err: fmt.Errorf("%w: frontmatter opened with --- is never closed", yamlx.ErrSyntax)}
	}
	off := 0
	line := 2
	for off <= len(rest) {
		end := bytes.IndexByte(rest[off:], '\n')
		var l []byte
		next := len(rest) + 1
		if end < 0 {
			l = rest[off:]
		} else {
			l = rest[off : off+end]
			next = off + end + 1
		}
		t := bytes.TrimRight(l, " \t\r") // no copy per line
		if string(t) == "---" || string(t) == "..." {
			front = rest[:off]
			if next <= len(rest) {
				body = rest[next:]
			}
			if len(front) > MaxSize {
				return nil, nil, 0, false, &yamlx.Error{File: name, Line: 1, Err: fmt.Errorf("%w: frontmatter over %d bytes", yamlx.ErrTooLarge, MaxSize)}
			}
			return front, body, line + 1, true, nil
		}
		if off > MaxSize {
			break
		}
		off = next
		line++
	}
	return nil, nil, 0, false, &yamlx.Error{File: name, Line: 1, Err: fmt.Errorf("%w: frontmatter opened with --- is never closed", yamlx.ErrSyntax)}
}

// Parse splits and decodes the frontmatter of data. A document without
// frontmatter yields Present == false and the whole document as Body.
func Parse(name string, data []byte) (*Frontmatter, error) {
	front, body, bodyLine, ok, err := Split(name, data)
	if err != nil {
		return nil, err
	}
	fm := &Frontmatter{Body: body, BodyLine: bodyLine, Present: ok}
	if !ok {
		return fm, nil
	}
	if pairs, ok := simpleBlock(front); ok {
		fm.setSimple(pairs)
		return fm, nil
	}
	if err := fm.parseYAML(name, front); err != nil {
		return nil, err
	}
	return fm, nil
}

// parseYAML decodes the block front with the YAML parser.
func (fm *Frontmatter) parseYAML(name string, front []byte) error {
	// Line numbers inside the block are offset by the opening "---".
	root, err := yamlx.Parse(name, append([]byte("\n"), front...))
	if err != nil {
		fixed, lines := quoteColons(front)
		if len(lines) == 0 {
			return err
		}
		root2, err2 := yamlx.Parse(name, append([]byte("\n"), fixed...))
		if err2 != nil {
			return err
		}
		root = root2
		fm.Notice = fmt.Sprintf("%s: frontmatter is not valid YAML (unquoted ': ' in the value on line %s); read leniently with those values quoted", name, joinInts(lines))
	}
	if root == nil {
		return nil
	}
	return fm.decode(name, root)
}

func joinInts(l []int) string {
	s := make([]string, len(l))
	for i, n := range l {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func (fm *Frontmatter) decode(name string, root *yaml.Node) error {
	pairs, err := yamlx.Pairs(name, "", root)
	if err != nil {
		return err
	}
	fm.Fields = map[string]any{}
	for _, kv := range pairs {
		k, v := kv[0].Value, kv[1]
		var x any
		if err := v.Decode(&x); err != nil {
			return yamlx.Errorf(name, v, k, yamlx.ErrValue, "%v", err)
		}
		fm.Fields[k] = x
		switch k {
		case "name":
			fm.Name, err = yamlx.String(name, k, v)
		case "description":
			fm.Description, err = yamlx.String(name, k, v)
		case "skills":
			fm.Skills, err = stringList(name, k, v)
		case "dependencies":
			fm.Dependencies, err = stringList(name, k, v)
		case "policy":
			// Only a SKILL.md's policy is a reference (package resolve
			// refuses another shape there); other documents may use
			// the key as they like.
			if v.Kind == yaml.ScalarNode && !yamlx.IsNull(v) {
				fm.Policy = v.Value
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stringList accepts a YAML list or a comma-separated string.
func stringList(file, field string, n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode && !yamlx.IsNull(n) {
		return splitList(n.Value), nil
	}
	l, err := yamlx.Strings(file, field, n)
	if err != nil {
		return nil, err
	}
	for i, s := range l {
		if strings.TrimSpace(s) == "" {
			return nil, yamlx.Errorf(file, n.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "empty entry")
		}
	}
	return l, nil
}

// quoteColons rewrites top-level "key: value" lines whose plain value
// contains ": " (or ends with ":") into single-quoted values and returns the
// 1-based frontmatter line numbers (counting the opening ---) it changed.
func quoteColons(front []byte) ([]byte, []int) {
	lines := strings.Split(string(front), "\n")
	var changed []int
	for i, l := range lines {
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '-' {
			continue
		}
		key, val, ok := strings.Cut(l, ": ")
		if !ok || strings.ContainsAny(key, " \"'{[") {
			continue
		}
		v := strings.TrimSpace(val)
		if v == "" || strings.ContainsAny(v[:1], "\"'[{|>&*!%@`") {
			continue
		}
		if !strings.Contains(v, ": ") && !strings.HasSuffix(v, ":") {
			continue
		}
		lines[i] = key + ": '" + strings.ReplaceAll(v, "'", "''") + "'"
		changed = append(changed, i+2)
	}
	return []byte(strings.Join(lines, "\n")), changed
}

// simpleBlock is the fast path of Parse for the common frontmatter that is
// nothing but "key: plain words" lines (SKILL.md name and description).
// It accepts only a strict subset of YAML whose meaning is not in doubt —
// every value a plain scalar that YAML can only read as that very string —
// and reports ok == false for anything else (lists, quotes, comments,
// colons, numbers, booleans, nulls, blank values, duplicate keys, CR, tabs,
// trailing blanks …), which then goes through the YAML parser. Both paths
// give the same Frontmatter (see TestSimpleBlockMatchesYAML and
// FuzzSimpleBlock).
func simpleBlock(front []byte) ([][2]string, bool) {
	var out [][2]string
	for len(front) > 0 {
		line := front
		if i := bytes.IndexByte(front, '\n'); i >= 0 {
			line, front = front[:i], front[i+1:]
		} else {
			front = nil
		}
		if len(line) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(": "))
		if !ok || !simpleKey(k) || !simpleValue(v) {
			return nil, false
		}
		key := string(k)
		for _, kv := range out {
			if kv[0] == key {
				return nil, false
			}
		}
		out = append(out, [2]string{key, string(v)})
	}
	return out, len(out) > 0
}

// simpleKey: a lower-case letter, then lower-case letters, digits, '_' or
// '-'; never one of YAML's null or boolean words.
func simpleKey(k []byte) bool {
	if len(k) == 0 || k[0] < 'a' || k[0] > 'z' || yamlWord(k) {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// simpleValue: starts with a letter (so never a number, .inf or .nan),
// ends with neither a blank nor ':', holds only letters, digits, single
// spaces and . , _ - / ( ) (no ':', '#', quotes or indicators), and is
// not one of YAML's null or boolean words.
func simpleValue(v []byte) bool {
	if len(v) == 0 || !(v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z') || v[len(v)-1] == ' ' || yamlWord(v) {
		return false
	}
	for i, c := range v {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == ',', c == '_', c == '-', c == '/', c == '(', c == ')':
		case c == ' ' && v[i-1] != ' ':
		default:
			return false
		}
	}
	return true
}

// yamlWord reports the words YAML 1.1 or 1.2 may read as null or a boolean
// (compared case-insensitively, which covers more than either spec).
func yamlWord(b []byte) bool {
	switch strings.ToLower(string(b)) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
		return true
	}
	return false
}

// setSimple fills fm from simpleBlock's pairs as decode would.
func (fm *Frontmatter) setSimple(pairs [][2]string) {
	fm.Fields = make(map[string]any, len(pairs))
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		fm.Fields[k] = v
		switch k {
		case "name":
			fm.Name = v
		case "description":
			fm.Description = v
		case "skills":
			fm.Skills = splitList(v)
		case "dependencies":
			fm.Dependencies = splitList(v)
		case "policy":
			fm.Policy = v
		}
	}
}

// splitList is stringList's reading of a comma-separated scalar.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
