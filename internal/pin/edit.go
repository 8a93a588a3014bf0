package pin

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// Field is a harness field `fullsend pin` can write a remote reference
// into.
type Field struct {
	Name string   // as given on the command line: "skills", "forge.github.policy"
	Path []string // mapping keys from the document root
	List bool     // a list of references (skills, plugins, …) or one
	// Kind is the reference's kind for resolution and scanning: "agent",
	// "doc", "policy", "base", "schema", "skill", "plugin", "provider",
	// "profile".
	Kind string
}

// fields are the reference fields a remote URL may be pinned into; an
// overlay's ("forge.NAME.") are the overlay fields below.
var fields = []Field{
	{Name: "agent", Kind: "agent"},
	{Name: "doc", Kind: "doc"},
	{Name: "policy", Kind: "policy"},
	{Name: "base", Kind: "base"},
	{Name: "validation_loop.schema", Kind: "schema"},
	{Name: "openshell.profiles", List: true, Kind: "profile"},
	{Name: "providers", List: true, Kind: "provider"},
	{Name: "skills", List: true, Kind: "skill"},
	{Name: "plugins", List: true, Kind: "plugin"},
}

var overlayFields = []string{"policy", "openshell.profiles", "providers", "skills", "plugins"}

// executableFields must be local (DESIGN.md, References): pin refuses
// them with that reason.
var executableFields = []string{"pre_script", "post_script", "validation_loop.script", "validation_loop.preflight_check", "host_files"}

// FieldNames lists the fields LookupField accepts, for usage messages.
func FieldNames() string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ") + ", forge.NAME.{" + strings.Join(overlayFields, ",") + "}"
}

// ErrExecutable: the field names an executable resource, which must be a
// local file.
var ErrExecutable = errors.New("executable resources must be local files: a remote URL cannot be pinned there")

// ErrUnknownField: not a reference field pin can write.
var ErrUnknownField = errors.New("not a field a remote reference can be pinned into")

// LookupField returns the field named name.
func LookupField(name string) (Field, error) {
	for _, f := range fields {
		if f.Name == name {
			f.Path = strings.Split(f.Name, ".")
			return f, nil
		}
	}
	if rest, ok := strings.CutPrefix(name, "forge."); ok {
		if ov, sub, ok := strings.Cut(rest, "."); ok && ov != "" && slices.Contains(overlayFields, sub) {
			f, _ := LookupField(sub)
			f.Name = name
			f.Path = append([]string{"forge", ov}, f.Path...)
			return f, nil
		}
	}
	for _, e := range executableFields {
		if name == e || strings.HasPrefix(name, e+"[") {
			return Field{}, fmt.Errorf("field %s: %w", name, ErrExecutable)
		}
	}
	return Field{}, fmt.Errorf("field %q: %w (fields: %s)", name, ErrUnknownField, FieldNames())
}

// Doc is a harness YAML file being edited.
type Doc struct {
	lines []string // without line endings
	eol   string
	final bool // the source ended with a line ending
	root  *yaml.Node
}

// Parse reads a harness file; it must be one YAML mapping in block style.
func Parse(src []byte) (*Doc, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(src, &n); err != nil {
		return nil, err
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a YAML mapping")
	}
	if n.Content[0].Style&yaml.FlowStyle != 0 {
		return nil, errors.New("the harness is a flow mapping ({…}); write it in block style to let pin edit it")
	}
	s := string(src)
	// Lines are split at "\n" (and "\r\n"): other characters YAML may
	// take as line breaks would shift every position the node tree gives.
	if strings.Contains(strings.ReplaceAll(s, "\r\n", ""), "\r") || strings.ContainsAny(s, "\u0085\u2028\u2029") {
		return nil, errors.New("line breaks other than \\n and \\r\\n (a bare \\r, NEL, LS or PS); pin cannot edit this file in place")
	}
	d := &Doc{root: n.Content[0], eol: "\n"}
	if strings.Contains(s, "\r\n") {
		d.eol = "\r\n"
	}
	d.final = strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	d.lines = strings.Split(s, "\n")
	if s == "" {
		d.lines = nil
	}
	return d, nil
}

