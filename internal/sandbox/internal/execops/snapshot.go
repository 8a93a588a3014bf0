package execops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/snapshot"
)

// Snapshot implements sandbox.Snapshotter on o.Run: `tar -c` of
// sandbox.Root in the sandbox, filtered on the host (package snapshot).
func (o Ops) Snapshot(ctx context.Context, w io.Writer, skip []string) error {
	if _, err := snapshot.Rel(skip); err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	pr, pw := io.Pipe()
	ferr := make(chan error, 1)
	go func() {
		err := snapshot.Copy(pr, w, skip, o.Limits, nil)
		pr.CloseWithError(err) // a refused stream stops the command
		if err == nil {
			io.Copy(io.Discard, pr)
		}
		ferr <- err
	}()
	var stderr bytes.Buffer
	code, _, err := o.Run(ctx, []string{"tar", "-c", "-f", "-", "-C", sandbox.Root, "."}, nil, "/", 0, nil, pw, &stderr)
	pw.Close()
	if fe := <-ferr; fe != nil {
		return fmt.Errorf("%s: %w", o.Name, fe)
	}
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("%s: snapshot: %w", o.Name, err)
	}
	return nil
}

// Restore implements sandbox.Snapshotter on o.Run: sandbox.Root emptied
// but skip, then the filtered stream extracted by `tar -x` as the exec
// user.
func (o Ops) Restore(ctx context.Context, r io.Reader, skip []string) error {
	if _, err := snapshot.Rel(skip); err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	var stderr bytes.Buffer
	code, _, err := o.Run(ctx, snapshot.CleanArgs(skip), nil, "/", 0, nil, io.Discard, &stderr)
	if err == nil && code != 0 {
		err = fmt.Errorf("emptying %s: exit %d: %s", sandbox.Root, code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("%s: restore: %w", o.Name, err)
	}
	pr, pw := io.Pipe()
	ferr := make(chan error, 1)
	var locked []string
	go func() {
		err := snapshot.Copy(r, pw, skip, o.Limits, &locked)
		pw.CloseWithError(err)
		ferr <- err
	}()
	stderr.Reset()
	code, _, err = o.Run(ctx, []string{"tar", "-x", "-f", "-", "-C", sandbox.Root}, nil, "/", 0, pr, io.Discard, &stderr)
	pr.Close()
	if fe := <-ferr; fe != nil && !errors.Is(fe, io.ErrClosedPipe) {
		return fmt.Errorf("%s: restore: %w", o.Name, fe)
	}
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exit %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	if args := snapshot.LockArgs(locked); err == nil && args != nil {
		stderr.Reset()
		code, _, err = o.Run(ctx, args, nil, "/", 0, nil, io.Discard, &stderr)
		if err == nil && code != 0 {
			err = fmt.Errorf("directory modes: exit %d: %s", code, strings.TrimSpace(stderr.String()))
		}
	}
	if err != nil {
		return fmt.Errorf("%s: restore: %w", o.Name, err)
	}
	return nil
}
