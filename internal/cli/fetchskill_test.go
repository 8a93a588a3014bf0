package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
)

const fetchSkillTestToken = "5f1e0c9a8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f"

// fakeFetchService speaks the fetchsvc protocol: it answers a path for
// URLs containing "good", 403 not_allowed otherwise, 401 without the token.
func fakeFetchService(t *testing.T, arrived chan<- struct{}, release <-chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fetchSkillTestToken {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "unauthorized", "message": "missing or invalid bearer token"}})
			return
		}
		if r.URL.Path != fetchsvc.Path || r.Method != http.MethodPost {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if arrived != nil {
			arrived <- struct{}{}
			<-release
		}
		var req fetchsvc.Request
		json.NewDecoder(r.Body).Decode(&req)
		if !strings.Contains(req.URL, "good") {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "not_allowed", "message": req.URL + ": does not match any allowed_remote_resources entry"}})
			return
		}
		json.NewEncoder(w).Encode(fetchsvc.Response{Path: "/sandbox/claude-config/skills/good", Name: "good"})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runFetchSkill(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), e, append([]string{"fetch-skill"}, args...))
	return code, out.String(), errb.String()
}

func TestFetchSkillCommand(t *testing.T) {
	srv := fakeFetchService(t, nil, nil)
	env := map[string]string{fetchsvc.EnvURL: srv.URL, fetchsvc.EnvToken: fetchSkillTestToken}
	// A proxy elsewhere must not be used (nor see the token).
	env["HTTP_PROXY"], env["http_proxy"] = "http://192.0.2.1:3128", "http://192.0.2.1:3128"

	code, out, errs := runFetchSkill(t, env, "https://github.com/o/r/tree/v1/skills/good#sha256="+strings.Repeat("a", 64))
	if code != 0 || out != "/sandbox/claude-config/skills/good\n" || errs != "" {
		t.Fatalf("success: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	code, out, errs = runFetchSkill(t, env, "https://github.com/x/y/tree/v1/skills/bad#sha256="+strings.Repeat("a", 64))
	line := oneStderrLine(t, errs)
	if code != 1 || out != "" || !strings.Contains(line, "fetch-skill: https://github.com/x/y/tree/v1/skills/bad") ||
		!strings.Contains(line, "allowed_remote_resources") || !strings.Contains(line, "not_allowed, HTTP 403") {
		t.Fatalf("refusal: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	bad := map[string]string{fetchsvc.EnvURL: srv.URL, fetchsvc.EnvToken: "wrong"}
	code, _, errs = runFetchSkill(t, bad, "https://github.com/o/r/tree/v1/skills/good#sha256="+strings.Repeat("a", 64))
	if line := oneStderrLine(t, errs); code != 1 || !strings.Contains(line, "unauthorized") {
		t.Fatalf("wrong token: exit %d, %q", code, errs)
	}

	code, _, errs = runFetchSkill(t, nil, "https://github.com/o/r/tree/v1/skills/good")
	if line := oneStderrLine(t, errs); code != 1 || !strings.Contains(line, "FULLSEND_FETCH_URL is not set") || !strings.Contains(line, "allow_runtime_fetch: true") {
		t.Fatalf("no service: exit %d, %q", code, errs)
	}

	if code, _, _ := runFetchSkill(t, env); code != ExitUsage {
		t.Fatalf("no URL: exit %d, want %d", code, ExitUsage)
	}
}

// TestFetchSkillHelperProcess is `fullsend fetch-skill` as a real process
// for TestFetchSkillTokenNotInProcessListing.
func TestFetchSkillHelperProcess(t *testing.T) {
	if os.Getenv("FULLSEND_TEST_FETCHSKILL_HELPER") != "1" {
		t.Skip("helper process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
}

// The token reaches `fullsend fetch-skill` through its environment only:
// while the command runs, no process's command line (what ps shows)
// contains it.
func TestFetchSkillTokenNotInProcessListing(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := fakeFetchService(t, arrived, release)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFetchSkillHelperProcess$", "--", "fetch-skill", "https://github.com/o/r/tree/v1/skills/good#sha256="+strings.Repeat("a", 64))
	cmd.Env = []string{
		"FULLSEND_TEST_FETCHSKILL_HELPER=1", "PATH=" + os.Getenv("PATH"),
		fetchsvc.EnvURL + "=" + srv.URL, fetchsvc.EnvToken + "=" + fetchSkillTestToken,
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the command never reached the service: %s", errb.String())
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	own, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil || !bytes.Contains(own, []byte("fetch-skill")) {
		t.Errorf("cmdline of %s: %q %v", pid, own, err)
	}
	if env, err := os.ReadFile(filepath.Join("/proc", pid, "environ")); err == nil && !bytes.Contains(env, []byte(fetchSkillTestToken)) {
		t.Errorf("the token did not travel through the environment")
	}
	all, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range all {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(fetchSkillTestToken)) {
			t.Errorf("%s shows the token: %q", f, b)
		}
	}
	close(release)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fetch-skill: %v: %s", err, errb.String())
	}
	if out.String() != "/sandbox/claude-config/skills/good\n" || strings.Contains(errb.String(), fetchSkillTestToken) {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}
