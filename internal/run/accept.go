package run

import (
	"context"
	"fmt"
	"path/filepath"
)

// AcceptFile is the copy of the run's accepted findings kept in the run
// directory, and uploaded for the in-sandbox scan.
const AcceptFile = "scan-accept.yaml"

// acceptSandboxPath is where the in-sandbox `fullsend scan context` reads
// the run's accepted findings (beside its findings log, before the agent
// exists).
const acceptSandboxPath = "/tmp/.fullsend-scan/" + AcceptFile

// uploadAcceptances puts the plan's accepted findings (Plan.Scan.Accept)
// into the sandbox so that the in-sandbox scan applies the same ones as
// the host scan; it returns their sandbox path ("" when there are none).
func (x *execution) uploadAcceptances(ctx context.Context) (string, error) {
	a := x.plan.Scan.Accept
	if a.Len() == 0 {
		return "", nil
	}
	data, err := a.Marshal()
	if err != nil {
		return "", fmt.Errorf("scan acceptances: %w", err)
	}
	host := filepath.Join(x.dir, AcceptFile)
	if err := x.rd.WriteAtomic(AcceptFile, data, 0o600); err != nil {
		return "", fmt.Errorf("scan acceptances: %w", err)
	}
	if err := x.sess.Upload(ctx, host, acceptSandboxPath); err != nil {
		return "", fmt.Errorf("scan acceptances: upload to %s: %w", acceptSandboxPath, err)
	}
	return acceptSandboxPath, nil
}
