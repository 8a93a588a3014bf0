//go:build unix

package openflag

import "syscall"

const (
	// NoFollow is O_NOFOLLOW.
	NoFollow = syscall.O_NOFOLLOW
	// NonBlock is O_NONBLOCK.
	NonBlock = syscall.O_NONBLOCK
)
