// Package archive moves files and trees in and out of sandboxes as tar
// streams. Only directories and regular files travel; symlinks, devices and
// other special files are skipped. Extraction refuses absolute names, ".."
// and NUL, never follows a symlink in the last path component, drops
// setuid/setgid/sticky bits and stops at MaxBytes.
package archive
