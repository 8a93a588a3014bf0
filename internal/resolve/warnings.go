package resolve

import "errors"

// WarnedError is an error of Resolve or ResolveSkill that came after the
// resolution recorded warnings (the registry tier's: refused registry
// content, an unreachable registry, failed pushes). The warnings often
// explain the error (the forge failed after the registry's copy was
// refused), so they travel with it instead of being dropped; Error is the
// wrapped error's text alone.
type WarnedError struct {
	Err      error
	Warnings []string
}

func (e *WarnedError) Error() string { return e.Err.Error() }
func (e *WarnedError) Unwrap() error { return e.Err }

// Warnings returns the warnings an error of Resolve or ResolveSkill
// carries (nil for any other error). Callers print them before the error.
func Warnings(err error) []string {
	var we *WarnedError
	if errors.As(err, &we) {
		return we.Warnings
	}
	return nil
}

// withWarnings attaches warnings to err; err alone when there are none.
func withWarnings(err error, warnings []string) error {
	if len(warnings) == 0 {
		return err
	}
	return &WarnedError{Err: err, Warnings: warnings}
}
