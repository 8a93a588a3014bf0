// Package yamlx decodes fullsend's YAML files (config.yaml, harnesses,
// frontmatter) node by node, so that every error names the file, the line
// and the field (as a dotted path such as "forge.github.skills[1]").
//
// Rules: files are capped at MaxFileSize; a document must be a mapping;
// duplicate keys, aliases and merge keys ("<<") are rejected (they make it
// hard to see what a security-relevant file says); scalars are read with
// their literal text. Unknown keys are reported by the caller, which knows
// the schema.
package yamlx
