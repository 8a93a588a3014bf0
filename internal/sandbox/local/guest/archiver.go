//go:build linux

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
)

// archiver is the supervisor's side of the session's archive helper: one
// process, hardened like an agent command (Landlock with the session's
// rules, the ProfileAgent seccomp filter, no capabilities, uid 1000), that
// the first upload or download starts and every later one reuses. Each
// request travels to it over a SOCK_SEQPACKET socket with its pipe
// attached, and it answers with the request's id, so uploads and downloads
// may overlap. A run moves its whole layout in through it: one fullsend
// start for every transfer of the session instead of one per transfer.
//
// The helper runs in the supervisor's pid namespace, which no agent command
// can see (each exec has its own below it), in the sandbox's own cgroups,
// outside "agent". It exits when the supervisor's socket closes, and the
// supervisor's death kills it (parent-death signal). If it dies, every
// request it held fails with its last words, and the next request starts
// a new one.
type archiver struct {
	mu  sync.Mutex
	cur *archHelper // nil until the first request, and again once it died
	seq uint64
}

// archHelper is one archive helper process and its unanswered requests.
type archHelper struct {
	c       *conn
	pending map[uint64]chan Message
}

// archive serves one upload ("untar") or download ("tar") request of the
// host through the session's archive helper.
func (s *supervisor) archive(m Message, files []*os.File) {
	defer CloseAll(files)
	out := Message{Op: "exit", ID: m.ID}
	if len(files) != 1 {
		out.Exit, out.Err = -1, "bad archive request"
		s.reply(out)
		return
	}
	r := s.arch.do(s.cfg, m.Op, m.Path, files[0])
	out.Exit, out.Err = r.Exit, r.Err
	s.reply(out)
}

// do sends one request with its pipe f to the helper (started first when
// there is none) and waits for the answer. Our copy of f is closed once
// sent: the host sees the end of a download's stream only when the
// helper's copy is the last one.
func (a *archiver) do(cfg SuperConfig, op, path string, f *os.File) Message {
	ch := make(chan Message, 1)
	a.mu.Lock()
	h := a.cur
	if h == nil {
		var err error
		if h, err = a.start(cfg); err != nil {
			a.mu.Unlock()
			f.Close()
			return Message{Exit: -1, Err: "archive helper: " + err.Error()}
		}
		a.cur = h
	}
	a.seq++
	id := a.seq
	h.pending[id] = ch
	err := h.c.send(Message{Op: op, ID: id, Path: path}, f)
	if err != nil {
		delete(h.pending, id)
		a.cur = nil // gone: the next request starts another
	}
	a.mu.Unlock()
	f.Close()
	if err != nil {
		return Message{Exit: -1, Err: "archive helper: " + err.Error()}
	}
	return <-ch
}

// start starts a helper with one end of a new socket pair as its fd 3 and
// a goroutine that hands its answers to the waiting requests. Called with
// a.mu held.
func (a *archiver) start(cfg SuperConfig) (*archHelper, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "archive-socket")
	errR, errW, err := os.Pipe()
	if err != nil {
		unix.Close(fds[0])
		theirs.Close()
		return nil, err
	}
	sc, _ := json.Marshal(cfg)
	p, err := os.StartProcess(selfExe, []string{"fullsend-sandbox-archive", "serve"}, &os.ProcAttr{
		Dir:   "/",
		Env:   append([]string{EnvRole + "=archive", envSuper + "=" + string(sc)}, RaceEnv()...),
		Files: []*os.File{nil, nil, errW, theirs},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	errW.Close()
	theirs.Close()
	if err != nil {
		unix.Close(fds[0])
		errR.Close()
		return nil, err
	}
	h := &archHelper{c: &conn{fd: fds[0]}, pending: map[uint64]chan Message{}}
	go a.serve(h, p, errR)
	return h, nil
}

// serve hands the helper's answers to their requests until its socket
// closes, then reaps it and fails what it still held.
func (a *archiver) serve(h *archHelper, p *os.Process, errR *os.File) {
	words := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(errR, 4096))
		io.Copy(io.Discard, errR)
		errR.Close()
		words <- strings.TrimSpace(string(b))
	}()
	for {
		m, files, err := h.c.recv()
		CloseAll(files)
		if err != nil {
			break
		}
		a.mu.Lock()
		ch := h.pending[m.ID]
		delete(h.pending, m.ID)
		a.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	a.mu.Lock()
	if a.cur == h {
		a.cur = nil // the next request starts a new helper
	}
	a.mu.Unlock()
	// The helper is gone or going: no request can reach it any more.
	p.Kill()
	st, _ := p.Wait()
	reason := <-words
	if reason == "" && st != nil {
		reason = "exited: " + st.String()
	}
	a.mu.Lock()
	pending := h.pending
	h.pending = map[uint64]chan Message{}
	a.mu.Unlock()
	for _, ch := range pending {
		ch <- Message{Exit: -1, Err: "archive helper died: " + reason}
	}
	unix.Close(h.c.fd)
}

// runArchive is the archive role: harden like an agent command, then
// serve the supervisor's requests on fd 3, each in its own goroutine:
// "untar" extracts the tar stream read from the attached pipe at Path,
// "tar" writes Path as a tar stream into it. It exits when the
// supervisor's socket closes.
func runArchive() error {
	var cfg SuperConfig
	if err := json.Unmarshal([]byte(os.Getenv(envSuper)), &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	os.Unsetenv(envSuper)
	if len(os.Args) != 2 || os.Args[1] != "serve" {
		return errors.New("bad archive request")
	}
	if err := hardenAgent(cfg); err != nil {
		return err
	}
	c := &conn{fd: fdCtl}
	for {
		m, files, err := c.recv()
		if err != nil {
			unix.Exit(0) // the supervisor is gone (not os.Exit: see runPid1)
		}
		go func() {
			out := Message{Op: "exit", ID: m.ID}
			if err := archiveOp(m.Op, m.Path, files); err != nil {
				out.Exit, out.Err = 1, err.Error()
			}
			CloseAll(files)
			c.send(out)
		}()
	}
}

// archiveOp runs one request of the archive helper on its attached pipe.
func archiveOp(op, path string, files []*os.File) error {
	if len(files) != 1 {
		return errors.New("bad archive request")
	}
	switch op {
	case "untar":
		return archive.Extract(files[0], path, -1, -1)
	case "tar":
		return archive.Write(files[0], path)
	}
	return fmt.Errorf("unknown archive op %q", op)
}
