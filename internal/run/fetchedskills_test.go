package run

import (
	"context"
	"errors"
	"testing"
)

type uploadFunc func(ctx context.Context, hostPath, sandboxPath string) error

func (f uploadFunc) Upload(ctx context.Context, h, s string) error { return f(ctx, h, s) }

// TestFetchedSkillsRecorded: the runtime-fetch service's uploads into the
// sandbox are recorded (one entry per skill name, the latest host copy)
// for runtimes that restore their config dir; a failed upload is not.
func TestFetchedSkillsRecorded(t *testing.T) {
	fail := errors.New("no space")
	f := &fetchedSkills{up: uploadFunc(func(_ context.Context, h, _ string) error {
		if h == "/cache/bad" {
			return fail
		}
		return nil
	})}
	ctx := context.Background()
	for _, up := range [][2]string{{"/cache/a1", "/sandbox/claude-config/skills/a"}, {"/cache/b", "/sandbox/claude-config/skills/b"}, {"/cache/a2", "/sandbox/claude-config/skills/a"}} {
		if err := f.Upload(ctx, up[0], up[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Upload(ctx, "/cache/bad", "/sandbox/claude-config/skills/c"); !errors.Is(err, fail) {
		t.Fatalf("failed upload: %v", err)
	}
	got := f.skills()
	if len(got) != 2 || got[0].Name != "a" || got[0].HostDir != "/cache/a2" || got[1].Name != "b" {
		t.Errorf("recorded %+v", got)
	}
	if (*fetchedSkills)(nil).skills() != nil {
		t.Error("nil recorder lists skills")
	}
}
