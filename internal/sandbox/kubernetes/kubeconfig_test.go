package kubernetes

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes/k8stest"
)

func write(t *testing.T, path, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func caPEM(srv *k8stest.Server) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// TestKubeconfigMerge: $KUBECONFIG lists files; the first to set the
// current context or define a name wins; relative paths are relative to
// the file that holds them; a tokenFile is read at each request.
func TestKubeconfigMerge(t *testing.T) {
	srv := k8stest.NewTLS(nil)
	defer srv.Close()
	if _, err := srv.Kubeconfig(t.TempDir()); err != nil { // sets the token
		t.Fatal(err)
	}
	d1, d2 := t.TempDir(), t.TempDir()
	write(t, filepath.Join(d1, "ca.pem"), caPEM(srv), 0o600)
	tf := write(t, filepath.Join(d2, "token"), srv.Token()+"\n", 0o600)
	f1 := write(t, filepath.Join(d1, "config"), `current-context: second
clusters:
- name: c
  cluster: {server: "`+srv.URL+`", certificate-authority: ca.pem}
users:
- name: u
  user: {token: wrong}
`, 0o600)
	f2 := write(t, filepath.Join(d2, "config"), `current-context: ignored
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u2
  user: {tokenFile: token}
contexts:
- name: second
  context: {cluster: c, user: u2}
`, 0o600)
	t.Setenv("KUBECONFIG", f1+string(os.PathListSeparator)+filepath.Join(d1, "missing")+string(os.PathListSeparator)+f2)
	c, err := LoadCluster()
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != srv.URL {
		t.Fatalf("server %q: the first file's cluster must win", c.Server)
	}
	cl, err := NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.ListPods(context.Background(), "ns", ""); err != nil {
		t.Fatalf("list over TLS with the token file: %v", err)
	}
	write(t, tf, "rotated", 0o600)
	if _, err := cl.ListPods(context.Background(), "ns", ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("the token file is not re-read: %v", err)
	}
}

func TestKubeconfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{`clusters: []`, "no current-context"},
		{`current-context: x`, `context "x" not found`},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]", `cluster "c" not found`},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://h}}]", `user "u" not found`},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, cluster: {}}]", "cluster has no server"},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: https://h, certificate-authority-data: bm90IGEgY2VydA==}}]", "certificate-authority: no PEM certificate"},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://h}}]\nusers: [{name: u, user: {auth-provider: {name: gcp}}}]", `auth-provider "gcp" is not supported`},
		{"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://h}}]\nusers: [{name: u, user: {exec: {command: x}}}]", `apiVersion "": want client.authentication.k8s.io/v1`},
		{"current-context: [", "kubeconfig " + filepath.Join(dir, "config") + ": "},
	} {
		t.Setenv("KUBECONFIG", write(t, filepath.Join(dir, "config"), c.body, 0o600))
		if _, err := LoadCluster(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.body, err, c.want)
		}
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := LoadCluster(); err == nil || !strings.Contains(err.Error(), "no kubeconfig") {
		t.Errorf("no kubeconfig: %v", err)
	}
}

// TestExecCredentialPlugin: the plugin gets KUBERNETES_EXEC_INFO and its
// env, its token authenticates, and it runs again only once its credential
// has expired.
func TestExecCredentialPlugin(t *testing.T) {
	srv := k8stest.NewTLS(nil)
	defer srv.Close()
	if _, err := srv.Kubeconfig(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	write(t, filepath.Join(dir, "plugin.sh"), `#!/bin/sh
echo run >> "$COUNT"
case "$KUBERNETES_EXEC_INFO" in *'"kind":"ExecCredential"'*'"interactive":false'*) ;; *) echo "bad exec info: $KUBERNETES_EXEC_INFO" >&2; exit 3;; esac
[ "$TOK" = fail ] && { echo "login required" >&2; exit 1; }
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$TOK" "$EXP"
`, 0o755)
	ca := base64.StdEncoding.EncodeToString([]byte(caPEM(srv)))
	run := func(tok, exp string) (Client, error) {
		t.Helper()
		t.Setenv("KUBECONFIG", write(t, filepath.Join(dir, "config"), `current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "`+srv.URL+`", certificate-authority-data: `+ca+`}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      env: [{name: TOK, value: "`+tok+`"}, {name: EXP, value: "`+exp+`"}, {name: COUNT, value: "`+count+`"}]
`, 0o600))
		os.Remove(count)
		c, err := LoadCluster()
		if err != nil {
			return nil, err
		}
		return NewClient(c)
	}
	runs := func() int { b, _ := os.ReadFile(count); return strings.Count(string(b), "run") }
	ctx := context.Background()
	for _, c := range []struct {
		exp  string
		want int
	}{{"2099-01-01T00:00:00Z", 1}, {"2000-01-01T00:00:00Z", 3}} {
		cl, err := run(srv.Token(), c.exp)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := cl.ListPods(ctx, "ns", ""); err != nil {
				t.Fatalf("with the plugin's token: %v", err)
			}
		}
		if runs() != c.want {
			t.Errorf("expiry %s: the plugin ran %d times for 3 requests, want %d", c.exp, runs(), c.want)
		}
	}
	cl, err := run("fail", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.ListPods(ctx, "ns", ""); err == nil || !strings.Contains(err.Error(), "exec credential plugin ./plugin.sh: exit status 1: login required") {
		t.Errorf("failing plugin: %v", err)
	}
}

// TestNoCredentialsOverHTTP: a token is never sent to an http:// server.
func TestNoCredentialsOverHTTP(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Write([]byte(`{"items":[]}`))
	}))
	defer srv.Close()
	cl, err := NewClient(&Cluster{Server: srv.URL, Auth: bearer(func() (string, error) { return "secret", nil })})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.ListPods(context.Background(), "ns", ""); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "" {
		t.Fatalf("Authorization sent over plain HTTP: %q", got)
	}
}

// TestExecStatus: the error channel's Status becomes nil, an exit code or
// the server's message.
func TestExecStatus(t *testing.T) {
	if err := execStatus([]byte(`{"status":"Success"}`)); err != nil {
		t.Errorf("success: %v", err)
	}
	err := execStatus([]byte(`{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"42"}]}}`))
	if ee, ok := err.(*ExitError); !ok || ee.ExitStatus() != 42 {
		t.Errorf("exit 42: %v", err)
	}
	if err := execStatus([]byte(`{"status":"Failure","reason":"InternalError","message":"container not found (\"sandbox\")"}`)); err == nil || !strings.Contains(err.Error(), `container not found ("sandbox")`) {
		t.Errorf("failure: %v", err)
	}
	if err := execStatus(nil); err == nil || !strings.Contains(err.Error(), "without the command's status") {
		t.Errorf("no status: %v", err)
	}
}
