package kubernetes

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v4"
)

// The kubeconfig subset the backend reads (client-go's clientcmd would
// add about 10 MB to the binary for it, measured): the current context's
// cluster (server, CA file or data, insecure-skip-tls-verify,
// tls-server-name, proxy-url) and user (token, tokenFile, client
// certificate and key as files or data, username and password, or an exec
// credential plugin). $KUBECONFIG may list several files: as with kubectl,
// the first to set the current context or define a name wins, and
// relative paths are relative to the file that holds them.

type kcCluster struct {
	Server                   string `yaml:"server"`
	CertificateAuthority     string `yaml:"certificate-authority"`
	CertificateAuthorityData string `yaml:"certificate-authority-data"`
	InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
	TLSServerName            string `yaml:"tls-server-name"`
	ProxyURL                 string `yaml:"proxy-url"`
	dir                      string
}

type kcUser struct {
	Token                 string      `yaml:"token"`
	TokenFile             string      `yaml:"tokenFile"`
	ClientCertificate     string      `yaml:"client-certificate"`
	ClientCertificateData string      `yaml:"client-certificate-data"`
	ClientKey             string      `yaml:"client-key"`
	ClientKeyData         string      `yaml:"client-key-data"`
	Username              string      `yaml:"username"`
	Password              string      `yaml:"password"`
	Exec                  *execPlugin `yaml:"exec"`
	AuthProvider          *struct {
		Name string `yaml:"name"`
	} `yaml:"auth-provider"`
	dir string
}

type kcFile struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string    `yaml:"name"`
		Cluster kcCluster `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User kcUser `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// kubeconfig is the merge of the files in load order.
type kubeconfig struct {
	current  string
	clusters map[string]kcCluster
	users    map[string]kcUser
	contexts map[string][2]string // cluster, user
	files    []string
}

// kubeconfigFiles are the files $KUBECONFIG lists, else ~/.kube/config.
func kubeconfigFiles() []string {
	if v := os.Getenv("KUBECONFIG"); v != "" {
		var out []string
		for _, f := range filepath.SplitList(v) {
			if f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	if home, err := os.UserHomeDir(); err == nil {
		return []string{filepath.Join(home, ".kube", "config")}
	}
	return nil
}

func loadKubeconfig(files []string) (*kubeconfig, error) {
	kc := &kubeconfig{clusters: map[string]kcCluster{}, users: map[string]kcUser{}, contexts: map[string][2]string{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var kf kcFile
		if err := yaml.Unmarshal(b, &kf); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %v", f, err)
		}
		kc.files = append(kc.files, f)
		dir := filepath.Dir(f)
		if kc.current == "" {
			kc.current = kf.CurrentContext
		}
		for _, c := range kf.Clusters {
			if _, ok := kc.clusters[c.Name]; !ok {
				c.Cluster.dir = dir
				kc.clusters[c.Name] = c.Cluster
			}
		}
		for _, u := range kf.Users {
			if _, ok := kc.users[u.Name]; !ok {
				u.User.dir = dir
				kc.users[u.Name] = u.User
			}
		}
		for _, c := range kf.Contexts {
			if _, ok := kc.contexts[c.Name]; !ok {
				kc.contexts[c.Name] = [2]string{c.Context.Cluster, c.Context.User}
			}
		}
	}
	return kc, nil
}

// LoadCluster returns the cluster of the current kubeconfig context
// ($KUBECONFIG, ~/.kube/config), else, inside a cluster, the Pod's
// service account.
func LoadCluster() (*Cluster, error) {
	files := kubeconfigFiles()
	kc, err := loadKubeconfig(files)
	if err != nil {
		return nil, err
	}
	if len(kc.files) == 0 {
		if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			return inCluster()
		}
		return nil, fmt.Errorf("no kubeconfig (%s) and not in a cluster", strings.Join(files, ", "))
	}
	return kc.cluster()
}

func (kc *kubeconfig) cluster() (*Cluster, error) {
	where := "kubeconfig " + strings.Join(kc.files, ":")
	if kc.current == "" {
		return nil, fmt.Errorf("%s: no current-context", where)
	}
	ctx, ok := kc.contexts[kc.current]
	if !ok {
		return nil, fmt.Errorf("%s: context %q not found", where, kc.current)
	}
	cl, ok := kc.clusters[ctx[0]]
	if !ok {
		return nil, fmt.Errorf("%s: context %q: cluster %q not found", where, kc.current, ctx[0])
	}
	u, ok := kc.users[ctx[1]]
	if !ok && ctx[1] != "" {
		return nil, fmt.Errorf("%s: context %q: user %q not found", where, kc.current, ctx[1])
	}
	c, err := cl.build(&u)
	if err != nil {
		return nil, fmt.Errorf("%s: context %q: %v", where, kc.current, err)
	}
	return c, nil
}

// fileOrData returns inline base64 data, else the named file's contents.
func fileOrData(what, data, file, dir string) ([]byte, error) {
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%s-data: %v", what, err)
		}
		return b, nil
	}
	if file == "" {
		return nil, nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	return os.ReadFile(file)
}

