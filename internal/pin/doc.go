// Package pin edits the reference fields of a harness YAML file in place
// for `fullsend pin`: it replaces or appends one scalar and its line
// comment, and appends allowed_remote_resources entries, splicing the
// source text so every other byte (comments, order, quoting, indentation,
// blank lines) stays as written. The YAML node tree (go.yaml.in/yaml/v4)
// only locates what to change.
//
// The branch or tag a pinned reference follows is recorded in the line
// comment of its node, "# pin: REF" (after any comment already there, as
// "; pin: REF"): it stays next to the reference it describes, in the file
// reviewers read, whether or not the harness is locked.
package pin
