// Package k8stest is a fake Kubernetes API server for tests of the
// kubernetes sandbox backend without a cluster: the Pod and NetworkPolicy
// REST calls the backend makes (create, get, list by label, delete) and the
// pods/exec subresource over WebSocket (v5.channel.k8s.io, the protocol
// client-go's remotecommand speaks). Each Pod is backed by a session of
// another sandbox backend (the local one in fullsend's tests), so a command
// exec'd in the fake Pod really runs, with its stdin, stdout, stderr and
// exit status carried over the exec protocol. It listens on loopback only.
// Over HTTPS (NewTLS), once Kubeconfig has written a kubeconfig, every
// request must carry its bearer token.
package k8stest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Server is the fake API server.
type Server struct {
	*httptest.Server
	inner sandbox.Backend

	mu       sync.Mutex
	pods     map[string]*corev1.Pod // ns/name
	nps      map[string]*networkingv1.NetworkPolicy
	sessions map[string]sandbox.Session
	execs    [][]string
	token    string
}

// ExecLog returns the command of every exec so far, in order.
func (s *Server) ExecLog() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.execs...)
}

// New starts a server (plain HTTP) whose Pods run as sessions of inner.
func New(inner sandbox.Backend) *Server {
	s := newServer(inner)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLS is New over HTTPS with a certificate of its own (Kubeconfig
// writes it as the cluster's CA).
func NewTLS(inner sandbox.Backend) *Server {
	s := newServer(inner)
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s
}

func newServer(inner sandbox.Backend) *Server {
	return &Server{inner: inner, pods: map[string]*corev1.Pod{}, nps: map[string]*networkingv1.NetworkPolicy{}, sessions: map[string]sandbox.Session{}}
}

// Token is the bearer token requests must carry ("" until Kubeconfig).
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// Close stops the server and terminates every Pod's session.
func (s *Server) Close() {
	s.Server.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ss := range s.sessions {
		ss.Terminate(context.Background())
		delete(s.sessions, k)
	}
}

// Kubeconfig writes a kubeconfig for the server into dir and returns its
// path: a new bearer token, which the server requires from then on, and,
// over HTTPS, the server's certificate as the CA.
func (s *Server) Kubeconfig(dir string) (string, error) {
	var b [16]byte
	rand.Read(b[:])
	s.mu.Lock()
	s.token = hex.EncodeToString(b[:])
	tok := s.token
	s.mu.Unlock()
	ca := ""
	if c := s.Certificate(); c != nil {
		ca = ", certificate-authority-data: " + base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	}
	p := filepath.Join(dir, "kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q%s}}]
users: [{name: fake, user: {token: %q}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`, s.URL, ca, tok)
	return p, os.WriteFile(p, []byte(body), 0o600)
}

// Objects returns the names ("pod/NS/NAME", "networkpolicy/NS/NAME") stored.
func (s *Server) Objects() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.pods {
		out = append(out, "pod/"+k)
	}
	for k := range s.nps {
		out = append(out, "networkpolicy/"+k)
	}
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	writeJSON(w, code, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Over plain HTTP no client sends a token (kubectl and the backend
	// keep credentials off the clear).
	if tok := s.Token(); s.TLS != nil && tok != "" && r.Header.Get("Authorization") != "Bearer "+tok {
		status(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
		return
	}
	if s.discovery(w, r) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// api/v1/namespaces/NS/pods[/NAME[/exec]]
	// apis/networking.k8s.io/v1/namespaces/NS/networkpolicies[/NAME]
	switch {
	case len(parts) >= 5 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "namespaces" && parts[4] == "pods":
		ns := parts[3]
		if len(parts) == 7 && parts[6] == "exec" {
			s.exec(w, r, ns, parts[5])
			return
		}
		name := ""
		if len(parts) == 6 {
			name = parts[5]
		}
		s.pod(w, r, ns, name)
	case len(parts) >= 6 && parts[0] == "apis" && parts[1] == "networking.k8s.io" && parts[3] == "namespaces" && parts[5] == "networkpolicies":
		name := ""
		if len(parts) == 7 {
			name = parts[6]
		}
		s.np(w, r, parts[4], name)
	default:
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the fake API server has no "+r.URL.Path)
	}
}

// decodeBody reads the request's JSON object into v; a body that is not
// one is answered 400 (and false returned).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return false
	}
	return true
}

// listReply answers a list request with the list that wrap makes of the
// matching objects of m in ns (an unparsable selector is a 400).
func listReply[T any, PT interface {
	*T
	GetLabels() map[string]string
}](s *Server, w http.ResponseWriter, r *http.Request, m map[string]PT, ns string, wrap func([]T) any) {
	items, err := listed(s, r, m, ns)
	if err != nil {
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, wrap(items))
}

// getReply answers a get of m[key]; notFound is the 404 message.
func getReply[PT any](s *Server, w http.ResponseWriter, m map[string]PT, key, notFound string) {
	s.mu.Lock()
	p, ok := m[key]
	s.mu.Unlock()
	if !ok {
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, notFound)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// listed returns the objects of m in namespace ns whose labels match the
// request's labelSelector (an unparsable selector is the error).
func listed[T any, PT interface {
	*T
	GetLabels() map[string]string
}](s *Server, r *http.Request, m map[string]PT, ns string) ([]T, error) {
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for k, o := range m {
		if strings.HasPrefix(k, ns+"/") && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, *o)
		}
	}
	return out, nil
}

func (s *Server) pod(w http.ResponseWriter, r *http.Request, ns, name string) {
	key := ns + "/" + name
	switch {
	case r.Method == http.MethodPost && name == "":
		var p corev1.Pod
		if !decodeBody(w, r, &p) {
			return
		}
		p.Namespace = ns
		key = ns + "/" + p.Name
		s.mu.Lock()
		if _, ok := s.pods[key]; ok {
			s.mu.Unlock()
			status(w, http.StatusConflict, metav1.StatusReasonAlreadyExists, "pods "+p.Name+" already exists")
			return
		}
		s.mu.Unlock()
		// The Pod's container environment becomes the session's.
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		ss, err := s.inner.Provision(r.Context(), sandbox.Spec{Env: env})
		if err != nil {
			status(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "backing sandbox: "+err.Error())
			return
		}
		p.UID = types.UID("uid-" + p.Name)
		p.CreationTimestamp = metav1.NewTime(time.Now())
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Ready: true}}}
		s.mu.Lock()
		s.pods[key], s.sessions[key] = &p, ss
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, &p)
	case r.Method == http.MethodGet && name == "":
		listReply(s, w, r, s.pods, ns, func(items []corev1.Pod) any {
			return &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: items}
		})
	case r.Method == http.MethodGet:
		getReply(s, w, s.pods, key, `pods "`+name+`" not found`)
	case r.Method == http.MethodDelete && name != "":
		s.mu.Lock()
		p, ok := s.pods[key]
		ss := s.sessions[key]
		delete(s.pods, key)
		delete(s.sessions, key)
		s.mu.Unlock()
		if !ok {
			status(w, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "`+name+`" not found`)
			return
		}
		if ss != nil {
			ss.Terminate(context.Background())
		}
		writeJSON(w, http.StatusOK, p)
	default:
		status(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, r.Method)
	}
}

func (s *Server) np(w http.ResponseWriter, r *http.Request, ns, name string) {
	key := ns + "/" + name
	switch {
	case r.Method == http.MethodPost && name == "":
		var p networkingv1.NetworkPolicy
		if !decodeBody(w, r, &p) {
			return
		}
		p.Namespace = ns
		s.mu.Lock()
		s.nps[ns+"/"+p.Name] = &p
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, &p)
	case r.Method == http.MethodGet && name == "":
		listReply(s, w, r, s.nps, ns, func(items []networkingv1.NetworkPolicy) any {
			return &networkingv1.NetworkPolicyList{
				TypeMeta: metav1.TypeMeta{Kind: "NetworkPolicyList", APIVersion: "networking.k8s.io/v1"}, Items: items}
		})
	case r.Method == http.MethodGet:
		getReply(s, w, s.nps, key, `networkpolicies.networking.k8s.io "`+name+`" not found`)
	case r.Method == http.MethodDelete && name != "":
		s.mu.Lock()
		p, ok := s.nps[key]
		delete(s.nps, key)
		s.mu.Unlock()
		if !ok {
			status(w, http.StatusNotFound, metav1.StatusReasonNotFound, `networkpolicies "`+name+`" not found`)
			return
		}
		writeJSON(w, http.StatusOK, p)
	default:
		status(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, r.Method)
	}
}

// Channels of the v5.channel.k8s.io protocol.
const (
	chStdin  = 0
	chStdout = 1
	chStderr = 2
	chError  = 3
	chClose  = 255
)

var upgrader = websocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}, CheckOrigin: func(*http.Request) bool { return true }}

