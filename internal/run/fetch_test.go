package run_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// TestRuntimeFetchWired: a harness with allow_runtime_fetch gets the fetch
// service; the script agent fetches a pinned skill from a (fake, loopback)
// forge mid-run through `fullsend fetch-skill` and reads it; the report
// counts the fetch and the service is closed with the run.
func TestRuntimeFetchWired(t *testing.T) {
	f := newFixture(t)
	skill := map[string][]byte{"SKILL.md": []byte("---\nname: fetched\ndescription: d\n---\n# Fetched skill\n")}
	d, err := cas.TreeHash(skill)
	if err != nil {
		t.Fatal(err)
	}
	srv := forgetest.NewGitHub(t, forgetest.Repos{"org/lib@v1": {"skills/fetched/SKILL.md": skill["SKILL.md"]}})
	url := srv.TreeURL("org/lib@v1", "skills/fetched") + "#sha256=" + string(d)
	cfg := srv.OrgConfig("https://" + srv.WebHost() + "/")
	f.cfg = cfg
	f.write("script.yaml", fmt.Sprintf(`steps:
  - fetch_skill: {url: %q, save: SKILL_DIR}
  - read: {path: "${SKILL_DIR}/SKILL.md", expect_contains: "Fetched skill"}
  - write_result: {value: {status: ok}}
`, url))
	h := baseHarness + fmt.Sprintf("allowed_remote_resources:\n  - https://%s/org/lib/\nallow_runtime_fetch: true\nmax_runtime_fetches: 2\n", srv.WebHost())
	p := f.mustPlan(h, run.Options{})
	cacheDir := t.TempDir()
	store, err := cas.Open(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := scan.New(scan.OptionsFromConfig(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := f.execute(p, run.ExecOptions{Fetch: &fetchsvc.Options{
		Store: store, Scanner: pl, Audit: audit.Open(audit.Path(cacheDir)),
		Network: func() (*resolve.Network, error) {
			return resolve.NewNetwork(cfg, srv.Getenv(""), srv.Reach), nil
		},
	}})
	if err != nil {
		t.Fatalf("run: %v\nlog: %s", err, readFileOr(filepath.Join(rep.Dir(), run.FetchLog)))
	}
	if rep.Events.RuntimeFetches != 1 {
		t.Errorf("runtime fetches = %d, want 1", rep.Events.RuntimeFetches)
	}
	if ph := phase(rep, "fetch_service"); ph == nil || ph.Status != "ok" {
		t.Errorf("fetch_service phase = %+v", ph)
	}
	if _, err := store.Get(d); err != nil {
		t.Errorf("fetched skill not cached: %v", err)
	}
	if data, _ := os.ReadFile(audit.Path(cacheDir)); !strings.Contains(string(data), `"fetch_type":"runtime"`) {
		t.Errorf("audit log: %s", data)
	}
}

func readFileOr(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
