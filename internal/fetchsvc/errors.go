package fetchsvc

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Error codes of the protocol ({"error": {"code": …}}), each with its HTTP
// status.
const (
	CodeUnauthorized = "unauthorized"     // 401: missing or wrong bearer token
	CodeNotFound     = "not_found"        // 404: unknown path
	CodeMethod       = "method"           // 405: not POST
	CodeBadRequest   = "bad_request"      // 400: body is not {"url": "…"}
	CodeBadURL       = "bad_url"          // 400 (422 in a dependency): not a valid https or forge URL
	CodeNotDirectory = "not_directory"    // 400: a forge blob or raw URL, not a tree
	CodeMissingHash  = "missing_hash"     // 403: no #sha256= pin
	CodeNotAllowed   = "not_allowed"      // 403: outside allowed_remote_resources
	CodeNotForge     = "not_forge"        // 403: https URL on no configured forge
	CodeConflict     = "name_conflict"    // 409: the skill name is taken in the sandbox
	CodeHashMismatch = "hash_mismatch"    // 422: content does not match its pin
	CodeScanBlocked  = "scan_blocked"     // 422: the security scan blocked it
	CodeBadSkill     = "bad_skill"        // 422: not a usable skill directory
	CodeDependency   = "dependency"       // 422: a dependency broke a resolution rule
	CodeBudget       = "budget_exhausted" // 429: max_runtime_fetches reached
	CodeInternal     = "internal"         // 500: cache, audit, scan or upload failure
	CodeUpstream     = "upstream"         // 502: the forge could not be reached or refused
	CodeNotReady     = "not_ready"        // 503: no sandbox attached yet
	CodeOffline      = "offline"          // 503: not in the cache and the run is --offline
	CodeShuttingDown = "shutting_down"    // 503: the run is ending
)

// Error is a refused or failed request: the HTTP status, a stable code and
// a one-line message naming the resource and the reason. It never contains
// the bearer token.
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error // the cause, when there is one
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func newErr(status int, code string, cause error, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// classify turns a failure of the fetch pipeline (forge, cache, scan,
// dependency resolution) into an *Error with the right status.
func classify(what string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := fmt.Sprintf("%s: %v", what, err)
	switch {
	case errors.Is(err, fetch.ErrHashMismatch), errors.Is(err, cas.ErrHashMismatch), errors.Is(err, forge.ErrBlobMismatch):
		return newErr(http.StatusUnprocessableEntity, CodeHashMismatch, err, "%s", msg)
	case errors.Is(err, resolve.ErrOffline):
		return newErr(http.StatusServiceUnavailable, CodeOffline, err, "%s", msg)
	case errors.Is(err, scan.ErrBlocked):
		return newErr(http.StatusUnprocessableEntity, CodeScanBlocked, err, "%s", msg)
	case errors.Is(err, ref.ErrMissingDigest):
		return newErr(http.StatusForbidden, CodeMissingHash, err, "%s", msg)
	case errors.Is(err, ref.ErrNotAllowed):
		return newErr(http.StatusForbidden, CodeNotAllowed, err, "%s", msg)
	case errors.Is(err, forge.ErrNotForge), errors.Is(err, resolve.ErrNotForge):
		return newErr(http.StatusForbidden, CodeNotForge, err, "%s", msg)
	case errors.Is(err, forge.ErrSymlink), errors.Is(err, forge.ErrSubmodule), errors.Is(err, cas.ErrUnsafePath),
		errors.Is(err, cas.ErrEmptyTree), errors.Is(err, resolve.ErrWrongType):
		return newErr(http.StatusUnprocessableEntity, CodeBadSkill, err, "%s", msg)
	case errors.Is(err, resolve.ErrCycle), errors.Is(err, resolve.ErrTooDeep), errors.Is(err, resolve.ErrTooMany):
		return newErr(http.StatusUnprocessableEntity, CodeDependency, err, "%s", msg)
	case errors.Is(err, forge.ErrBadURL), errors.Is(err, forge.ErrKind):
		return newErr(http.StatusUnprocessableEntity, CodeBadURL, err, "%s", msg)
	case errors.Is(err, forge.ErrNotFound), errors.Is(err, forge.ErrRateLimited), errors.Is(err, forge.ErrTooMany),
		isFetchFailure(err):
		return newErr(http.StatusBadGateway, CodeUpstream, err, "%s", msg)
	}
	return newErr(http.StatusInternalServerError, CodeInternal, err, "%s", msg)
}

// isFetchFailure reports a network-level failure of the fetch client.
func isFetchFailure(err error) bool {
	var fe *fetch.Error
	var ge *forge.Error
	return errors.As(err, &fe) || errors.As(err, &ge)
}