func (cl *kcCluster) build(u *kcUser) (*Cluster, error) {
	if cl.Server == "" {
		return nil, errors.New("cluster has no server")
	}
	c := &Cluster{Server: cl.Server, Proxy: http.ProxyFromEnvironment,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cl.TLSServerName, InsecureSkipVerify: cl.InsecureSkipTLSVerify}}
	if cl.ProxyURL != "" {
		pu, err := url.Parse(cl.ProxyURL)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("proxy-url %q: not a URL", cl.ProxyURL)
		}
		c.Proxy = http.ProxyURL(pu)
	}
	ca, err := fileOrData("certificate-authority", cl.CertificateAuthorityData, cl.CertificateAuthority, cl.dir)
	if err != nil {
		return nil, err
	}
	if ca != nil {
		if cl.InsecureSkipTLSVerify {
			return nil, errors.New("certificate-authority and insecure-skip-tls-verify together")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("certificate-authority: no PEM certificate")
		}
		c.TLS.RootCAs = pool
	}
	return c, u.apply(c, cl)
}

// apply sets c's credentials from the user entry.
func (u *kcUser) apply(c *Cluster, cl *kcCluster) error {
	if u.AuthProvider != nil {
		return fmt.Errorf("auth-provider %q is not supported: use an exec credential plugin", u.AuthProvider.Name)
	}
	cert, err := fileOrData("client-certificate", u.ClientCertificateData, u.ClientCertificate, u.dir)
	if err != nil {
		return err
	}
	key, err := fileOrData("client-key", u.ClientKeyData, u.ClientKey, u.dir)
	if err != nil {
		return err
	}
	if cert != nil || key != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("client certificate: %v", err)
		}
		c.TLS.Certificates = []tls.Certificate{pair}
	}
	switch {
	case u.Token != "":
		c.Auth = bearer(func() (string, error) { return u.Token, nil })
	case u.TokenFile != "":
		f := u.TokenFile
		if !filepath.IsAbs(f) {
			f = filepath.Join(u.dir, f)
		}
		c.Auth = bearer(tokenFile(f))
	case u.Username != "" || u.Password != "":
		c.Auth = func(r *http.Request) error { r.SetBasicAuth(u.Username, u.Password); return nil }
	case u.Exec != nil:
		return u.Exec.install(c, cl, u.dir)
	}
	return nil
}

func bearer(token func() (string, error)) func(*http.Request) error {
	return func(r *http.Request) error {
		t, err := token()
		if err != nil {
			return err
		}
		r.Header.Set("Authorization", "Bearer "+t)
		return nil
	}
}

// tokenFile reads the token at each request: service account tokens are
// rotated in place.
func tokenFile(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("kubernetes token: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
}

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func inCluster() (*Cluster, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if port == "" {
		port = "443"
	}
	ca, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("in-cluster service account: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("in-cluster service account: %s: no PEM certificate", filepath.Join(saDir, "ca.crt"))
	}
	tok := tokenFile(filepath.Join(saDir, "token"))
	if _, err := tok(); err != nil {
		return nil, fmt.Errorf("in-cluster service account: %v", err)
	}
	return &Cluster{
		Server: "https://" + net.JoinHostPort(host, port),
		TLS:    &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool},
		Proxy:  http.ProxyFromEnvironment,
		Auth:   bearer(tok),
	}, nil
}
