package run

import (
	"context"
	"path"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// fetchedSkills is the uploader of the runtime-fetch service: it records
// each skill the service places in the sandbox (its verified host copy),
// so that a runtime that empties its config dir before an iteration (the
// claude runtime) uploads them again (runtime.RunInput.FetchedSkills).
type fetchedSkills struct {
	up   fetchsvc.Uploader
	mu   sync.Mutex
	list []runtime.Skill
}

// Upload implements fetchsvc.Uploader.
func (f *fetchedSkills) Upload(ctx context.Context, hostPath, sandboxPath string) error {
	if err := f.up.Upload(ctx, hostPath, sandboxPath); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sk := runtime.Skill{Name: path.Base(sandboxPath), HostDir: hostPath}
	for i := range f.list {
		if f.list[i].Name == sk.Name {
			f.list[i] = sk
			return nil
		}
	}
	f.list = append(f.list, sk)
	return nil
}

// skills returns the skills fetched so far.
func (f *fetchedSkills) skills() []runtime.Skill {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runtime.Skill(nil), f.list...)
}
