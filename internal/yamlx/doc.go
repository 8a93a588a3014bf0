// Package yamlx decodes fullsend's YAML files (config.yaml, harnesses,
// frontmatter) node by node, so that every error names the file, the line
// and the field (as a dotted path such as "forge.github.skills[1]").
//
// Rules: files are capped at MaxFileSize (ReadFile reads a file no further
// than one byte past it, and Parse refuses more); a document must be a mapping;
// duplicate keys, aliases and merge keys ("<<") are rejected (they make it
// hard to see what a security-relevant file says); scalars are read with
// their literal text.
//
// Decode (decode.go) reads a mapping into a struct whose fields carry
// `yaml:"key"` tags: the struct is the schema. A key without a field is an
// ErrUnknownField error at its line unless the struct handles it
// (UnknownKeyer: a notice, or a more specific error); checks beyond a
// value's type are the struct's KeyChecker hook, called key by key in the
// order of the file with the positions of the mapping (Fields), so that the
// first error reported is the first one in the file.
package yamlx
