//go:build !unix

package openflag

const (
	// NoFollow is 0: this platform has no O_NOFOLLOW.
	NoFollow = 0
	// NonBlock is 0: this platform has no O_NONBLOCK for files.
	NonBlock = 0
)