// Bytes renders the document.
func (d *Doc) Bytes() []byte {
	s := strings.Join(d.lines, d.eol)
	if d.final || len(d.lines) > 0 {
		s += d.eol
	}
	return []byte(s)
}

// reparse refreshes the node tree after an edit.
func (d *Doc) reparse() error {
	nd, err := Parse(d.Bytes())
	if err != nil {
		return fmt.Errorf("pin: the edited harness does not parse (a bug): %w", err)
	}
	d.root = nd.root
	return nil
}

// Entry is one scalar of a reference field.
type Entry struct {
	Field Field
	Name  string // "agent", "skills[1]", "forge.github.policy"
	Index int    // list index (-1 for a scalar field)
	Value string
	// Ref is the branch or tag of the node's "# pin: REF" comment ("" when
	// there is none).
	Ref  string
	node *yaml.Node
	flow bool
}

// Entries lists the scalars of every reference field present in the
// document, in field order (overlays after the top-level fields, by
// position).
func (d *Doc) Entries() []Entry {
	var out []Entry
	var fs []Field
	for _, f := range fields {
		f.Path = strings.Split(f.Name, ".")
		fs = append(fs, f)
	}
	if fo := lookup(d.root, []string{"forge"}); fo != nil && fo.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(fo.Content); i += 2 {
			for _, sub := range overlayFields {
				f, err := LookupField("forge." + fo.Content[i].Value + "." + sub)
				if err == nil {
					fs = append(fs, f)
				}
			}
		}
	}
	for _, f := range fs {
		out = append(out, d.entries(f)...)
	}
	return out
}

func (d *Doc) entries(f Field) []Entry {
	v := lookup(d.root, f.Path)
	if v == nil {
		return nil
	}
	if !f.List {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil
		}
		return []Entry{{Field: f, Name: f.Name, Index: -1, Value: v.Value, Ref: pinRef(v.LineComment), node: v}}
	}
	if v.Kind != yaml.SequenceNode {
		return nil
	}
	var out []Entry
	for i, it := range v.Content {
		if it.Kind == yaml.ScalarNode {
			out = append(out, Entry{Field: f, Name: fmt.Sprintf("%s[%d]", f.Name, i), Index: i, Value: it.Value,
				Ref: pinRef(it.LineComment), node: it, flow: v.Style&yaml.FlowStyle != 0})
		}
	}
	return out
}

// lookup follows mapping keys from m; nil when a key is missing or a
// value on the way is not a mapping.
func lookup(m *yaml.Node, path []string) *yaml.Node {
	for _, k := range path {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				next = m.Content[i+1]
			}
		}
		m = next
	}
	return m
}

// keyOf returns the key node of path's last key.
func keyOf(m *yaml.Node, path []string) *yaml.Node {
	p := lookup(m, path[:len(path)-1])
	if p == nil || p.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(p.Content); i += 2 {
		if p.Content[i].Value == path[len(path)-1] {
			return p.Content[i]
		}
	}
	return nil
}

var pinRe = regexp.MustCompile(`(?:^#|;)\s*pin:\s*(\S+)\s*$`)

// pinRef extracts REF from a line comment ending in "pin: REF".
func pinRef(comment string) string {
	if m := pinRe.FindStringSubmatch(comment); m != nil {
		return m[1]
	}
	return ""
}

// withPin returns the line comment with its pin marker set to ref (or
// removed when ref is "").
func withPin(comment, ref string) string {
	base := comment
	if loc := pinRe.FindStringIndex(comment); loc != nil {
		base = strings.TrimRight(comment[:loc[0]], " \t")
	}
	switch {
	case ref == "":
		return base
	case base == "" || base == "#":
		return "# pin: " + ref
	default:
		return base + "; pin: " + ref
	}
}

// Set writes value into a scalar field (replacing it, or adding the key),
// with ref as its pin comment ("" = none).
func (d *Doc) Set(f Field, value, ref string) error {
	if f.List {
		return fmt.Errorf("field %s is a list", f.Name)
	}
	if v := lookup(d.root, f.Path); v != nil {
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("field %s (line %d) is not a scalar", f.Name, v.Line)
		}
		if v.Tag == "!!null" && v.Value == "" {
			k := keyOf(d.root, f.Path)
			return d.afterKey(k, " "+token(value, 0), ref)
		}
		return d.replace(v, false, value, ref)
	}
	return d.addKey(f, value, ref)
}

