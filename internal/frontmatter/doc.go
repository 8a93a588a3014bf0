// Package frontmatter reads the YAML frontmatter of agent definitions and
// SKILL.md files: the block between a first line "---" and the next line
// "---" (or "...").
//
// Skills in the wild often carry unquoted colons in plain values
// ("description: Use when: …"), which is invalid YAML. When strict parsing
// fails, Parse retries once with such top-level values quoted and, if that
// succeeds, says so in Frontmatter.Notice; it never guesses silently.
//
// Fast path: a block made only of "key: plain words" lines — lower-case
// keys, values that start with a letter and hold only letters, digits,
// single spaces and . , _ - / ( ), never a YAML null or boolean word, no
// duplicate keys — has exactly one YAML reading (the string as written), so
// Parse reads it without the YAML parser (about 12x faster). Anything else
// goes through YAML; the two paths are checked against each other by
// TestSimpleBlockMatchesYAML and FuzzSimpleBlock.
//
// Bounds: the frontmatter block may be at most MaxSize bytes. Errors are
// *yamlx.Error values naming the file and line.
package frontmatter
