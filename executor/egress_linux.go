package executor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/clawsec/claw/executor/internal/egress"
	"golang.org/x/sys/unix"
)

// EgressPort is the port of the egress proxy inside an action's network
// namespace (127.0.0.1:EgressPort); it is the only port the command may
// connect to.
const EgressPort = 3128

// egressResolver resolves names for the proxy; nil is the system's
// resolver. Tests point test names at 127.0.0.1.
var egressResolver egress.Resolver

// egressRun is the proxy of one action: the socket on which the child
// hands over its listener, and the proxy that serves it.
type egressRun struct {
	proxy *egress.Proxy
	conn  *net.UnixConn // claw's end
	child *os.File      // the child's end, at child.EgressFD; closed once it started
	done  chan struct{}

	once   sync.Once
	report *EgressReport
}

func newEgressRun(e *Egress) (*egressRun, error) {
	allow, err := egress.ParseCIDRs(e.AllowPrivate)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	proxy, err := egress.New(egress.Config{Hosts: e.Hosts, AllowPrivate: allow, Resolver: egressResolver,
		MaxBytes: e.MaxBytes, IdleTimeout: e.IdleTimeout, MaxConns: e.MaxConns})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("egress socket pair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "egress")
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, fmt.Errorf("egress socket: %w", err)
	}
	r := &egressRun{proxy: proxy, conn: c.(*net.UnixConn), child: os.NewFile(uintptr(fds[1]), "egress-child"), done: make(chan struct{})}
	go r.serve()
	return r, nil
}

// serve waits for the child's listener and serves the proxy on it until
// close.
func (r *egressRun) serve() {
	defer close(r.done)
	l, err := r.receive()
	if err != nil {
		return // the child failed before it listened; it reports why
	}
	r.proxy.Serve(l)
}

// receive reads the one listener the child sends.
func (r *egressRun) receive() (net.Listener, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := r.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("the sandbox sent no listener")
	}
	f := os.NewFile(uintptr(fds[0]), "egress-listener")
	defer f.Close()
	return net.FileListener(f)
}

// close ends the proxy and every tunnel and returns what went through
// it; it may be called again.
func (r *egressRun) close() *EgressReport {
	r.once.Do(func() {
		r.child.Close()
		r.conn.Close()
		rep := r.proxy.Close()
		<-r.done
		r.report = &rep
	})
	return r.report
}

// egressEnv points every client the sandbox may run at the proxy: the
// upper- and lower-case spellings (curl and wget read only some of them),
// npm's and pip's own, and an empty NO_PROXY so that no destination
// skips it (one that did would only fail).
func egressEnv(env []string) []string {
	url := "http://127.0.0.1:" + strconv.Itoa(EgressPort)
	set := map[string]string{
		"HTTP_PROXY": url, "HTTPS_PROXY": url, "ALL_PROXY": url, "NO_PROXY": "",
		"http_proxy": url, "https_proxy": url, "all_proxy": url, "no_proxy": "",
		"npm_config_proxy": url, "npm_config_https_proxy": url, "PIP_PROXY": url,
		"GIT_TERMINAL_PROMPT": "0",
	}
	out := make([]string, 0, len(env)+len(set))
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if _, ours := set[name]; !ours {
			out = append(out, e)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}
