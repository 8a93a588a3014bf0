// Package watch bounds how much a sandbox may write into host directories
// it has mounted read-write, where no file system limit applies: it
// measures their allocated size when the session starts, polls it, and
// reports once the growth exceeds the workspace limit so the backend can
// end the session. It is a best-effort bound: between two polls the agent
// may write more (backends cap each file with RLIMIT_FSIZE).
package watch
