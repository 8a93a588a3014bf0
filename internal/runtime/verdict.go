package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Stages of a verdict: the hook events of package hooks.
const (
	StagePre  = "PreToolUse"  // the call was stopped before it ran
	StagePost = "PostToolUse" // its output was stopped or flagged
)

// VerdictEvent is the one shape every runtime gives a security stop (the
// verdict contract: every block, denial and canary trip of any runtime is
// an EventVerdict, which the runner records as a finding). check names
// what decided (a fullsend hook, a repository hook, the runtime's own
// permission check), stage is StagePre or StagePost, tool the tool, id the
// call id, rule what matched ("canary…" rules are rated critical) and
// reason why.
func VerdictEvent(check, stage, tool, id, rule, reason string, turn int) Event {
	what := "blocked the call"
	if stage == StagePost {
		what = "blocked the output"
	}
	if tool != "" {
		what += " of " + tool
	}
	return Event{Kind: EventVerdict, Name: check, ID: id, Rule: rule, IsError: true, Text: Truncate(what + ": " + reason), Turn: turn}
}

// DecoyPath is where the canary decoy is planted (when absent): where
// secret harvesting looks first.
const DecoyPath = SandboxRoot + "/.aws/credentials"

// NewCanary returns a fresh random canary token for one run ("fsc_" and 36
// hex digits): a tripwire, not a secret.
func NewCanary() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("runtime: no randomness: " + err.Error())
	}
	return "fsc_" + hex.EncodeToString(b)
}

// PlantDecoy writes a credentials file carrying canary at DecoyPath,
// unless the runner already put a real file there.
func PlantDecoy(ctx context.Context, s sandbox.Session, canary string) error {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	decoy := "[default]\naws_access_key_id = AKIA" + string(b) + "\naws_secret_access_key = " + canary + "\n"
	res, err := s.Exec(ctx, sandbox.ExecRequest{
		Args:  []string{"sh", "-c", `[ -e "$1" ] && exit 0; mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod 600 "$1"`, "sh", DecoyPath},
		Stdin: []byte(decoy),
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", DecoyPath, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("writing %s: exit status %d: %s", DecoyPath, res.ExitCode, LastLine(res.Stderr))
	}
	return nil
}