// Put writes value into a list field: it replaces the entry at index i, or
// appends when i < 0.
func (d *Doc) Put(f Field, i int, value, ref string) error {
	if !f.List {
		return fmt.Errorf("field %s is not a list", f.Name)
	}
	v := lookup(d.root, f.Path)
	switch {
	case v == nil:
		return d.addKey(f, value, ref)
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "":
		k := keyOf(d.root, f.Path)
		return d.afterKeyList(k, value, ref)
	case v.Kind != yaml.SequenceNode:
		return fmt.Errorf("field %s (line %d) is not a list", f.Name, v.Line)
	}
	flow := v.Style&yaml.FlowStyle != 0
	if i >= 0 {
		if i >= len(v.Content) || v.Content[i].Kind != yaml.ScalarNode {
			return fmt.Errorf("field %s[%d]: no such entry", f.Name, i)
		}
		return d.replace(v.Content[i], flow, value, ref)
	}
	if flow {
		if ref != "" {
			return fmt.Errorf("field %s (line %d) is a flow list ([…]), which cannot hold the \"# pin: %s\" comment of one entry; write it as a block list (one \"- item\" per line)", f.Name, v.Line, ref)
		}
		return d.appendFlow(v, value)
	}
	return d.appendBlock(v, value, ref)
}

// Replace writes value (and the pin comment) over an entry of Entries.
func (d *Doc) Replace(e Entry, value, ref string) error {
	if e.Index >= 0 {
		return d.Put(e.Field, e.Index, value, ref)
	}
	return d.Set(e.Field, value, ref)
}

// Allowed lists the harness's own allowed_remote_resources entries.
func (d *Doc) Allowed() []string {
	v := lookup(d.root, []string{"allowed_remote_resources"})
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	var out []string
	for _, it := range v.Content {
		out = append(out, it.Value)
	}
	return out
}

// AddAllowed appends prefix to allowed_remote_resources (adding the key
// when missing).
func (d *Doc) AddAllowed(prefix string) error {
	f := Field{Name: "allowed_remote_resources", Path: []string{"allowed_remote_resources"}, List: true}
	return d.Put(f, -1, prefix, "")
}

