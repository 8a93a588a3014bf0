// Package limit reads a file or stream whole under a byte bound, for the
// runner and the runtimes that read files the sandbox, a repository or a
// skill can make arbitrarily large.
//
// Going over the bound is an error, never a silent truncation: ReadAll
// reads at most max+1 bytes and fails with a *TooLargeError when it gets
// them. ReadFile opens, reads and closes one file that way and names the
// file in every error. Nothing is retried and nothing is left open.
package limit
