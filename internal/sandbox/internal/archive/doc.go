// Package archive moves files and trees in and out of sandboxes as tar
// streams. Only directories and regular files travel; symlinks, devices and
// other special files are skipped. Extraction refuses absolute names, ".."
// and NUL, never follows a symlink in the last path component, drops
// setuid/setgid/sticky bits and stops at a size limit (MaxBytes at most)
// before writing the file that would exceed it (ErrTooLarge).
// ExtractStaged extracts beside the destination and moves the result into
// place only once the whole stream was accepted, so a refused stream leaves
// nothing behind.
package archive