// token renders value as a YAML scalar in the given style: plain when
// that reads back as the same string, double-quoted otherwise (or when
// the original was quoted).
func token(value string, style yaml.Style) string {
	if style&yaml.SingleQuotedStyle != 0 && !strings.Contains(value, "'") {
		return "'" + value + "'"
	}
	if style&yaml.DoubleQuotedStyle != 0 || !plainOK(value) {
		return `"` + strings.ReplaceAll(strings.ReplaceAll(value, `\`, `\\`), `"`, `\"`) + `"`
	}
	return value
}

// plainOK reports whether value can be written as a plain scalar and read
// back unchanged as a string.
func plainOK(value string) bool {
	if value == "" || strings.ContainsAny(value, "\n\r\t\"'{}[],&*!|>%@`") || strings.Contains(value, ": ") ||
		strings.Contains(value, " #") || strings.HasPrefix(value, "- ") || strings.HasPrefix(value, "#") ||
		strings.HasPrefix(value, " ") || strings.HasSuffix(value, " ") || strings.HasSuffix(value, ":") {
		return false
	}
	var s string
	return yaml.Unmarshal([]byte("v: "+value), &struct {
		V *string `yaml:"v"`
	}{&s}) == nil && s == value
}

// byteCol converts a 1-based rune column of line to a byte offset.
func byteCol(line string, col int) int {
	off := 0
	for i := 1; i < col && off < len(line); i++ {
		_, n := utf8.DecodeRuneInString(line[off:])
		off += n
	}
	return off
}

// span returns the byte range of scalar n's source text on its line.
func (d *Doc) span(n *yaml.Node) (int, int, error) {
	line := d.lines[n.Line-1]
	start := byteCol(line, n.Column)
	var tok string
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, 0, fmt.Errorf("line %d: a block scalar (| or >); write the reference on one line", n.Line)
	case n.Style&yaml.DoubleQuotedStyle != 0:
		tok = `"` + n.Value + `"`
	case n.Style&yaml.SingleQuotedStyle != 0:
		tok = "'" + n.Value + "'"
	default:
		tok = n.Value
	}
	if !strings.HasPrefix(line[start:], tok) {
		return 0, 0, fmt.Errorf("line %d: the value is not written on one line as a simple scalar; edit it by hand", n.Line)
	}
	return start, start + len(tok), nil
}

// replace rewrites scalar n (and its line comment) in place.
func (d *Doc) replace(n *yaml.Node, flow bool, value, ref string) error {
	start, end, err := d.span(n)
	if err != nil {
		return err
	}
	line := d.lines[n.Line-1]
	rest := line[end:]
	comment := withPin(n.LineComment, ref)
	if flow {
		if comment != n.LineComment {
			return fmt.Errorf("line %d: an entry of a flow list ([…]) cannot carry a \"# pin:\" comment; write the list in block style", n.Line)
		}
		d.lines[n.Line-1] = line[:start] + token(value, n.Style) + rest
		return d.reparse()
	}
	trimmed := strings.TrimLeft(rest, " \t")
	if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
		return fmt.Errorf("line %d: unexpected text after the value; edit it by hand", n.Line)
	}
	gap := rest[:len(rest)-len(trimmed)]
	if gap == "" {
		gap = "  "
	}
	out := line[:start] + token(value, n.Style)
	if comment != "" {
		out += gap + comment
	}
	d.lines[n.Line-1] = out
	return d.reparse()
}

// insert inserts lines after line number after (1-based; 0 = at the top).
func (d *Doc) insert(after int, lines ...string) error {
	d.lines = slices.Insert(d.lines, after, lines...)
	return d.reparse()
}

func entryLine(prefix, value, ref string) string {
	s := prefix + token(value, 0)
	if c := withPin("", ref); c != "" {
		s += "  " + c
	}
	return s
}

// appendBlock appends an item to a block sequence, written like its last
// item.
func (d *Doc) appendBlock(seq *yaml.Node, value, ref string) error {
	last := seq.Content[len(seq.Content)-1]
	if last.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: the list's last entry is not a plain value; edit it by hand", last.Line)
	}
	start, _, err := d.span(last)
	if err != nil {
		return err
	}
	prefix := d.lines[last.Line-1][:start]
	if strings.Trim(prefix, " \t") != "-" {
		return fmt.Errorf("line %d: the list's last entry does not start its line with \"- \"; edit it by hand", last.Line)
	}
	return d.insert(last.Line, entryLine(prefix, value, ref))
}

// appendFlow appends an item to a one-line flow sequence.
func (d *Doc) appendFlow(seq *yaml.Node, value string) error {
	line := d.lines[seq.Line-1]
	open := byteCol(line, seq.Column)
	for _, it := range seq.Content {
		if it.Line != seq.Line {
			return fmt.Errorf("line %d: a flow list over several lines; edit it by hand", seq.Line)
		}
	}
	after := open + 1
	if n := len(seq.Content); n > 0 {
		_, e, err := d.span(seq.Content[n-1])
		if err != nil {
			return err
		}
		after = e
	}
	c := strings.IndexByte(line[after:], ']')
	if open >= len(line) || line[open] != '[' || c < 0 || strings.Trim(line[after:after+c], " \t,") != "" {
		return fmt.Errorf("line %d: cannot find the end of the flow list; edit it by hand", seq.Line)
	}
	ins := token(value, 0)
	if len(seq.Content) > 0 {
		ins = ", " + ins
	}
	d.lines[seq.Line-1] = line[:after] + ins + line[after:]
	return d.reparse()
}

