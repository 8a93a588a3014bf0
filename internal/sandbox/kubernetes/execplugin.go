package kubernetes

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// execPlugin is a kubeconfig user's exec credential plugin
// (client.authentication.k8s.io ExecCredential: gke-gcloud-auth-plugin,
// `aws eks get-token`, kubelogin, …). Its credential is kept until its
// expirationTimestamp, then the plugin runs again.
type execPlugin struct {
	APIVersion string   `yaml:"apiVersion"`
	Command    string   `yaml:"command"`
	Args       []string `yaml:"args"`
	Env        []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	InstallHint        string `yaml:"installHint"`
	ProvideClusterInfo bool   `yaml:"provideClusterInfo"`

	dir     string
	cluster *kcCluster

	mu   sync.Mutex
	cred *execCred
}

type execCred struct {
	token  string
	cert   *tls.Certificate
	expiry time.Time
}

// ExecPluginTimeout bounds one run of an exec credential plugin.
const ExecPluginTimeout = 2 * time.Minute

func (p *execPlugin) install(c *Cluster, cl *kcCluster, dir string) error {
	if p.Command == "" {
		return errors.New("exec credential plugin: no command")
	}
	switch p.APIVersion {
	case "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1":
	default:
		return fmt.Errorf("exec credential plugin %s: apiVersion %q: want client.authentication.k8s.io/v1 or v1beta1", p.Command, p.APIVersion)
	}
	p.dir, p.cluster = dir, cl
	c.Auth = func(r *http.Request) error {
		cr, err := p.get()
		if err != nil {
			return err
		}
		if cr.token != "" {
			r.Header.Set("Authorization", "Bearer "+cr.token)
		}
		return nil
	}
	c.TLS.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		cr, err := p.get()
		if err != nil {
			return nil, err
		}
		if cr.cert != nil {
			return cr.cert, nil
		}
		return &tls.Certificate{}, nil // none: the token authenticates
	}
	return nil
}

func (p *execPlugin) get() (*execCred, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cred != nil && (p.cred.expiry.IsZero() || time.Until(p.cred.expiry) > 10*time.Second) {
		return p.cred, nil
	}
	cr, err := p.run()
	if err != nil {
		return nil, fmt.Errorf("exec credential plugin %s: %w", p.Command, err)
	}
	p.cred = cr
	return cr, nil
}

func (p *execPlugin) run() (*execCred, error) {
	spec := map[string]any{"interactive": false}
	if p.ProvideClusterInfo {
		spec["cluster"] = map[string]any{"server": p.cluster.Server, "tls-server-name": p.cluster.TLSServerName,
			"insecure-skip-tls-verify": p.cluster.InsecureSkipTLSVerify, "proxy-url": p.cluster.ProxyURL}
	}
	info, err := json.Marshal(map[string]any{"apiVersion": p.APIVersion, "kind": "ExecCredential", "spec": spec})
	if err != nil {
		return nil, err
	}
	command := p.Command
	if strings.Contains(command, "/") && !filepath.IsAbs(command) {
		command = filepath.Join(p.dir, command) // relative to its kubeconfig, as kubectl does
	}
	ctx, cancel := context.WithTimeout(context.Background(), ExecPluginTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command, p.Args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(info))
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if errors.Is(err, exec.ErrNotFound) && p.InstallHint != "" {
			msg = strings.TrimSpace(p.InstallHint)
		}
		if msg != "" {
			return nil, fmt.Errorf("%v: %s", err, msg)
		}
		return nil, err
	}
	return p.parse(stdout.Bytes())
}

func (p *execPlugin) parse(out []byte) (*execCred, error) {
	var ec struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Status     *struct {
			Token                 string    `json:"token"`
			ClientCertificateData string    `json:"clientCertificateData"`
			ClientKeyData         string    `json:"clientKeyData"`
			ExpirationTimestamp   time.Time `json:"expirationTimestamp"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &ec); err != nil {
		return nil, fmt.Errorf("its output is not an ExecCredential: %v", err)
	}
	if ec.Kind != "ExecCredential" || ec.APIVersion != p.APIVersion || ec.Status == nil {
		return nil, fmt.Errorf("its output is not a %s ExecCredential with a status", p.APIVersion)
	}
	st := ec.Status
	cr := &execCred{token: st.Token, expiry: st.ExpirationTimestamp}
	if st.ClientCertificateData != "" || st.ClientKeyData != "" {
		pair, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("its client certificate: %v", err)
		}
		cr.cert = &pair
	}
	if cr.token == "" && cr.cert == nil {
		return nil, errors.New("its ExecCredential has neither a token nor a client certificate")
	}
	return cr, nil
}