type wsWriter struct {
	mu *sync.Mutex
	c  *websocket.Conn
	ch byte
}

func (w wsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.c.WriteMessage(websocket.BinaryMessage, append([]byte{w.ch}, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request, ns, name string) {
	s.mu.Lock()
	ss := s.sessions[ns+"/"+name]
	s.mu.Unlock()
	if ss == nil {
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound, `pods "`+name+`" not found`)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		// What an API server answers a client it cannot upgrade: the SPDY
		// fallback is not spoken here.
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the fake API server speaks v5.channel.k8s.io over WebSocket only")
		return
	}
	q := r.URL.Query()
	cmd := q["command"]
	if q.Get("container") == "" || len(cmd) == 0 {
		status(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "exec: container and command are required")
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	if c.Subprotocol() != "v5.channel.k8s.io" {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseProtocolError, "v5.channel.k8s.io required"), time.Now().Add(time.Second))
		return
	}
	s.mu.Lock()
	s.execs = append(s.execs, cmd)
	s.mu.Unlock()
	// As with a kubelet, a client that goes away does not stop the
	// command: it runs until it exits or the Pod is deleted.
	ctx := context.Background()
	var inR *io.PipeReader
	var inW *io.PipeWriter
	if q.Get("stdin") == "true" {
		inR, inW = io.Pipe()
	}
	// Read loop: stdin data and its CLOSE signal.
	go func() {
		for {
			_, m, err := c.ReadMessage()
			if err != nil {
				if inW != nil {
					inW.CloseWithError(err)
				}
				return
			}
			if len(m) == 0 {
				continue
			}
			switch {
			case m[0] == chStdin && inW != nil:
				if _, err := inW.Write(m[1:]); err != nil {
					return
				}
			case m[0] == chClose && len(m) == 2 && m[1] == chStdin && inW != nil:
				inW.Close()
			}
		}
	}()
	var wmu sync.Mutex
	req := sandbox.ExecRequest{Args: cmd, Stdout: wsWriter{&wmu, c, chStdout}, Stderr: wsWriter{&wmu, c, chStderr}}
	if inR != nil {
		req.StdinReader = inR
	}
	res, err := ss.Exec(ctx, req)
	if inR != nil {
		inR.Close()
	}
	st := metav1.Status{Status: metav1.StatusSuccess}
	switch {
	case err != nil:
		st = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError, Message: err.Error()}
	case res.ExitCode != 0:
		st = metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode", Message: "command terminated with non-zero exit code",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(res.ExitCode)}}}}
	}
	b, _ := json.Marshal(&st)
	wsWriter{&wmu, c, chError}.Write(b)
	wmu.Lock()
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	wmu.Unlock()
}