// afterKey writes " value  # pin: REF" after a key whose value is empty.
func (d *Doc) afterKey(k *yaml.Node, text, ref string) error {
	line := d.lines[k.Line-1]
	i := strings.Index(line[byteCol(line, k.Column):], ":")
	if i < 0 {
		return fmt.Errorf("line %d: cannot find the key's colon; edit it by hand", k.Line)
	}
	colon := byteCol(line, k.Column) + i + 1
	if strings.TrimSpace(line[colon:]) != "" {
		return fmt.Errorf("line %d: unexpected text after the key; edit it by hand", k.Line)
	}
	out := line[:colon] + text
	if c := withPin("", ref); c != "" {
		out += "  " + c
	}
	d.lines[k.Line-1] = out
	return d.reparse()
}

// afterKeyList adds a first block item under a key whose value is empty.
func (d *Doc) afterKeyList(k *yaml.Node, value, ref string) error {
	indent := d.lines[k.Line-1][:byteCol(d.lines[k.Line-1], k.Column)]
	return d.insert(k.Line, entryLine(indent+"  - ", value, ref))
}

// addKey adds a missing field: at the end of the file for a top-level
// field, after the parent mapping's last line otherwise.
func (d *Doc) addKey(f Field, value, ref string) error {
	parent := lookup(d.root, f.Path[:len(f.Path)-1])
	if parent == nil || parent.Kind != yaml.MappingNode || len(parent.Content) == 0 {
		return fmt.Errorf("field %s: the harness has no %s mapping to add it to; add it first", f.Name, strings.Join(f.Path[:len(f.Path)-1], "."))
	}
	if parent.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("field %s: %s is a flow mapping ({…}); write it in block style", f.Name, strings.Join(f.Path[:len(f.Path)-1], "."))
	}
	key := f.Path[len(f.Path)-1]
	first := parent.Content[0]
	indent := d.lines[first.Line-1][:byteCol(d.lines[first.Line-1], first.Column)]
	if strings.Trim(indent, " ") != "" {
		return fmt.Errorf("line %d: the mapping does not start its line; edit it by hand", first.Line)
	}
	var add []string
	if f.List {
		add = []string{indent + key + ":", entryLine(indent+"  - ", value, ref)}
	} else {
		add = []string{entryLine(indent+key+": ", value, ref)}
	}
	at := len(d.lines)
	if len(f.Path) > 1 {
		at = lastLine(parent)
	} else {
		// At the end of the file, before any trailing blank lines.
		for at > 0 && strings.TrimSpace(d.lines[at-1]) == "" {
			at--
		}
	}
	return d.insert(at, add...)
}

// lastLine is the last source line of n's content.
func lastLine(n *yaml.Node) int {
	end := n.Line
	if n.Kind == yaml.ScalarNode {
		end += strings.Count(strings.TrimSuffix(n.Value, "\n"), "\n")
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			end++
		}
	}
	for _, c := range n.Content {
		end = max(end, lastLine(c))
	}
	return end
}

// Diff renders the lines that differ between old and new (pin's edits
// are one-line replacements and insertions) as "@@ line N @@" hunks of
// "-old" and "+new" lines, N counting lines of new.
func Diff(old, new []byte) string {
	a := strings.Split(strings.TrimSuffix(string(bytes.ReplaceAll(old, []byte("\r\n"), []byte("\n"))), "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(string(bytes.ReplaceAll(new, []byte("\r\n"), []byte("\n"))), "\n"), "\n")
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if i < len(a) && j < len(b) && a[i] == b[j] {
			i++
			j++
			continue
		}
		// Find the next common line (edits are one-line replacements and
		// insertions, so a small look-ahead suffices).
		ni, nj := len(a), len(b)
	search:
		for di := 0; i+di <= len(a); di++ {
			for dj := 0; j+dj <= len(b); dj++ {
				if i+di < len(a) && j+dj < len(b) && a[i+di] == b[j+dj] {
					ni, nj = i+di, j+dj
					break search
				}
			}
		}
		fmt.Fprintf(&sb, "@@ line %d @@\n", j+1)
		for ; i < ni; i++ {
			sb.WriteString("-" + a[i] + "\n")
		}
		for ; j < nj; j++ {
			sb.WriteString("+" + b[j] + "\n")
		}
	}
	return sb.String()
}
