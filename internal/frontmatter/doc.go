// Package frontmatter reads the YAML frontmatter of agent definitions and
// SKILL.md files: the block between a first line "---" and the next line
// "---" (or "...").
//
// Skills in the wild often carry unquoted colons in plain values
// ("description: Use when: …"), which is invalid YAML. When strict parsing
// fails, Parse retries once with such top-level values quoted and, if that
// succeeds, says so in Frontmatter.Notice; it never guesses silently.
//
// Bounds: the frontmatter block may be at most MaxSize bytes. Errors are
// *yamlx.Error values naming the file and line.
package frontmatter
