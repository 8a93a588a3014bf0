package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// This file is the one resolver of Claude Code's `@path` imports in
// context files (CLAUDE.md and the files it loads as instructions). The
// host scan of `fullsend run` and the in-sandbox `fullsend scan context`
// both call FollowImports; neither re-implements it.
//
// The rule, as @anthropic-ai/claude-code 2.1.332 applies it: in the text
// of a markdown file (not inside fenced code blocks or code spans), every
// `@` at the start of the text or after whitespace starts an import; the
// path runs to the next whitespace (a backslash-escaped space is part of
// it) and stops before a `#`; it counts when it starts with "./", "~/",
// "/" (not "/" alone) or a letter, digit, '.', '_' or '-'. Relative paths
// are resolved against the importing file's directory; "~/" is the home
// directory. Imported files are read the same way, to a depth of 4 (the
// fifth hop is not loaded). A target that does not exist is skipped.
//
// fullsend reads more than Claude Code loads, never less: an `@` after any
// character that is not a letter or digit counts (markdown emphasis and
// links around the path), a path is also tried without trailing markdown
// punctuation, indented code blocks and HTML are read as text, and one
// more hop is followed (MaxImportDepth). An import that leaves the
// repository (absolute outside it, "~/", or climbing out with "..") is
// refused: its target is not part of the reviewed repository.

// MaxImportDepth is how many import hops are followed from a context file
// (Claude Code loads 4).
const MaxImportDepth = 5

// ImportsScanner names the findings of the import resolver.
const ImportsScanner = "context-imports"

// RuleImportOutside is the rule of an import that leaves the repository.
const RuleImportOutside = "context-imports/outside-repo"

// ImportFile is one file whose imports are followed: its path relative to
// the repository (slash-separated) and its content.
type ImportFile struct {
	Rel  string
	Data []byte
}

// ImportReader reads the file rel (slash-separated, relative to the
// repository, never climbing out of it). A target that does not exist,
// or is not a regular file, returns an error wrapping fs.ErrNotExist: it
// is skipped, as Claude Code skips it. Any other error is returned.
type ImportReader func(rel string) ([]byte, error)

// Imported is a file reached through imports (not itself in the list
// given to FollowImports).
type Imported struct {
	ImportFile
	By string // the importing file (Rel)
}

// FollowImports follows the imports of files, up to MaxImportDepth hops,
// within the repository whose directory Claude Code sees as root (an
// absolute, slash-separated path: absolute imports inside it count as
// inside). It returns the files reached (each once, never one of files)
// and a critical finding for every import that leaves the repository.
func FollowImports(root string, files []ImportFile, read ImportReader) ([]Imported, []Finding, error) {
	root = path.Clean("/" + strings.TrimPrefix(root, "/"))
	seen := map[string]bool{}
	for _, f := range files {
		seen[path.Clean(f.Rel)] = true
	}
	var out []Imported
	var findings []Finding
	type item struct {
		f     ImportFile
		depth int
	}
	queue := make([]item, 0, len(files))
	for _, f := range files {
		queue = append(queue, item{f, 0})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.depth >= MaxImportDepth {
			continue
		}
		for _, imp := range ImportPaths(it.f.Data) {
			rel, ok := resolveImport(root, it.f.Rel, imp.Path)
			if !ok {
				findings = append(findings, Finding{
					Scanner: ImportsScanner, Rule: RuleImportOutside, Severity: Critical, Path: it.f.Rel, Line: imp.Line, Column: imp.Column,
					Message: fmt.Sprintf("imports %q, which is outside the repository: Claude Code would load it as instructions; refused (import files from inside the repository)", imp.Path),
				})
				continue
			}
			if seen[rel] {
				continue
			}
			data, err := read(rel)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: import %q: %w", it.f.Rel, imp.Path, err)
			}
			seen[rel] = true
			f := ImportFile{Rel: rel, Data: data}
			out = append(out, Imported{ImportFile: f, By: it.f.Rel})
			queue = append(queue, item{f, it.depth + 1})
		}
	}
	return out, findings, nil
}

// resolveImport returns the repository-relative path of the import p of
// the file from, or false when it leaves the repository.
func resolveImport(root, from, p string) (string, bool) {
	var abs string
	switch {
	case strings.HasPrefix(p, "~"):
		return "", false
	case strings.HasPrefix(p, "/"):
		abs = path.Clean(p)
	default:
		abs = path.Join(root, path.Dir(from), p)
	}
	if abs == root {
		return "", false
	}
	rel, ok := strings.CutPrefix(abs, root+"/")
	if root == "/" {
		rel, ok = strings.TrimPrefix(abs, "/"), true
	}
	return rel, ok
}

// ImportRef is one `@path` import of a file.
type ImportRef struct {
	Path         string
	Line, Column int
}

var (
	importRe     = regexp.MustCompile(`@((?:[^\s\\]|\\ )+)`)
	importPathRe = regexp.MustCompile(`^(?:\./|~/|/.|[A-Za-z0-9._-])`)
	fenceRe      = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
)

// ImportPaths lists the `@path` imports of a markdown file, in order,
// each path once per place (see the file comment for the rule).
func ImportPaths(data []byte) []ImportRef {
	var out []ImportRef
	lines := strings.Split(string(data), "\n")
	fence := ""
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "" && !(m[1][0] == '`' && strings.Contains(m[2], "`")):
				fence = m[1]
				continue
			case fence != "" && m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(m[2]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		text := unescapePunct(blankCodeSpans(line))
		for _, loc := range importRe.FindAllStringSubmatchIndex(text, -1) {
			if loc[0] > 0 {
				if c := text[loc[0]-1]; c < 0x80 && (isAlnum(c) || c == '@') {
					continue
				}
			}
			raw := text[loc[2]:loc[3]]
			for _, cand := range importCandidates(raw) {
				out = append(out, ImportRef{Path: cand, Line: i + 1, Column: loc[0] + 1})
			}
		}
	}
	return out
}

// importCandidates turns the text after `@` into the paths it may name:
// as written, and cut before the first markdown punctuation.
func importCandidates(raw string) []string {
	var out []string
	add := func(s string) {
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.ReplaceAll(s, `\ `, " ")
		if s == "" || s == "/" || strings.HasPrefix(s, "@") || !importPathRe.MatchString(s) {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	add(raw)
	if i := strings.IndexAny(raw, "*_`[](){}<>\"'!,;:?"); i >= 0 {
		add(strings.TrimRight(raw[:i], "."))
	}
	return out
}

// blankCodeSpans replaces the code spans of one line (a run of n
// backticks closed by the next run of exactly n, not backslash-escaped)
// with spaces, keeping byte offsets.
func blankCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	b := []byte(line)
	i := 0
	for i < len(b) {
		if b[i] != '`' || escaped(b, i) {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		for k := i; k < end; k++ {
			b[k] = ' '
		}
		i = end
	}
	return string(b)
}

// unescapePunct drops the backslash of a markdown escape (a backslash
// before ASCII punctuation other than a space), as the markdown reader
// does before Claude Code sees the text.
func unescapePunct(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] > ' ' && s[i+1] < 0x7f && !isAlnum(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escaped reports whether b[i] follows an odd number of backslashes.
func escaped(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
